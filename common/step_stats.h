// StepStats: what a traced step ran, where and when — for `--trace`,
// `tfctl run`'s per-device view and Chrome trace files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tfd {

struct NodeExecStats {
  std::string node;
  std::string op;
  std::string device;       // canonical device the node ran on
  int64_t start_micros = 0;  // wall clock, microseconds since the Unix epoch
  int64_t end_micros = 0;
  uint64_t thread = 0;       // the id of the thread that ran it (ThisThreadId)
  std::string thread_name;   // its name: "compute 2", "event loop"...
  // What the kernel said about this run, for traces: a transfer's bytes and
  // peer ("pushed 4194304 bytes to /job:ps/replica:0/task:0"); often empty.
  std::string label;
};

struct StepStats {
  std::vector<NodeExecStats> nodes;
};

}  // namespace tfd
