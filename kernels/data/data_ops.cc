// The data family's entry point: input pipelines. One call per source file.
#include "kernels/data/data_ops.h"

#include "kernels/data/data_ops_internal.h"

namespace tfd::kernels {

Status RegisterDataOps(OpRegistry& registry) {
  TFD_RETURN_IF_ERROR(data::RegisterIdxOps(registry));
  TFD_RETURN_IF_ERROR(data::RegisterCriteoOps(registry));
  TFD_RETURN_IF_ERROR(data::RegisterCifarOps(registry));
  return OkStatus();
}

}  // namespace tfd::kernels
