// rpc_bench's figures in the shared JSON schema (bench/figures_json.h):
// table "empty run" (µs, p50; p99 beside it) with rows "one hop" and "two
// hops", and table "transfer" (GB/s) with a row per size; tfd's series
// beside raw TCP, memcpy, ucx_perftest and the peers, as the printed tables
// show them.
//
//   FiguresJson out("rpc_bench", argc, argv);
//   AddRpcFigures(setup, figures, out);
//   TFD_RETURN_IF_ERROR(out.Write(setup.json_path));
//
// Thread-safety: plain functions.
#pragma once

#include "bench/figures.h"
#include "bench/figures_json.h"

namespace tfd::bench {

void AddRpcFigures(const BenchSetup& setup, const Figures& figures, FiguresJson& out);

}  // namespace tfd::bench
