// The torch eager figure for the classic model: ../shared/peers/run.sh mlp
// (784-100-10 sigmoid MLP, batch 100, SGD, one thread, OpenBLAS), run as a
// child that inherits this process's CPU affinity.
//
//   StatusOr<double> rate = TorchEagerStepsPerSecond("/work/shared/peers");
//
// Thread-safety: blocks the caller for the run (about 4 s plus torch's start).
#pragma once

#include <string>

#include "common/status.h"

namespace tfd::bench {

// Steps/s that torch_peers_bench.py reports. NOT_FOUND when run.sh or
// torch is missing (run.sh is then not started, so it installs nothing);
// INTERNAL when the run gives no figure.
StatusOr<double> TorchEagerStepsPerSecond(const std::string& peers_dir);

}  // namespace tfd::bench
