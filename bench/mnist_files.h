// Generated IDX files of MNIST's sizes (60,000 training and 10,000 test
// images of 28x28 uint8 with their labels), under the names the
// examples/mnist graph reads, so the training benchmark needs no download:
// the work of a step depends on the sizes, not on the pixels.
//
//   TFD_RETURN_IF_ERROR(WriteMnistSizedFiles("/tmp/x"));
//   // tfd --data-dir /tmp/x ...; KernelEnv::io_dirs = {"/tmp/x"}
//
// Thread-safety: writes files only.
#pragma once

#include <string>

#include "common/status.h"

namespace tfd::bench {

inline constexpr int kMnistTrain = 60000;
inline constexpr int kMnistTest = 10000;

// Writes the four files into `dir` (which must exist), replacing any there.
Status WriteMnistSizedFiles(const std::string& dir);

}  // namespace tfd::bench
