// The measurements of rpc_bench, each starting and stopping the processes
// it needs (bench/bench_child.h): raw TCP round trips and streams between
// forked peers, and the same shapes of traffic through tfd daemons.
//
//   TFD_ASSIGN_OR_RETURN(figures.raw, MeasureRawRoundTrips(setup));
//   TFD_ASSIGN_OR_RETURN(figures.tfd, MeasureTfd(setup));
//
// Thread-safety: the main thread. The raw measurements fork copies of this
// process, so they must run before anything starts a thread.
#pragma once

#include "bench/figures.h"

namespace tfd::bench {

// One-byte round trips to an echo on B, and via a relay on B to an echo on A.
StatusOr<RawRoundTrips> MeasureRawRoundTrips(const BenchSetup& setup);
// Pulls of each size from a sender on B into a touched buffer on A.
StatusOr<RawStreams> MeasureRawStreams(const BenchSetup& setup);
// A cluster ps:0 (B), worker:0 (A), worker:1 (B): empty runs through ps:0,
// then transfers worker:1 -> worker:0 with worker:0 as the master.
StatusOr<TfdFigures> MeasureTfd(const BenchSetup& setup);

}  // namespace tfd::bench
