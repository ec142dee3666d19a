// What the daemon, the master's fan-out, the client and tfctl say about
// checkpoints: plain values, the C++ side of rpc.capnp's CheckpointInfo and
// TaskCheckpoints (daemon/rpc/checkpoint_wire.h converts).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tfd {

// One checkpoint file of one task.
struct CheckpointInfo {
  int64_t step = 0;
  std::string path;
  uint64_t bytes = 0;
  int64_t mtime_unix_ms = 0;
  bool verified = false;  // every checksum checked and right (false: not checked, or damaged)
  std::string problem;    // why it does not verify, when checked and damaged
  uint32_t variables = 0; // tensors in it (0 when the index could not be read)
};

// One task's answer to a checkpoint request.
struct TaskCheckpoints {
  std::string task;       // "/job:ps/replica:0/task:0"
  std::string directory;  // its --checkpoint-dir; empty: it has none and was skipped
  // save: the file written; restore: the file restored; list: all, oldest first.
  std::vector<CheckpointInfo> checkpoints;
  // restore of the latest: newer files passed over, each "PATH: why".
  std::vector<std::string> skipped;
  // restore: the variables assigned.
  std::vector<std::string> variables;
  // save, restore: why the task took no part, when it did not answer (or
  // failed) and had nothing to save when this master last heard from it
  // (daemon/distributed/checkpoint_participants.h); empty when it took part.
  std::string left_out;
};

}  // namespace tfd
