// The floor under train_bench's parameter-server figures: what the classic
// model's asynchronous training on 1 ps + N workers can reach on this
// machine with no framework at all.
//
// Each worker is the step hand-written in Eigen (bench/hand_mlp.h) on a
// thread of this process; the ps is a forked child with nothing but the
// parameters, a poll loop over blocking TCP sockets on loopback and the SGD
// update. A step is the least a parameter server can do: the worker sends
// the gradients it computed and gets back the parameters once they are
// applied, one round trip carrying the 318 KB model each way. There is no
// separate client: the worker drives itself, as torch's trainers do. It is
// pinned as train_bench pins tfd: the ps on B, one worker on A, a second on
// B.
//
//   TFD_ASSIGN_OR_RETURN(RawPsFigures floor, MeasureRawPs(setup));
//   // floor.one_worker / floor.local: the share of one process the floor allows
//
// Thread-safety: the benchmark's main thread, which it pins to A; it starts
// and joins its worker threads and stops the ps child before returning.
#pragma once

#include <vector>

#include "bench/train_runs.h"

namespace tfd::bench {

struct RawPsFigures {
  std::vector<double> local;        // the hand-written step alone on CPU A, steps/s per repetition
  std::vector<double> one_worker;   // ps (B) + worker (A), steps/s per repetition
  std::vector<double> two_workers;  // ps (B) + workers (A, B), aggregate; only with two_workers
};

// setup's steps, warmup, reps, two_workers, cpu_a and cpu_b; the classic
// model's shapes only (the hand-written step has no large model).
StatusOr<RawPsFigures> MeasureRawPs(const TrainSetup& setup);

}  // namespace tfd::bench
