#include "common/tensor.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace tfd {

StatusOr<Tensor> Tensor::Allocate(DType dtype, const TensorShape& shape,
                                  std::shared_ptr<MemoryBudget> budget, Fill fill) {
  if (dtype == DType::kInvalid) return errors::InvalidArgument("cannot allocate a tensor of dtype invalid");
  TFD_ASSIGN_OR_RETURN(auto buffer,
                       Buffer::Allocate(dtype, shape.num_elements(), std::move(budget), fill));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.buffer_ = std::move(buffer);
  return t;
}

StatusOr<Tensor> Tensor::FromBuffer(DType dtype, const TensorShape& shape,
                                    std::shared_ptr<Buffer> buffer) {
  const size_t need = shape.num_elements() * DTypeSize(dtype);
  if (dtype == DType::kString || dtype == DType::kInvalid) {
    return errors::InvalidArgument("cannot view raw bytes as ", DTypeName(dtype));
  }
  if (buffer == nullptr || buffer->size() < need) {
    return errors::InvalidArgument("a ", DTypeName(dtype), shape.ToString(), " tensor needs ",
                                   need, " bytes but the buffer holds ",
                                   buffer ? buffer->size() : 0);
  }
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.buffer_ = std::move(buffer);
  return t;
}

StatusOr<Tensor> Tensor::AllocateOn(DeviceMemory* device, DType dtype, const TensorShape& shape,
                                    std::shared_ptr<MemoryBudget> budget, Fill fill) {
  if (device == nullptr) return Allocate(dtype, shape, std::move(budget), fill);
  if (dtype == DType::kString || dtype == DType::kInvalid) {
    return errors::InvalidArgument("a ", DTypeName(dtype), " tensor cannot live on ",
                                   device->name());
  }
  const int64_t n = shape.num_elements();
  if (static_cast<size_t>(n) > kMaxBufferBytes / DTypeSize(dtype)) {
    return errors::InvalidArgument("a tensor of ", n, " ", DTypeName(dtype),
                                   " elements exceeds the limit of ", kMaxBufferBytes, " bytes");
  }
  TFD_ASSIGN_OR_RETURN(auto buffer, device->Allocate(static_cast<size_t>(n) * DTypeSize(dtype)));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.buffer_ = std::move(buffer);
  return t;
}

StatusOr<Tensor> Tensor::ToHost() const {
  DeviceMemory* d = device();
  if (d == nullptr) return *this;
  TFD_ASSIGN_OR_RETURN(Tensor t, Allocate(dtype_, shape_));
  if (total_bytes() > 0) TFD_RETURN_IF_ERROR(d->CopyToHost(t.raw_data(), raw_data(), total_bytes()));
  return t;
}

Tensor Tensor::MustAllocate(DType dtype, const TensorShape& shape) {
  auto t = Allocate(dtype, shape);
  if (!t.ok()) {
    std::fprintf(stderr, "tfd: %s\n", t.status().ToString().c_str());
    std::abort();
  }
  return std::move(t).value();
}

void* Tensor::raw_data() const {
  if (buffer_ == nullptr) return nullptr;
  return static_cast<char*>(buffer_->data()) + offset_;
}

Tensor Tensor::Slice(int64_t begin, int64_t end) const {
  Tensor t = *this;
  const int64_t row = shape_.dim(0) == 0 ? 0 : num_elements() / shape_.dim(0);
  t.offset_ += static_cast<size_t>(begin * row) * DTypeSize(dtype_);
  t.shape_.set_dim(0, end - begin);
  return t;
}

StatusOr<Tensor> Tensor::Reshaped(const TensorShape& shape) const {
  if (shape.num_elements() != num_elements()) {
    return errors::InvalidArgument("cannot reshape ", Describe(), " (", num_elements(),
                                   " elements) to ", shape.ToString(), " (",
                                   shape.num_elements(), " elements)");
  }
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

StatusOr<Tensor> Tensor::DeepCopy() const {
  if (DeviceMemory* d = device()) {
    TFD_ASSIGN_OR_RETURN(Tensor t, AllocateOn(d, dtype_, shape_));
    if (total_bytes() > 0) TFD_RETURN_IF_ERROR(d->CopyOnDevice(t.raw_data(), raw_data(), total_bytes()));
    return t;
  }
  TFD_ASSIGN_OR_RETURN(Tensor t, Allocate(dtype_, shape_, buffer_ ? buffer_->budget() : nullptr));
  if (dtype_ == DType::kString) {
    for (int64_t i = 0; i < num_elements(); ++i) t.data<std::string>()[i] = data<std::string>()[i];
  } else if (total_bytes() > 0) {
    std::memcpy(t.raw_data(), raw_data(), total_bytes());
  }
  return t;
}

std::string Tensor::Describe() const {
  std::string s = std::string(DTypeName(dtype_)) + shape_.ToString();
  if (DeviceMemory* d = device()) s += " on " + d->name();
  return s;
}

namespace {

template <typename T>
void AppendValue(std::ostringstream& out, const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    out << '"' << v << '"';
  } else if constexpr (std::is_same_v<T, bool>) {
    out << (v ? "true" : "false");
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    out << static_cast<int>(v);
  } else {
    out << v;
  }
}

// Nested brackets per dimension; stops after `limit` values with "...".
template <typename T>
void AppendValues(std::ostringstream& out, const T* data, const TensorShape& shape, int dim,
                  int64_t& index, int64_t limit) {
  if (dim == shape.rank()) {
    AppendValue(out, data[index++]);
    return;
  }
  out << '[';
  for (int64_t i = 0; i < shape.dim(dim); ++i) {
    if (index >= limit) {
      out << "...";
      break;
    }
    if (i) out << ' ';
    AppendValues(out, data, shape, dim + 1, index, limit);
  }
  out << ']';
}

}  // namespace

std::string Tensor::DebugString(int64_t summarize) const {
  if (!initialized()) return "<uninitialized>";
  if (on_device()) {
    auto host = ToHost();
    return host.ok() ? host->DebugString(summarize) : "<" + host.status().ToString() + ">";
  }
  std::ostringstream out;
  int64_t index = 0;
  const int64_t limit = summarize < 0 ? num_elements() : summarize;
  TFD_SWITCH_ALL(dtype_, T, AppendValues(out, data<T>(), shape_, 0, index, limit), return "<invalid>");
  return out.str();
}

bool TensorsEqual(const Tensor& a_in, const Tensor& b_in) {
  if (a_in.dtype() != b_in.dtype() || !(a_in.shape() == b_in.shape())) return false;
  auto a_host = a_in.ToHost();
  auto b_host = b_in.ToHost();
  if (!a_host.ok() || !b_host.ok()) return false;
  const Tensor& a = *a_host;
  const Tensor& b = *b_host;
  bool equal = true;
  TFD_SWITCH_ALL(a.dtype(), T, {
    for (int64_t i = 0; i < a.num_elements() && equal; ++i) {
      equal = a.data<T>()[i] == b.data<T>()[i];
    }
  }, return false);
  return equal;
}

}  // namespace tfd
