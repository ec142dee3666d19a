#include "kernels/register_all.h"

#include "kernels/array/array_ops.h"
#include "kernels/collective/collective_ops.h"
#include "kernels/control/control_ops.h"
#include "kernels/data/data_ops.h"
#include "kernels/data_flow/data_flow_ops.h"
#include "kernels/framework/framework_ops.h"
#include "kernels/gpu/register_gpu.h"
#include "kernels/io/io_ops.h"
#include "kernels/math/math_ops.h"
#include "kernels/nn/nn_ops.h"
#include "kernels/random/random_ops.h"
#include "kernels/state/state_ops.h"
#include "kernels/summary/summary_ops.h"

namespace tfd::kernels {

Status RegisterAll(OpRegistry& registry) {
  TFD_RETURN_IF_ERROR(RegisterFrameworkOps(registry));
  TFD_RETURN_IF_ERROR(RegisterArrayOps(registry));
  TFD_RETURN_IF_ERROR(RegisterMathOps(registry));
  TFD_RETURN_IF_ERROR(RegisterNnOps(registry));
  TFD_RETURN_IF_ERROR(RegisterRandomOps(registry));
  TFD_RETURN_IF_ERROR(RegisterStateOps(registry));
  TFD_RETURN_IF_ERROR(RegisterDataFlowOps(registry));
  TFD_RETURN_IF_ERROR(RegisterControlOps(registry));
  TFD_RETURN_IF_ERROR(RegisterIoOps(registry));
  TFD_RETURN_IF_ERROR(RegisterDataOps(registry));
  TFD_RETURN_IF_ERROR(RegisterCollectiveOps(registry));
  TFD_RETURN_IF_ERROR(RegisterSummaryOps(registry));
  // Last: GPU kernels attach to the ops above (none without CUDA).
  return gpu::RegisterGpuKernels(registry);
}

}  // namespace tfd::kernels
