// The TensorArray resource; see tensor_array.h.
#include "kernels/data_flow/tensor_array.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "kernels/array/array_util.h"

namespace tfd::kernels::data_flow {
namespace {

// a + b, elementwise, into a new tensor: two gradients of one element.
StatusOr<Tensor> Sum(const Tensor& a, const Tensor& b) {
  TFD_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(a.dtype(), a.shape()));
  TFD_SWITCH_FLOAT(
      a.dtype(), T,
      {
        const T* x = a.data<T>();
        const T* y = b.data<T>();
        T* z = out.data<T>();
        for (int64_t i = 0; i < a.num_elements(); ++i) z[i] = x[i] + y[i];
      },
      return errors::InvalidArgument("a gradient tensor array holds float32 or float64, not ",
                                     DTypeName(a.dtype())));
  return out;
}

// The most specific shape both `a` and `b` fit: the dimensions they
// agree on.
PartialShape Common(const PartialShape& a, const PartialShape& b) {
  if (!a.rank_known() || !b.rank_known() || a.rank() != b.rank()) return PartialShape::Unknown();
  std::vector<int64_t> dims(a.dims());
  for (int i = 0; i < a.rank(); ++i) {
    if (dims[i] != b.dim(i)) dims[i] = -1;
  }
  return PartialShape(std::move(dims));
}

}  // namespace

TensorArray::TensorArray(Options options, int64_t size, bool is_gradient)
    : options_(std::move(options)), is_gradient_(is_gradient), size_(size) {}

std::string TensorArray::DebugString() const {
  MutexLock lock(mu_);
  int64_t written = 0;
  for (const auto& [index, e] : elements_) written += e.written ? 1 : 0;
  return std::string(DTypeName(options_.dtype)) + (is_gradient_ ? " gradient" : "") +
         " tensor array of " + std::to_string(size_) + " (" + std::to_string(written) +
         " written)" + (closed_ ? ", closed" : "");
}

std::string TensorArray::Where(const std::string& node) const {
  return "node '" + node + "' on tensor array '" + options_.name + "'";
}

Status TensorArray::CheckOpen(const std::string& node) const {
  if (!closed_) return OkStatus();
  return errors::InvalidArgument(Where(node), ": the array has been closed");
}

Status TensorArray::CheckIndex(int64_t index, const std::string& node) const {
  TFD_RETURN_IF_ERROR(CheckOpen(node));
  if (index >= 0 && index < size_) return OkStatus();
  if (index < 0) return errors::InvalidArgument(Where(node), ": index ", index, " is negative");
  return errors::InvalidArgument(Where(node), ": index ", index, " is past the array's size ",
                                 size_, options_.dynamic_size ? "" : " (not dynamic_size)");
}

Status TensorArray::WriteLocked(int64_t index, const Tensor& value, const std::string& node) {
  TFD_RETURN_IF_ERROR(CheckOpen(node));
  if (value.dtype() != options_.dtype) {
    return errors::InvalidArgument(Where(node), ": writes a ", DTypeName(value.dtype()),
                                   " tensor to an array of ", DTypeName(options_.dtype));
  }
  const PartialShape shape(value.shape());
  if (!options_.element_shape.IsCompatibleWith(shape)) {
    return errors::InvalidArgument(Where(node), ": writes ", value.Describe(), " at index ", index,
                                   ", which does not fit the element shape ",
                                   options_.element_shape.ToString());
  }
  if (options_.identical_element_shapes && any_written_ && !(written_shape_ == shape)) {
    return errors::InvalidArgument(Where(node), ": writes ", value.Describe(), " at index ", index,
                                   " to an array whose elements are all ",
                                   written_shape_.ToString());
  }
  // Only a write that can succeed grows a dynamic array.
  if (index >= size_ && options_.dynamic_size) size_ = index + 1;
  TFD_RETURN_IF_ERROR(CheckIndex(index, node));
  Element& e = elements_[index];
  if (e.cleared) {
    return errors::InvalidArgument(Where(node), ": index ", index,
                                   " was read and cleared; it cannot be written again");
  }
  if (e.written && !is_gradient_) {
    return errors::InvalidArgument(Where(node), ": index ", index,
                                   " was written already; an element is written once");
  }
  written_shape_ = any_written_ ? Common(written_shape_, shape) : shape;
  any_written_ = true;
  if (!e.written) {
    e.value = value;
    e.written = true;
    return OkStatus();
  }
  if (!(e.value.shape() == value.shape())) {
    return errors::InvalidArgument(Where(node), ": adds ", value.Describe(), " at index ", index,
                                   " to the gradient ", e.value.Describe(), " already there");
  }
  TFD_ASSIGN_OR_RETURN(e.value, Sum(e.value, value));
  return OkStatus();
}

StatusOr<TensorShape> TensorArray::PeekShape(int64_t index, const std::string& node) const {
  TFD_RETURN_IF_ERROR(CheckIndex(index, node));
  auto it = elements_.find(index);
  if (it != elements_.end() && it->second.cleared) {
    return errors::InvalidArgument(Where(node), ": index ", index,
                                   " was read already and cleared (clear_after_read)");
  }
  if (it != elements_.end() && it->second.written) return it->second.value.shape();
  if (auto shape = options_.element_shape.AsTensorShape()) return *shape;
  return errors::InvalidArgument(Where(node), ": index ", index,
                                 " was never written, and the element shape ",
                                 options_.element_shape.ToString(), " is not known for zeros");
}

StatusOr<Tensor> TensorArray::ReadLocked(int64_t index, const std::string& node) {
  TFD_ASSIGN_OR_RETURN(TensorShape shape, PeekShape(index, node));
  auto it = elements_.find(index);
  if (it == elements_.end() || !it->second.written) {
    // Shared by every such read: a kernel changes a tensor in place only
    // when it holds the one reference to its buffer.
    if (!zeros_.initialized()) {
      TFD_ASSIGN_OR_RETURN(zeros_, Tensor::Allocate(options_.dtype, shape));
    }
    return zeros_;
  }
  Tensor value = it->second.value;
  if (options_.clear_after_read) {
    it->second.value = Tensor();
    it->second.cleared = true;
  }
  return value;
}

StatusOr<Tensor> TensorArray::ReadInto(const std::vector<int64_t>& indices,
                                       const TensorShape& shape, const std::string& node) {
  TFD_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(options_.dtype, shape));
  int64_t at = 0;
  for (int64_t i : indices) {
    TFD_ASSIGN_OR_RETURN(Tensor t, ReadLocked(i, node));
    array::CopyElements(t, 0, out, at, t.num_elements());
    at += t.num_elements();
  }
  return out;
}

Status TensorArray::Write(int64_t index, const Tensor& value, const std::string& node) {
  MutexLock lock(mu_);
  return WriteLocked(index, value, node);
}

StatusOr<Tensor> TensorArray::Read(int64_t index, const std::string& node) {
  MutexLock lock(mu_);
  return ReadLocked(index, node);
}

StatusOr<Tensor> TensorArray::Gather(const std::vector<int64_t>& indices, const std::string& node) {
  MutexLock lock(mu_);
  // Shapes first: nothing is read (and cleared) unless all can be.
  std::optional<TensorShape> shape = options_.element_shape.AsTensorShape();
  for (size_t k = 0; k < indices.size(); ++k) {
    TFD_ASSIGN_OR_RETURN(TensorShape s, PeekShape(indices[k], node));
    if (k > 0 && !(s == *shape)) {
      return errors::InvalidArgument(Where(node), ": gathers shape ", s.ToString(), " at index ",
                                     indices[k], " with ", shape->ToString(), " at index ",
                                     indices[0], "; stacked elements share a shape");
    }
    shape = s;
  }
  if (!shape) {
    return errors::InvalidArgument(Where(node), ": gathers no elements, and the element shape ",
                                   options_.element_shape.ToString(), " is not known");
  }
  shape->InsertDim(0, static_cast<int64_t>(indices.size()));
  return ReadInto(indices, *shape, node);
}

Status TensorArray::Scatter(const std::vector<int64_t>& indices, const Tensor& value,
                            const std::string& node) {
  if (value.rank() < 1 || value.dim(0) != static_cast<int64_t>(indices.size())) {
    return errors::InvalidArgument(Where(node), ": scatters ", value.Describe(), " to ",
                                   indices.size(), " indices; its first dimension must match");
  }
  TensorShape row = value.shape();
  row.RemoveDim(0);
  MutexLock lock(mu_);
  for (size_t i = 0; i < indices.size(); ++i) {
    const auto k = static_cast<int64_t>(i);
    TFD_ASSIGN_OR_RETURN(Tensor piece, value.Slice(k, k + 1).Reshaped(row));
    TFD_RETURN_IF_ERROR(WriteLocked(indices[i], piece, node));
  }
  return OkStatus();
}

StatusOr<std::pair<Tensor, Tensor>> TensorArray::Concat(const std::string& node) {
  MutexLock lock(mu_);
  TFD_RETURN_IF_ERROR(CheckOpen(node));
  std::optional<TensorShape> shape = options_.element_shape.AsTensorShape();
  if (shape && shape->rank() == 0) shape.reset();
  // The lengths first: a hostile size fails here, cleanly, as too large.
  TFD_ASSIGN_OR_RETURN(Tensor lengths, Tensor::Allocate(DType::kInt64, TensorShape{size_}));
  std::vector<int64_t> indices;
  int64_t total = 0;
  for (int64_t i = 0; i < size_; ++i) {
    TFD_ASSIGN_OR_RETURN(TensorShape s, PeekShape(i, node));
    if (s.rank() < 1) {
      return errors::InvalidArgument(Where(node), ": concatenates a scalar at index ", i);
    }
    const int64_t length = s.dim(0);
    s.set_dim(0, 0);
    if (i > 0 && !(s == *shape)) {
      return errors::InvalidArgument(Where(node), ": concatenates shape ", s.ToString(),
                                     " at index ", i, " after ", shape->ToString(),
                                     " at index 0; all but the first dimension must agree");
    }
    shape = s;
    indices.push_back(i);
    lengths.data<int64_t>()[i] = length;
    total += length;
  }
  if (!shape) {
    return errors::InvalidArgument(Where(node),
                                   ": concatenates no elements, and the element "
                                   "shape ",
                                   options_.element_shape.ToString(), " is not known");
  }
  shape->set_dim(0, total);
  TFD_ASSIGN_OR_RETURN(Tensor out, ReadInto(indices, *shape, node));
  return std::make_pair(std::move(out), std::move(lengths));
}

Status TensorArray::Split(const Tensor& value, const std::vector<int64_t>& lengths,
                          const std::string& node) {
  const int64_t total = std::accumulate(lengths.begin(), lengths.end(), int64_t{0});
  const bool negative =
      std::any_of(lengths.begin(), lengths.end(), [](int64_t n) { return n < 0; });
  if (value.rank() < 1 || negative || value.dim(0) != total) {
    return errors::InvalidArgument(Where(node), ": splits ", value.Describe(),
                                   " into pieces whose lengths (non-negative) sum to ", total,
                                   "; they must sum to its first dimension");
  }
  MutexLock lock(mu_);
  const auto n = static_cast<int64_t>(lengths.size());
  if (n != size_ && !options_.dynamic_size) {
    return errors::InvalidArgument(Where(node), ": splits into ", n, " pieces an array of size ",
                                   size_, " (not dynamic_size)");
  }
  int64_t at = 0;
  for (int64_t i = 0; i < n; ++i) {
    TFD_RETURN_IF_ERROR(WriteLocked(i, value.Slice(at, at + lengths[i]), node));
    at += lengths[i];
  }
  return OkStatus();
}

int64_t TensorArray::Size() const {
  MutexLock lock(mu_);
  return size_;
}

void TensorArray::Close() {
  MutexLock lock(mu_);
  closed_ = true;
  elements_.clear();
  zeros_ = Tensor();
}

StatusOr<std::shared_ptr<TensorArray>> TensorArray::Grad(const std::string& source,
                                                         const std::string& node) {
  if (!IsFloating(options_.dtype)) {
    return errors::InvalidArgument(Where(node), ": an array of ", DTypeName(options_.dtype),
                                   " has no gradient");
  }
  MutexLock lock(mu_);
  TFD_RETURN_IF_ERROR(CheckOpen(node));
  auto it = gradients_.find(source);
  if (it != gradients_.end()) return it->second;
  Options grad = options_;
  grad.name = options_.name + "/grad_" + source;
  if (auto merged = grad.element_shape.Merge(written_shape_); merged.ok()) {
    grad.element_shape = *merged;
  }
  auto array = std::make_shared<TensorArray>(grad, size_, true);
  gradients_.emplace(source, array);
  return array;
}

}  // namespace tfd::kernels::data_flow
