// The random family's entry point, and the pieces its kernels share:
// seeding from attrs and reading the "shape" input.
#include "kernels/random/random_ops.h"

#include "kernels/random/random_ops_internal.h"

namespace tfd::kernels {

Status RegisterRandomOps(OpRegistry& registry) {
  TFD_RETURN_IF_ERROR(random::RegisterSampleOps(registry));
  TFD_RETURN_IF_ERROR(random::RegisterShuffleOps(registry));
  return OkStatus();
}

namespace random {
namespace {

int64_t SeedAttr(OpKernelConstruction& c, const char* name) {
  int64_t seed = 0;
  c.SetStatus(c.GetAttr(name, &seed));
  return seed;
}

}  // namespace

RandomOpBase::RandomOpBase(OpKernelConstruction& c)
    : OpKernel(c), stream_(SeedAttr(c, "seed"), SeedAttr(c, "seed2")) {}

StatusOr<TensorShape> ShapeFromTensor(const Tensor& shape) {
  if (shape.rank() != 1 || (shape.dtype() != DType::kInt32 && shape.dtype() != DType::kInt64)) {
    return errors::InvalidArgument("shape must be an int32 or int64 vector, got ",
                                   shape.Describe());
  }
  std::vector<int64_t> dims(shape.num_elements());
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    dims[i] = shape.dtype() == DType::kInt32 ? shape.data<int32_t>()[i] : shape.data<int64_t>()[i];
    if (dims[i] < 0) {
      return errors::InvalidArgument("shape[", i, "] = ", dims[i], " must be non-negative");
    }
  }
  return TensorShape::Make(std::move(dims));
}

Status ShapeFromShapeInput(InferenceContext& c, int input, int output) {
  TFD_RETURN_IF_ERROR(c.WithRank(input, 1));
  if (auto dims = c.InputAsInts(input)) {
    for (size_t i = 0; i < dims->size(); ++i) {
      if ((*dims)[i] < 0) {
        return errors::InvalidArgument("input ", input, " (shape) has shape[", i,
                                       "] = ", (*dims)[i], ", which must be non-negative");
      }
    }
    c.set_output(output, PartialShape(std::move(*dims)));
  } else if (c.input(input).rank_known() && c.input(input).dim(0) >= 0) {
    c.set_output(output, PartialShape::UnknownOfRank(static_cast<int>(c.input(input).dim(0))));
  } else {
    c.set_output(output, PartialShape::Unknown());
  }
  return OkStatus();
}

}  // namespace random
}  // namespace tfd::kernels
