// What the benchmark measures on real tfd daemons: empty runs (the cost of a
// step with nothing to compute) and task-to-task tensor transfers.
//
//   TFD_ASSIGN_OR_RETURN(auto client, cluster.Connect(io, "ps", 0));
//   TFD_ASSIGN_OR_RETURN(auto micros, EmptyRuns(*client, "/job:worker/task:0", 2000));
//   TFD_ASSIGN_OR_RETURN(auto t, Transfers(*master, 64 << 20, "/job:worker/task:1",
//                                          "/job:worker/task:0", 5));
//
// Thread-safety: the thread that owns the client's event loop.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bench/proc_counters.h"
#include "daemon/client/client.h"

namespace tfd::bench {

// `iterations` runs (after a warm-up that registers the partition) of a
// session whose only target is a NoOp placed on `device`; each run's time as
// the client sees it, in µs. With `callable`, each run is a Callable's
// (the signature prepared once) instead of a Session.run.
enum class RunKind { kSessionRun, kCallable };
StatusOr<std::vector<double>> EmptyRuns(Client& client, const std::string& device, int iterations,
                                        const TimedSection& section = {},
                                        RunKind kind = RunKind::kSessionRun);

// One timed transfer of a tensor from producer to consumer.
struct TransferSample {
  // The producer's _Send from the trace: from the moment the tensor exists
  // to the moment the data plane has pushed all of it to the consumer.
  double trace_seconds = 0;
  // The step with the consumer on the other task, and the same step with
  // both on the producer's task: their difference is the transfer plus
  // what a cross-task step costs beyond a local one.
  double remote_step_seconds = 0;
  double local_step_seconds = 0;
};

// A float32 variable of `bytes` on `producer`, filled once, summed on
// `consumer` (only a scalar goes back to the client, whose master is
// expected to be `consumer`'s task). `reps` samples after one warm-up each;
// `section` brackets the timed cross-task runs only (the local ones follow).
// INTERNAL when the two sums disagree (the bytes did not arrive intact).
StatusOr<std::vector<TransferSample>> Transfers(Client& client, size_t bytes,
                                                const std::string& producer,
                                                const std::string& consumer, int reps,
                                                const TimedSection& section = {});

}  // namespace tfd::bench
