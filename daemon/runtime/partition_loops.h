// LoopPlan: what partitioning (partition.h) needs to cut a graph whose
// while loops span tasks, TensorFlow 1.x's way (graph_partition.cc,
// AddControlFlow).
//
// A loop's iterations are driven by its LoopCond. A task that runs part of
// a loop but not its LoopCond has no NextIteration of its own to start the
// loop's iterations there, and a _Recv inside a loop (having no inputs)
// would run once, in the root frame. So each task T that does run part of
// frame F gets a control loop for F:
//
//   start (Const, or the parent frame's control-loop Merge on T)
//     -> Enter(F) -> Merge -> Switch(pred) -> NextIteration -> (Merge)
//
// where pred is F's LoopCond, received from the LoopCond's task in every
// iteration (or read locally on that task). Its Merge runs once per
// iteration of F on T, for as many iterations as the loop runs, and every
// _Recv inside F on T waits on it (a control edge), so it runs once per
// iteration too. The LoopCond's own task gets a control loop only when it
// receives inside F (its _Recvs need the trigger); a task gets one for F
// also when it needs one for a loop nested in F (whose Enter it feeds).
//
// Before cutting, an Enter (not a RefEnter: a reference never crosses) and
// a NextIteration move to the task of their consumers, as TensorFlow's
// OptimizeControlFlowColocation does: an Enter delivers into iteration 0
// only (or, constant, a value that then need cross only once) and a
// NextIteration into the next iteration, neither of which a per-iteration
// _Recv could match. Refused (INVALID_ARGUMENT naming the node): a loop on
// several tasks with no LoopCond, and a non-constant Enter or a
// NextIteration whose consumers are on several tasks.
//
//   TFD_ASSIGN_OR_RETURN(LoopPlan plan, PlanLoops(graph, devices));
//   for (int f = 1; f < plan.num_frames(); ++f)
//     for (const std::string& task : plan.control_loops[f]) ...
//
// Thread-safety: immutable once made.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/graph.h"
#include "daemon/runtime/loop_frames.h"

namespace tfd {

struct LoopPlan {
  std::vector<std::string> devices;  // by node id: where it runs, moves applied
  std::vector<std::string> task;     // by node id: the task of devices[id]
  std::optional<LoopFrames> frames;  // only when the graph has loops
  std::vector<int> loop_cond;        // by frame: its LoopCond's node id; -1 for none
  // By frame: the tasks that get a control loop for it; ordered, so the
  // partitions come out the same every time.
  std::vector<std::set<std::string>> control_loops;

  int num_frames() const { return frames ? static_cast<int>(frames->frames.size()) : 1; }
  // The frame node `id` runs in; a transfer into it runs in that frame too.
  int FrameOf(int id) const { return frames ? frames->frame[id] : 0; }
};

// "/job:J/replica:R/task:T" for a device name ("" parts stay as given when
// it does not parse).
std::string TaskOfDevice(const std::string& device);

// `devices`: by node id, each node's full device.
StatusOr<LoopPlan> PlanLoops(const Graph& graph, std::vector<std::string> devices);

// The name of node `what` ("merge", "switch", ...) of frame `frame`'s
// control loop, the same in every partition.
std::string ControlLoopNode(int frame, const std::string& what);

}  // namespace tfd
