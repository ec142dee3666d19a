// A traced step's nodes (common/step_stats.h) as the NodeTrace lists of
// schemas/trace.capnp, both ways: what Session.run and the step channel
// answer with.
//
//   TraceToProto(result.stats, results.initTrace(n));
//   TraceFromProto(response.getTrace(), out.stats);  // appends
#pragma once

#include <capnp/list.h>

#include "common/step_stats.h"
#include "schemas/trace.capnp.h"

namespace tfd {

// Writes `stats`' nodes into `out` from index `first` on; `out` must have
// room for them.
void TraceToProto(const StepStats& stats, capnp::List<proto::NodeTrace>::Builder out,
                  unsigned first = 0);
// Appends the nodes of `trace` to `stats`.
void TraceFromProto(capnp::List<proto::NodeTrace>::Reader trace, StepStats& stats);

}  // namespace tfd
