#include "daemon/runtime/loop_frames.h"

#include <deque>
#include <map>

namespace tfd {
namespace {

std::string Where(const Graph::Node& n) { return "node '" + n.name() + "' (" + n.op() + ")"; }

NodeKind KindOf(const std::string& op) {
  if (op == "Merge") return NodeKind::kMerge;
  if (op == "_Send") return NodeKind::kSend;
  if (op == "_Retval") return NodeKind::kRetval;
  if (op == "Enter" || op == "RefEnter") return NodeKind::kEnter;
  if (op == "Exit") return NodeKind::kExit;
  if (op == "NextIteration") return NodeKind::kNextIteration;
  return NodeKind::kPlain;
}

template <typename T>
T AttrOr(const Graph::Node& n, const std::string& name, T fallback) {
  auto it = n.def.attrs.find(name);
  if (it == n.def.attrs.end()) return fallback;
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  return fallback;
}

// Assigns frames breadth-first from the input-free nodes.
class FrameWalk {
 public:
  FrameWalk(const Graph& g, LoopFrames& lf) : g_(g), lf_(lf) {}

  Status Run() {
    const int n = g_.num_nodes();
    lf_.frame.assign(n, -1);
    lf_.frames.push_back({});
    std::deque<int> queue;
    for (int id = 0; id < n; ++id) {
      if (g_.node(id).inputs.empty() && g_.node(id).control_inputs.empty()) {
        lf_.frame[id] = 0;
        queue.push_back(id);
      }
    }
    while (!queue.empty()) {
      const int id = queue.front();
      queue.pop_front();
      TFD_ASSIGN_OR_RETURN(const int out, OutputFrame(id));
      const Graph::Node& node = g_.node(id);
      for (const Graph::Edge& c : node.consumers) TFD_RETURN_IF_ERROR(Reach(id, c.node, out, queue));
      for (int c : node.control_consumers) TFD_RETURN_IF_ERROR(Reach(id, c, out, queue));
    }
    for (int id = 0; id < n; ++id) {
      if (lf_.frame[id] < 0) {
        return errors::InvalidArgument(Where(g_.node(id)),
                                       " is on a cycle that no node without inputs reaches: it "
                                       "could never run")
            .WithDetails({.node = g_.node(id).name(), .op = g_.node(id).op()});
      }
    }
    return OkStatus();
  }

 private:
  // The frame node `id`'s consumers run in.
  StatusOr<int> OutputFrame(int id) {
    const Graph::Node& node = g_.node(id);
    const int f = lf_.frame[id];
    switch (lf_.kind[id]) {
      case NodeKind::kEnter: {
        const std::string name = AttrOr<std::string>(node, "frame_name", "");
        auto [it, added] = by_name_.emplace(name, static_cast<int>(lf_.frames.size()));
        if (added) {
          LoopFrames::Frame child;
          child.name = name;
          child.parent = f;
          child.parallel_iterations =
              static_cast<int>(AttrOr<int64_t>(node, "parallel_iterations", 10));
          lf_.frames.push_back(std::move(child));
        } else if (lf_.frames[it->second].parent != f) {
          return Error(id, "enters frame '" + name + "' from another frame than its other Enters");
        }
        ++lf_.frames[it->second].num_enters;
        lf_.child[id] = it->second;
        return it->second;
      }
      case NodeKind::kExit:
        if (f == 0) return Error(id, "is not inside a while loop: there is no frame to exit to");
        return lf_.frames[f].parent;
      case NodeKind::kNextIteration:
        if (f == 0) return Error(id, "is not inside a while loop: there is no next iteration");
        return f;
      default:
        return f;
    }
  }

  Status Reach(int from, int to, int frame, std::deque<int>& queue) {
    if (frame != 0 && lf_.kind[to] == NodeKind::kRetval) {
      // It would run once per iteration, each writing the one fetch.
      return Error(to, "fetches '" + g_.node(from).name() + "', which is inside while loop '" +
                           lf_.frames[frame].name + "': fetch the loop's results (its Exits)");
    }
    if (lf_.frame[to] < 0) {
      lf_.frame[to] = frame;
      queue.push_back(to);
      return OkStatus();
    }
    if (lf_.frame[to] == frame) return OkStatus();
    return Error(to, "takes inputs from two frames: '" + FrameName(lf_.frame[to]) + "' and '" +
                         FrameName(frame) + "' (from node '" + g_.node(from).name() +
                         "'); a value enters a loop only through an Enter and leaves it "
                         "through an Exit");
  }

  std::string FrameName(int f) const { return f == 0 ? "(root)" : lf_.frames[f].name; }

  Status Error(int id, const std::string& what) const {
    const Graph::Node& n = g_.node(id);
    return errors::InvalidArgument(Where(n), " ", what).WithDetails({.node = n.name(), .op = n.op()});
  }

  const Graph& g_;
  LoopFrames& lf_;
  std::map<std::string, int> by_name_;
};

}  // namespace

StatusOr<LoopFrames> LoopFrames::Build(const Graph& graph) {
  LoopFrames lf;
  const int n = graph.num_nodes();
  lf.kind.resize(n);
  lf.child.assign(n, -1);
  lf.constant.assign(n, false);
  for (int id = 0; id < n; ++id) {
    lf.kind[id] = KindOf(graph.node(id).op());
    if (lf.kind[id] == NodeKind::kEnter) lf.constant[id] = AttrOr<bool>(graph.node(id), "is_constant", false);
  }
  TFD_RETURN_IF_ERROR(FrameWalk(graph, lf).Run());
  lf.local.resize(n);
  for (int id = 0; id < n; ++id) {
    const Graph::Node& node = graph.node(id);
    Frame& f = lf.frames[lf.frame[id]];
    lf.local[id] = f.num_nodes++;
    const int controls = static_cast<int>(node.control_inputs.size());
    const int data = static_cast<int>(node.inputs.size());
    f.initial_pending.push_back(lf.kind[id] == NodeKind::kMerge ? 2 * controls + 1 : controls + data);
    f.ids.push_back(id);
    f.input_start.push_back(f.input_start.back() + data);
  }
  return lf;
}

}  // namespace tfd
