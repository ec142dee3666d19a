// The tables rpc_bench prints: round trips, transfers against raw TCP with
// the targets' verdicts, and where the time went (from /proc).
//
//   PrintReport(setup, figures);
//
// Thread-safety: writes to stdout.
#pragma once

#include "bench/figures.h"

namespace tfd::bench {

// Issue 12's empty-run targets, p50 at most: one hop against the raw one-hop
// round trip, two hops against the raw two-hop relay.
inline constexpr double kOneHopTarget = 1.5;
inline constexpr double kTwoHopTarget = 1.3;
// Over TCP: tfd GB/s / raw TCP GB/s, at least, from 16 MiB and at 1 MiB.
inline constexpr double kTransferTarget = 0.8;
inline constexpr double kSmallTransferTarget = 0.5;
// On one host: tfd GB/s / warm memcpy GB/s, at least, from 16 MiB.
inline constexpr double kSameHostTarget = 0.5;

void PrintReport(const BenchSetup& setup, const Figures& figures);

}  // namespace tfd::bench
