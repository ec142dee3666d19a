// Where one traced training step's time went, read from its trace: the
// critical path of an asynchronous between-graph step split into phases at
// the moments the trace marks.
//
//   client sends the run ─ dispatch ─> first kernel starts (any task)
//     ─ params in ─> the worker holds the last parameter (_Recv ends)
//     ─ compute ─> the worker has handed over the last gradient (_Send ends)
//     ─ apply ─> the last kernel ends (the ps received and applied)
//     ─ completion ─> the client holds the reply
//
// In one process there are no _Send/_Recv nodes: params in and apply are
// zero and compute is the span from the first kernel to the last.
//
//   const int64_t t0 = WallMicros();
//   auto out = client.Run({}, {"summaries/loss"}, {"train"}, {.trace = true});
//   StepPhases p = PhasesOf(out->stats, t0, WallMicros());
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "common/step_stats.h"

namespace tfd::bench {

// All in milliseconds.
struct StepPhases {
  double total = 0;
  double dispatch = 0, params_in = 0, compute = 0, apply = 0, completion = 0;
  // Kernel time summed over nodes (pool threads may overlap), _Send and
  // _Recv excluded: what the step computes, wherever it waits.
  double worker_kernels = 0, ps_kernels = 0;
  // Cross-task receives (each one recvTensor RPC): tensors and control
  // edges, on the worker and on the ps.
  double worker_recvs = 0, worker_control_recvs = 0, ps_recvs = 0, ps_control_recvs = 0;
};

// The wall clock in µs since the Unix epoch, as traces record it.
int64_t WallMicros();

// Nodes on a device of job "ps" count as the ps, everything else as the
// worker. `client_start` / `client_end` bracket the run on the client.
StepPhases PhasesOf(const StepStats& stats, int64_t client_start, int64_t client_end);

// The median of each field over `samples`.
StepPhases MedianPhases(const std::vector<StepPhases>& samples);

}  // namespace tfd::bench
