// A traced step as a Chrome trace file (chrome://tracing, Perfetto's UI):
// one process per device, one track per thread under its name ("compute 2",
// "event loop"), one slice per node, and a flow arrow from each _Send to the
// _Recv it fed on another device, labelled with what the transfer noted.
//
//   TFD_RETURN_IF_ERROR(WriteChromeTrace(out.stats, "step.json"));
#pragma once

#include <string>

#include "cli/output.h"
#include "common/status.h"
#include "common/step_stats.h"

namespace tfd::cli {

// The trace as JSON: {"traceEvents": [...], "displayTimeUnit": "ms"}.
Json ChromeTrace(const StepStats& stats);

// Writes ChromeTrace(stats) to `path`; INVALID_ARGUMENT naming the path when
// it cannot be written whole.
Status WriteChromeTrace(const StepStats& stats, const std::string& path);

}  // namespace tfd::cli
