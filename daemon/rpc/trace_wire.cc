#include "daemon/rpc/trace_wire.h"

namespace tfd {

void TraceToProto(const StepStats& stats, capnp::List<proto::NodeTrace>::Builder out,
                  unsigned first) {
  for (unsigned i = 0; i < stats.nodes.size(); ++i) {
    const NodeExecStats& n = stats.nodes[i];
    auto t = out[first + i];
    t.setNode(n.node);
    t.setOp(n.op);
    t.setDevice(n.device);
    t.setStartMicros(n.start_micros);
    t.setEndMicros(n.end_micros);
    t.setThread(n.thread);
    t.setThreadName(n.thread_name);
    if (!n.label.empty()) t.setLabel(n.label);
  }
}

void TraceFromProto(capnp::List<proto::NodeTrace>::Reader trace, StepStats& stats) {
  for (auto n : trace) {
    stats.nodes.push_back({n.getNode(), n.getOp(), n.getDevice(), n.getStartMicros(),
                           n.getEndMicros(), n.getThread(), n.getThreadName(), n.getLabel()});
  }
}

}  // namespace tfd
