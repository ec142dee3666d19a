#include "daemon/runtime/partition.h"

#include <algorithm>
#include <set>

#include "common/device_name.h"
#include "daemon/runtime/loop_frames.h"

namespace tfd {
namespace {

std::string TaskOf(const std::string& device) {
  auto d = DeviceName::Parse(device);
  return d.ok() ? d->TaskName() : device;
}

// Node names may not hold ':' or '^'; edge and task names do.
std::string Safe(std::string s) {
  for (char& c : s) {
    if (c == ':') c = '_';
    if (c == '^') c = '~';
  }
  return s;
}

}  // namespace

std::string SendNodeFor(const std::string& recv_node, const std::string& recv_device) {
  const std::string prefix = "_recv/";
  if (recv_node.rfind(prefix, 0) != 0) return "";
  // Safe() works character by character, so the pieces can be made apart.
  return "_send/" + recv_node.substr(prefix.size()) + Safe(TaskOf(recv_device));
}

namespace {

// INVALID_ARGUMENT when an edge between tasks has an end that runs in a
// while loop's frame; see partition.h.
Status CheckLoopsOnOneTask(const Graph& graph, const std::vector<std::string>& task) {
  const bool loops =
      std::any_of(graph.nodes().begin(), graph.nodes().end(), [](const Graph::Node& n) {
        return n.op() == "Enter" || n.op() == "RefEnter";
      });
  if (!loops) return OkStatus();
  TFD_ASSIGN_OR_RETURN(LoopFrames lf, LoopFrames::Build(graph));
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Graph::Node& node = graph.node(id);
    std::vector<int> from;
    for (const Graph::Edge& e : node.inputs) from.push_back(e.node);
    from.insert(from.end(), node.control_inputs.begin(), node.control_inputs.end());
    for (int src : from) {
      // The value travels in the consumer's frame: the root, for an Enter or
      // an Exit's consumer.
      if (task[src] == task[id] || lf.frame[id] == 0) continue;
      return errors::InvalidArgument("node '", node.name(), "' (", node.op(), ") on ", task[id],
                                     " takes '", graph.node(src).name(), "' from ", task[src],
                                     " inside while loop '", lf.frames[lf.frame[id]].name,
                                     "': a loop's nodes must all be on one task")
          .WithDetails({.node = node.name(), .op = node.op()});
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::map<std::string, GraphDef>> PartitionGraph(const Graph& graph,
                                                         const std::vector<std::string>& devices) {
  std::map<std::string, GraphDef> parts;
  const int n = graph.num_nodes();
  std::vector<std::string> task(n);
  for (int id = 0; id < n; ++id) task[id] = TaskOf(devices[id]);
  TFD_RETURN_IF_ERROR(CheckLoopsOnOneTask(graph, task));

  // Each node copied into its task's partition, inputs rewritten below.
  std::vector<NodeDef> copies(n);
  for (int id = 0; id < n; ++id) {
    copies[id] = graph.node(id).def;
    copies[id].device = devices[id];
    copies[id].inputs.clear();
  }
  std::set<std::string> made;  // names of _Send/_Recv nodes already added
  auto add = [&](const std::string& t, NodeDef node) {
    if (made.insert(t + "|" + node.name).second) parts[t].nodes.push_back(std::move(node));
  };
  auto transfer_attrs = [&](int src, int dst, const std::string& edge, DType dtype) {
    return AttrMap{{"T", dtype},
                   {"tensor_name", edge},
                   {"send_device", devices[src]},
                   {"recv_device", devices[dst]}};
  };

  for (int id = 0; id < n; ++id) {
    const Graph::Node& node = graph.node(id);
    for (const Graph::Edge& e : node.inputs) {
      const Graph::Node& src = graph.node(e.node);
      if (task[e.node] == task[id]) {
        copies[id].inputs.push_back(FormatInput({src.name(), e.port, false}));
        continue;
      }
      const std::string edge = src.name() + ":" + std::to_string(e.port);
      const DType dtype = src.output_types[e.port];
      NodeDef send{Safe("_send/" + edge + task[id]), "_Send",
                   {FormatInput({src.name(), e.port, false})}, devices[e.node],
                   transfer_attrs(e.node, id, edge, dtype)};
      NodeDef recv{Safe("_recv/" + edge), "_Recv", {}, devices[id],
                   transfer_attrs(e.node, id, edge, dtype)};
      recv.attrs["shape"] = src.output_shapes[e.port];
      copies[id].inputs.push_back(recv.name);
      add(task[e.node], std::move(send));
      add(task[id], std::move(recv));
    }
    for (int c : node.control_inputs) {
      const Graph::Node& src = graph.node(c);
      if (task[c] == task[id]) {
        copies[id].inputs.push_back("^" + src.name());
        continue;
      }
      const std::string edge = "^" + src.name();
      NodeDef signal{"_signal/" + src.name(), "_Signal", {"^" + src.name()}, devices[c], {}};
      NodeDef send{Safe("_send/" + edge + task[id]), "_Send", {signal.name}, devices[c],
                   transfer_attrs(c, id, edge, DType::kBool)};
      NodeDef recv{Safe("_recv/" + edge), "_Recv", {}, devices[id],
                   transfer_attrs(c, id, edge, DType::kBool)};
      recv.attrs["shape"] = PartialShape(std::vector<int64_t>{});
      copies[id].inputs.push_back("^" + recv.name);
      add(task[c], std::move(signal));
      add(task[c], std::move(send));
      add(task[id], std::move(recv));
    }
  }
  // Data inputs must precede control inputs in a node's input list.
  for (NodeDef& c : copies) {
    std::stable_partition(c.inputs.begin(), c.inputs.end(),
                          [](const std::string& in) { return in.empty() || in[0] != '^'; });
  }
  for (int id = 0; id < n; ++id) parts[task[id]].nodes.push_back(std::move(copies[id]));
  // Each task checks the versions of the graph it was cut from.
  for (auto& [t, part] : parts) part.versions = graph.versions();
  return parts;
}

}  // namespace tfd
