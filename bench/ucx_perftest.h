// UCX's own bandwidth figure for a message size, from Debian's ucx_perftest
// (ucx-utils): the ceiling of what tfd's data plane could reach on the same
// transport, measured in the same run.
//
//   auto gbps = UcxPerftestGbps(16 << 20, "tcp", /*server cpu=*/1, /*client cpu=*/0, 20);
//
// Thread-safety: the benchmark's main thread (it starts child processes).
#pragma once

#include <cstddef>
#include <string>

#include "common/status.h"

namespace tfd::bench {

// Active-message bandwidth (ucp_am_bw) of `bytes`-sized messages between two
// ucx_perftest processes on loopback, in GB/s (1e9 B/s), with UCX_TLS set to
// `tls` on both (empty: UCX's choice). NOT_FOUND when ucx_perftest is not
// installed; UNAVAILABLE when it fails or gives no figure within a minute.
StatusOr<double> UcxPerftestGbps(size_t bytes, const std::string& tls, int server_cpu,
                                 int client_cpu, int iterations);

}  // namespace tfd::bench
