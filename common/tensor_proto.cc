#include "common/tensor_proto.h"

#include <cstring>

namespace tfd {
namespace {

static_assert(static_cast<int>(proto::DType::STRING) == static_cast<int>(DType::kString),
              "proto::DType and DType must keep the same numbering");

// Fills `n` elements from a capnp list, repeating its last value.
template <typename T, typename List>
Status FillFromList(const List& list, Tensor& t, DType expect, const char* field) {
  if (t.dtype() != expect) {
    return errors::InvalidArgument("tensor of dtype ", DTypeName(t.dtype()), " given values in ",
                                   field);
  }
  const int64_t n = t.num_elements();
  if (list.size() == 0) return OkStatus();  // zeros
  if (static_cast<int64_t>(list.size()) > n) {
    return errors::InvalidArgument("tensor of shape ", t.shape().ToString(), " given ", list.size(),
                                   " values");
  }
  T* out = t.data<T>();
  for (int64_t i = 0; i < n; ++i) {
    const auto v = list[std::min<int64_t>(i, list.size() - 1)];
    if constexpr (std::is_same_v<T, std::string>) {
      out[i].assign(reinterpret_cast<const char*>(v.begin()), v.size());
    } else {
      out[i] = static_cast<T>(v);
    }
  }
  return OkStatus();
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

StatusOr<Tensor> TensorFromProto(proto::Tensor::Reader p) {
  TFD_ASSIGN_OR_RETURN(DType dtype, DTypeFromProto(p.getDtype()));
  std::vector<int64_t> dims;
  for (int64_t d : p.getShape()) dims.push_back(d);
  TFD_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Make(std::move(dims)));
  TFD_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
  switch (p.which()) {
    case proto::Tensor::CONTENT: {
      auto bytes = p.getContent();
      if (bytes.size() == 0) break;  // zeros
      if (dtype == DType::kString) {
        return errors::InvalidArgument("a string tensor must use stringVal, not content");
      }
      if (bytes.size() != t.total_bytes()) {
        return errors::InvalidArgument("tensor ", t.Describe(), " needs ", t.total_bytes(),
                                       " content bytes, got ", bytes.size());
      }
      std::memcpy(t.raw_data(), bytes.begin(), bytes.size());
      break;
    }
    case proto::Tensor::FLOAT_VAL:
      TFD_RETURN_IF_ERROR(FillFromList<float>(p.getFloatVal(), t, DType::kFloat32, "floatVal"));
      break;
    case proto::Tensor::DOUBLE_VAL:
      TFD_RETURN_IF_ERROR(FillFromList<double>(p.getDoubleVal(), t, DType::kFloat64, "doubleVal"));
      break;
    case proto::Tensor::INT32_VAL:
      TFD_RETURN_IF_ERROR(FillFromList<int32_t>(p.getInt32Val(), t, DType::kInt32, "int32Val"));
      break;
    case proto::Tensor::INT64_VAL:
      TFD_RETURN_IF_ERROR(FillFromList<int64_t>(p.getInt64Val(), t, DType::kInt64, "int64Val"));
      break;
    case proto::Tensor::UINT8_VAL:
      TFD_RETURN_IF_ERROR(FillFromList<uint8_t>(p.getUint8Val(), t, DType::kUInt8, "uint8Val"));
      break;
    case proto::Tensor::BOOL_VAL:
      TFD_RETURN_IF_ERROR(FillFromList<bool>(p.getBoolVal(), t, DType::kBool, "boolVal"));
      break;
    case proto::Tensor::STRING_VAL:
      TFD_RETURN_IF_ERROR(FillFromList<std::string>(p.getStringVal(), t, DType::kString, "stringVal"));
      break;
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
