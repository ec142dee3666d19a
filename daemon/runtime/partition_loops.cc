#include "daemon/runtime/partition_loops.h"

#include <algorithm>

#include "common/device_name.h"

namespace tfd {
namespace {

Status NodeError(const Graph::Node& n, const std::string& what) {
  return errors::InvalidArgument("node '", n.name(), "' (", n.op(), ") ", what)
      .WithDetails({.node = n.name(), .op = n.op()});
}

// Moves each Enter and NextIteration whose data consumers sit on another
// task to (the CPU of) that task; see partition_loops.h.
Status MoveLoopEdges(const Graph& graph, const LoopFrames& lf, LoopPlan& plan) {
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Graph::Node& node = graph.node(id);
    const bool next = lf.kind[id] == NodeKind::kNextIteration;
    if (!next && lf.kind[id] != NodeKind::kEnter) continue;
    std::set<std::string> tasks;
    for (const Graph::Edge& c : node.consumers) tasks.insert(plan.task[c.node]);
    if (node.op() == "RefEnter") {
      // Stays with its variable; constant, its consumers elsewhere read the
      // variable in every iteration, else only the first would have a value.
      tasks.erase(plan.task[id]);
      if (lf.constant[id] || tasks.empty()) continue;
      return NodeError(node, "is not is_constant and feeds a node on " + *tasks.begin() +
                                 ": a reference enters a loop on another task only as a "
                                 "constant");
    }
    if (tasks.empty() || (tasks.size() == 1 && *tasks.begin() == plan.task[id])) continue;
    if (tasks.size() > 1 && (next || !lf.constant[id])) {
      return NodeError(node, "feeds nodes on " + std::to_string(tasks.size()) + " tasks (" +
                                 *tasks.begin() + ", " + *std::next(tasks.begin()) +
                                 "): a loop's Enter (unless is_constant) and NextIteration "
                                 "must feed one task");
    }
    if (tasks.count(plan.task[id]) != 0) continue;  // constant, and used at home too
    const std::string to = plan.task[node.consumers.front().node];
    plan.devices[id] = to + "/device:CPU:0";
    plan.task[id] = to;
  }
  return OkStatus();
}

// The tasks that get a control loop for each frame (partition_loops.h).
Status ChooseControlLoops(const Graph& graph, LoopPlan& plan) {
  const LoopFrames& lf = *plan.frames;
  const int num_frames = static_cast<int>(lf.frames.size());
  std::vector<std::set<std::string>> nodes_on(num_frames);
  plan.control_loops.assign(num_frames, {});
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const int f = lf.frame[id];
    if (f == 0) continue;
    nodes_on[f].insert(plan.task[id]);
    std::vector<int> from;
    for (const Graph::Edge& e : graph.node(id).inputs) from.push_back(e.node);
    const auto& controls = graph.node(id).control_inputs;
    from.insert(from.end(), controls.begin(), controls.end());
    for (int src : from) {
      if (plan.task[src] != plan.task[id]) plan.control_loops[f].insert(plan.task[id]);
    }
  }
  for (int f = num_frames - 1; f > 0; --f) {
    const int cond = plan.loop_cond[f];
    for (const std::string& t : nodes_on[f]) {
      if (cond < 0 || t != plan.task[cond]) plan.control_loops[f].insert(t);
    }
    if (plan.control_loops[f].empty()) continue;
    if (cond < 0) {
      const Graph::Node& first = graph.node(lf.frames[f].ids.front());
      return NodeError(first, "is in while loop '" + lf.frames[f].name + "', which runs on " +
                                  *plan.control_loops[f].begin() +
                                  " and another task but has no LoopCond: a loop spans tasks "
                                  "only by its LoopCond's value");
    }
    // Children come after their parents: a frame is made by an Enter in
    // its parent (loop_frames.cc), so this reaches the parent later.
    const int parent = lf.frames[f].parent;
    if (parent != 0) {
      plan.control_loops[parent].insert(plan.control_loops[f].begin(), plan.control_loops[f].end());
    }
  }
  return OkStatus();
}

}  // namespace

std::string TaskOfDevice(const std::string& device) {
  auto d = DeviceName::Parse(device);
  return d.ok() ? d->TaskName() : device;
}

std::string ControlLoopNode(int frame, const std::string& what) {
  return "_control_loop" + std::to_string(frame) + "/" + what;
}

StatusOr<LoopPlan> PlanLoops(const Graph& graph, std::vector<std::string> devices) {
  LoopPlan plan;
  plan.devices = std::move(devices);
  for (const std::string& d : plan.devices) plan.task.push_back(TaskOfDevice(d));
  const bool loops = std::any_of(graph.nodes().begin(), graph.nodes().end(), [](const auto& n) {
    return n.op() == "Enter" || n.op() == "RefEnter";
  });
  const bool one_task = std::all_of(plan.task.begin(), plan.task.end(),
                                    [&](const std::string& t) { return t == plan.task.front(); });
  if (!loops || one_task) return plan;
  TFD_ASSIGN_OR_RETURN(LoopFrames lf, LoopFrames::Build(graph));
  plan.frames = std::move(lf);
  plan.loop_cond.assign(plan.frames->frames.size(), -1);
  for (int id = 0; id < graph.num_nodes(); ++id) {
    int& cond = plan.loop_cond[plan.frames->frame[id]];
    if (graph.node(id).op() == "LoopCond" && cond < 0) cond = id;
  }
  TFD_RETURN_IF_ERROR(MoveLoopEdges(graph, *plan.frames, plan));
  TFD_RETURN_IF_ERROR(ChooseControlLoops(graph, plan));
  return plan;
}

}  // namespace tfd
