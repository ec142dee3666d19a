// The io family's entry point: checkpoint save and restore, TF1's readers
// and the decoding of their records, the matching of file patterns. One
// call per source file.
#include "kernels/io/io_ops.h"

#include "kernels/io/io_ops_internal.h"

namespace tfd::kernels {

Status RegisterIoOps(OpRegistry& registry) {
  TFD_RETURN_IF_ERROR(io::RegisterSaveRestoreOps(registry));
  TFD_RETURN_IF_ERROR(io::RegisterReaderOps(registry));
  TFD_RETURN_IF_ERROR(io::RegisterParsingOps(registry));
  TFD_RETURN_IF_ERROR(io::RegisterParseExampleOp(registry));
  TFD_RETURN_IF_ERROR(io::RegisterMatchingFilesOp(registry));
  TFD_RETURN_IF_ERROR(io::RegisterParseFeatureListsOp(registry));
  return OkStatus();
}

}  // namespace tfd::kernels
