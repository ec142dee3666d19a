#include "common/tensor_proto.h"

#include <cstring>
#include <limits>

namespace tfd {
namespace {

static_assert(static_cast<int>(proto::DType::STRING) == static_cast<int>(DType::kString),
              "proto::DType and DType must keep the same numbering");

// Fills the tensor from a capnp list that InspectTensorProto has checked
// (the tensor's dtype, no longer than the tensor), repeating its last value.
template <typename T, typename List>
void FillFromList(const List& list, Tensor& t) {
  const int64_t n = t.num_elements();
  if (list.size() == 0) return;  // zeros
  T* out = t.data<T>();
  for (int64_t i = 0; i < n; ++i) {
    const auto v = list[std::min<int64_t>(i, list.size() - 1)];
    if constexpr (std::is_same_v<T, std::string>) {
      out[i].assign(reinterpret_cast<const char*>(v.begin()), v.size());
    } else {
      out[i] = static_cast<T>(v);
    }
  }
}

// The typed value list a proto uses: its field name, length and dtype.
struct ValueList {
  const char* field = "content";
  size_t size = 0;
  DType dtype = DType::kInvalid;  // kInvalid: raw content
};

ValueList ListOf(proto::Tensor::Reader p) {
  switch (p.which()) {
    case proto::Tensor::CONTENT: return {"content", p.getContent().size(), DType::kInvalid};
    case proto::Tensor::FLOAT_VAL: return {"floatVal", p.getFloatVal().size(), DType::kFloat32};
    case proto::Tensor::DOUBLE_VAL: return {"doubleVal", p.getDoubleVal().size(), DType::kFloat64};
    case proto::Tensor::INT32_VAL: return {"int32Val", p.getInt32Val().size(), DType::kInt32};
    case proto::Tensor::INT64_VAL: return {"int64Val", p.getInt64Val().size(), DType::kInt64};
    case proto::Tensor::UINT8_VAL: return {"uint8Val", p.getUint8Val().size(), DType::kUInt8};
    case proto::Tensor::BOOL_VAL: return {"boolVal", p.getBoolVal().size(), DType::kBool};
    case proto::Tensor::STRING_VAL: return {"stringVal", p.getStringVal().size(), DType::kString};
  }
  return {};
}

// The characters of the strings a stringVal list of `n` elements fills a
// tensor with: the last value repeats to the end. Saturates at UINT64_MAX.
uint64_t StringCharacters(capnp::List<capnp::Data>::Reader values, int64_t n) {
  uint64_t total = 0;
  for (auto v : values) total += v.size();  // at most a message's size: no overflow
  if (values.size() == 0 || static_cast<uint64_t>(n) <= values.size()) return total;
  uint64_t repeated = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(n - values.size()),
                             uint64_t{values[values.size() - 1].size()}, &repeated) ||
      __builtin_add_overflow(total, repeated, &total)) {
    return std::numeric_limits<uint64_t>::max();
  }
  return total;
}

}  // namespace

StatusOr<DType> DTypeFromProto(proto::DType d) {
  const auto i = static_cast<int>(d);
  if (i <= 0 || i >= kNumDTypes) return errors::InvalidArgument("invalid dtype (", i, ")");
  return static_cast<DType>(i);
}

proto::DType DTypeToProto(DType d) { return static_cast<proto::DType>(static_cast<int>(d)); }

PartialShape ShapeFromProto(proto::TensorShape::Reader s) {
  if (s.getUnknownRank()) return PartialShape::Unknown();
  std::vector<int64_t> dims;
  for (int64_t d : s.getDims()) dims.push_back(d < 0 ? -1 : d);
  return PartialShape(std::move(dims));
}

void ShapeToProto(const PartialShape& s, proto::TensorShape::Builder out) {
  out.setUnknownRank(!s.rank_known());
  auto dims = out.initDims(s.rank_known() ? s.rank() : 0);
  for (int i = 0; i < s.rank(); ++i) dims.set(i, s.dim(i));
}

StatusOr<TensorProtoInfo> InspectTensorProto(proto::Tensor::Reader p) {
  TensorProtoInfo info;
  TFD_ASSIGN_OR_RETURN(info.dtype, DTypeFromProto(p.getDtype()));
  std::vector<int64_t> dims;
  for (int64_t d : p.getShape()) dims.push_back(d);
  TFD_ASSIGN_OR_RETURN(info.shape, TensorShape::Make(std::move(dims)));
  info.bytes = TensorBytes(info.dtype, info.shape.num_elements());
  const std::string what = std::string(DTypeName(info.dtype)) + info.shape.ToString();
  const ValueList values = ListOf(p);
  if (values.dtype == DType::kInvalid) {  // raw content; none means zeros
    if (values.size == 0) return info;
    if (info.dtype == DType::kString) {
      return errors::InvalidArgument("a string tensor must use stringVal, not content");
    }
    if (values.size != info.bytes) {
      return errors::InvalidArgument("tensor ", what, " needs ", info.bytes,
                                     " content bytes, got ", values.size);
    }
    return info;
  }
  if (values.dtype != info.dtype) {
    return errors::InvalidArgument("tensor of dtype ", DTypeName(info.dtype), " given values in ",
                                   values.field);
  }
  if (values.size > static_cast<uint64_t>(info.shape.num_elements())) {
    return errors::InvalidArgument("tensor of shape ", info.shape.ToString(), " given ",
                                   values.size, " values");
  }
  if (info.dtype == DType::kString) {
    // One long string repeated to fill a large shape would otherwise pass
    // every limit as a few bytes per element.
    const uint64_t characters = StringCharacters(p.getStringVal(), info.shape.num_elements());
    if (__builtin_add_overflow(info.bytes, characters, &info.bytes)) {
      info.bytes = std::numeric_limits<uint64_t>::max();
    }
  }
  return info;
}

StatusOr<Tensor> TensorFromProto(proto::Tensor::Reader p, uint64_t max_bytes,
                                 std::shared_ptr<MemoryBudget> budget) {
  TFD_ASSIGN_OR_RETURN(TensorProtoInfo info, InspectTensorProto(p));
  if (info.bytes > max_bytes) {
    return errors::InvalidArgument("tensor ", DTypeName(info.dtype), info.shape.ToString(),
                                   " takes ", FormatBytes(info.bytes), ", more than the ",
                                   FormatBytes(max_bytes),
                                   " allowed for one tensor (--max-tensor-bytes)");
  }
  auto allocated = Tensor::Allocate(info.dtype, info.shape, std::move(budget));
  if (!allocated.ok()) {
    return allocated.status().WithContext("tensor " + std::string(DTypeName(info.dtype)) +
                                          info.shape.ToString());
  }
  Tensor t = std::move(allocated).value();
  switch (p.which()) {
    case proto::Tensor::CONTENT: {
      auto bytes = p.getContent();
      if (bytes.size() > 0) std::memcpy(t.raw_data(), bytes.begin(), bytes.size());
      break;
    }
    case proto::Tensor::FLOAT_VAL: FillFromList<float>(p.getFloatVal(), t); break;
    case proto::Tensor::DOUBLE_VAL: FillFromList<double>(p.getDoubleVal(), t); break;
    case proto::Tensor::INT32_VAL: FillFromList<int32_t>(p.getInt32Val(), t); break;
    case proto::Tensor::INT64_VAL: FillFromList<int64_t>(p.getInt64Val(), t); break;
    case proto::Tensor::UINT8_VAL: FillFromList<uint8_t>(p.getUint8Val(), t); break;
    case proto::Tensor::BOOL_VAL: FillFromList<bool>(p.getBoolVal(), t); break;
    case proto::Tensor::STRING_VAL: FillFromList<std::string>(p.getStringVal(), t); break;
  }
  return t;
}

void TensorToProto(const Tensor& t, proto::Tensor::Builder out) {
  out.setDtype(DTypeToProto(t.dtype()));
  auto shape = out.initShape(t.rank());
  for (int i = 0; i < t.rank(); ++i) shape.set(i, t.dim(i));
  if (t.dtype() == DType::kString) {
    auto list = out.initStringVal(t.num_elements());
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      const std::string& s = t.data<std::string>()[i];
      list.set(i, capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(s.data()), s.size()));
    }
    return;
  }
  // TODO(perf): large tensors on the wire should reference the buffer
  // (Orphanage::referenceExternalData) instead of copying; the RPC layer
  // does that, files keep the copy.
  auto content = out.initContent(t.total_bytes());
  if (t.total_bytes() > 0) std::memcpy(content.begin(), t.raw_data(), t.total_bytes());
}

}  // namespace tfd
