// How the benchmarks start their processes (tfd daemons, forked raw-socket
// peers): pinned to one CPU, ended with the benchmark even when it crashes
// (the kernel sends SIGTERM when the starting thread ends), and stopped
// from ~Subprocess with SIGTERM and 10 s before SIGKILL, so that no error
// path leaves anything running.
//
//   auto echo = Subprocess::Fork([fd] { return RunEchoPeer(fd); }, BenchChild(cpu));
//
// Thread-safety: pure. Start children from the benchmark's main thread, the
// one whose end should end them.
#pragma once

#include <chrono>

#include "common/subprocess.h"

namespace tfd::bench {

// `cpu` -1 leaves the child on every CPU the benchmark may use.
inline SubprocessOptions BenchChild(int cpu) {
  SubprocessOptions o;
  o.cpu = cpu;
  o.die_with_parent = true;
  o.stop_grace = std::chrono::seconds(10);
  return o;
}

}  // namespace tfd::bench
