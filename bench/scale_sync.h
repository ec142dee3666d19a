// Sync-replicas update latency for scale_bench: W workers train one model
// with SyncReplicas (api/sync_replicas.h) aggregating every worker's
// gradient, each worker the master of its own session, every step traced.
// The model has the classic MNIST model's parameters (784x100, 100, 100x10,
// 10 floats on ps:0) and a loss that needs no input (the sum of their
// squares), so a step's compute is reading the parameters and pushing a
// gradient of the same size, and the update is a real one.
//
// For each round (global step) the traces give, on one host's clock:
//   - the last gradient's arrival: the latest end of an accumulator push
//     (AccumulatorApplyGradient) of that round, any worker's;
//   - the update applied: the end of the chief's last apply node;
//   - the round advanced: the end of the chief's hand-out (sync/hand_out),
//     which lets the other workers into the next step.
// Reported per W: the update (last gradient to round advanced) p50/p99, the
// apply part p50, and the global steps/s, whose period includes compute.
//
//   TFD_RETURN_IF_ERROR(MeasureSync(tfctl, tfd, {1, 2, 4, 8}, 2.0, json));
//
// Thread-safety: the benchmark's main thread (it starts one thread per
// worker and joins them).
#pragma once

#include <string>
#include <vector>

#include "bench/figures_json.h"
#include "common/status.h"

namespace tfd::bench {

// A cluster of 1 ps and W workers per count in `worker_counts` (started and
// stopped with tfctl, so no round of one count sees another's), each
// training for `seconds` after a warm-up.
Status MeasureSync(const std::string& tfctl, const std::string& tfd,
                   const std::vector<int>& worker_counts, double seconds, FiguresJson& json);

}  // namespace tfd::bench
