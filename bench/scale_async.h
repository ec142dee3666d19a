// Async training at scale for scale_bench: W workers, each the master of
// its own session (between-graph replication), each adding a value it holds
// to one variable on ps:0 in a loop, as an empty model's async steps would.
// For each W: aggregate steps/s, the ps's CPU per worker-step, its share of a
// CPU and the host's busy share, and which limited the rate (the ps when its
// CPU is full, the host when its CPUs are). Then, with
// every worker stepping, worker 1 is stopped (SIGSTOP) for `stop_seconds`
// and continued: the other workers' step latency while it is stopped against
// before, and their step deadline.
//
//   TFD_RETURN_IF_ERROR(MeasureAsync(cluster, {1, 2, 4}, 2.0, 1.0, json));
//
// Thread-safety: the benchmark's main thread (it starts one thread per
// worker and joins them).
#pragma once

#include <vector>

#include "bench/figures_json.h"
#include "bench/scale_cluster.h"
#include "common/status.h"

namespace tfd::bench {

// `cluster` is running with one ps and at least max(worker_counts) workers.
Status MeasureAsync(const ScaleCluster& cluster, const std::vector<int>& worker_counts,
                    double seconds, double stop_seconds, FiguresJson& json);

}  // namespace tfd::bench
