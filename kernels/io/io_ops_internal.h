// The io family's per-file registration functions, called by RegisterIoOps
// (io_ops.cc). Private to kernels/io.
#pragma once

#include "common/op_registry.h"

namespace tfd::kernels::io {

Status RegisterSaveRestoreOps(OpRegistry& r);  // save_restore_ops.cc
Status RegisterReaderOps(OpRegistry& r);       // reader_ops.cc
Status RegisterParsingOps(OpRegistry& r);      // parsing_ops.cc
Status RegisterParseExampleOp(OpRegistry& r);  // parse_example_op.cc
Status RegisterMatchingFilesOp(OpRegistry& r);  // matching_files_op.cc
Status RegisterParseFeatureListsOp(OpRegistry& r);  // parse_sequence_op.cc

}  // namespace tfd::kernels::io
