// Conversion between Tensor and proto::Tensor (schemas/tensor.capnp).
//
// The reader accepts raw `content` bytes or any typed value list (a short
// list is padded with its last value, as in TensorFlow); the writer uses raw
// bytes for numeric dtypes and a list for strings.
//
//   TFD_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(reader));
//   TensorToProto(t, builder);
#pragma once

#include "common/tensor.h"
#include "schemas/tensor.capnp.h"

namespace tfd {

// INVALID_ARGUMENT for an invalid dtype, a bad shape, a value list of another
// dtype, or content of the wrong length. Copies the elements.
StatusOr<Tensor> TensorFromProto(proto::Tensor::Reader t);
void TensorToProto(const Tensor& t, proto::Tensor::Builder out);

StatusOr<DType> DTypeFromProto(proto::DType d);
proto::DType DTypeToProto(DType d);
PartialShape ShapeFromProto(proto::TensorShape::Reader s);
void ShapeToProto(const PartialShape& s, proto::TensorShape::Builder out);

}  // namespace tfd
