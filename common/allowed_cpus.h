// The CPUs this process may run on: those in its affinity mask (taskset,
// numactl, a cgroup's cpuset, a benchmark's pinning). Thread pools are
// sized by their number, as TensorFlow sizes its own, rather than by the
// CPUs the machine has: a process pinned to one CPU gains nothing from a
// second compute thread but the switching between them.
//
//   boost::asio::thread_pool pool(NumAllowedCpus());
//
// Thread-safety: any thread.
#pragma once

#include <vector>

namespace tfd {

// In order; empty when the kernel does not say.
std::vector<int> AllowedCpus();
// How many, at least 1 (the machine's count when the kernel does not say).
int NumAllowedCpus();

}  // namespace tfd
