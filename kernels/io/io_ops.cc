// The io family's entry point: checkpoint save and restore. One call per
// source file.
#include "kernels/io/io_ops.h"

#include "kernels/io/io_ops_internal.h"

namespace tfd::kernels {

Status RegisterIoOps(OpRegistry& registry) {
  TFD_RETURN_IF_ERROR(io::RegisterSaveRestoreOps(registry));
  return OkStatus();
}

}  // namespace tfd::kernels
