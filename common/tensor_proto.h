// Conversion between Tensor and proto::Tensor (schemas/tensor.capnp).
//
// The reader accepts raw `content` bytes or any typed value list (a short
// list is padded with its last value, as in TensorFlow); the writer uses raw
// bytes for numeric dtypes and a list for strings. Because of that padding a
// proto of a few bytes can describe gigabytes, so the reader checks the size
// a proto implies against a limit before it allocates anything.
//
//   TFD_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(reader, limits.max_tensor_bytes));
//   TensorToProto(t, builder);
#pragma once

#include <cstdint>

#include "common/size_limits.h"
#include "common/tensor.h"
#include "schemas/tensor.capnp.h"

namespace tfd {

// What a proto declares, read and checked without touching its elements.
struct TensorProtoInfo {
  DType dtype = DType::kInvalid;
  TensorShape shape;
  // What the decoded elements take in memory; for strings the objects and
  // their characters, repeated ones included.
  uint64_t bytes = 0;
};

// INVALID_ARGUMENT for an invalid dtype or a bad shape (a negative
// dimension, more than kMaxTensorElements elements), and for values that
// cannot fill it: a value list of another dtype or longer than the shape,
// content of the wrong length.
StatusOr<TensorProtoInfo> InspectTensorProto(proto::Tensor::Reader t);

// Everything InspectTensorProto checks, and INVALID_ARGUMENT when the tensor
// would take more than `max_bytes` — all before allocating. Copies the
// elements into a buffer charged to `budget` when one is given (for as long
// as the tensor's buffer lives; RESOURCE_EXHAUSTED, nothing allocated, when
// it does not fit). Of a string tensor the budget counts the string
// objects, not their characters.
StatusOr<Tensor> TensorFromProto(proto::Tensor::Reader t,
                                 uint64_t max_bytes = SizeLimits().max_tensor_bytes,
                                 std::shared_ptr<MemoryBudget> budget = nullptr);
void TensorToProto(const Tensor& t, proto::Tensor::Builder out);

StatusOr<DType> DTypeFromProto(proto::DType d);
proto::DType DTypeToProto(DType d);
PartialShape ShapeFromProto(proto::TensorShape::Reader s);
void ShapeToProto(const PartialShape& s, proto::TensorShape::Builder out);

}  // namespace tfd
