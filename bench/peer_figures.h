// The peers' transfer figures (../shared/peers/run.sh bw gloo: torch rpc's
// tensor push over TensorPipe and gloo's send stream), read from the JSON
// lines that script writes, so rpc_bench can print them beside tfd's.
//
//   TFD_ASSIGN_OR_RETURN(PeerTransfers peers, ReadPeerTransfers("peers-results.jsonl"));
//   double torch = peers.torch_rpc_push_gbps[16];  // 16 MiB, GB/s; absent if not measured
//
// Thread-safety: plain functions and values.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "common/status.h"

namespace tfd::bench {

struct PeerTransfers {
  std::string source;                           // the file read
  std::map<size_t, double> torch_rpc_push_gbps;  // by size in MiB, median GB/s
  std::map<size_t, double> gloo_send_gbps;
};

// The last figure per size of each test in `path`. NOT_FOUND when the file
// cannot be read; lines that are not figures of these tests are skipped.
StatusOr<PeerTransfers> ReadPeerTransfers(const std::string& path);

}  // namespace tfd::bench
