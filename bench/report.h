// The tables rpc_bench prints: round trips, transfers against raw TCP with
// the targets' verdicts, and where the time went (from /proc).
//
//   PrintReport(setup, figures);
//
// Thread-safety: writes to stdout.
#pragma once

#include "bench/figures.h"

namespace tfd::bench {

inline constexpr double kRoundTripTarget = 2.0;  // tfd empty run p50 / raw TCP p50, at most
inline constexpr double kTransferTarget = 0.8;   // tfd GB/s / raw TCP GB/s, at least

void PrintReport(const BenchSetup& setup, const Figures& figures);

}  // namespace tfd::bench
