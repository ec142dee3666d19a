#include "daemon/runtime/partition.h"

#include <algorithm>
#include <set>

#include "daemon/runtime/partition_loops.h"

namespace tfd {
namespace {

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
  return "_send/" + recv_node.substr(prefix.size()) + Safe(TaskOfDevice(recv_device));
}

namespace {

// One PartitionGraph call: the partitions, filled node by node.
class Partitioner {
 public:
  Partitioner(const Graph& graph, const LoopPlan& plan) : graph_(graph), plan_(plan) {}

  std::map<std::string, GraphDef> Run() {
    const int n = graph_.num_nodes();
    // Each node copied into its task's partition, inputs rewritten below.
    std::vector<NodeDef> copies(n);
    for (int id = 0; id < n; ++id) {
      copies[id] = graph_.node(id).def;
      copies[id].device = plan_.devices[id];
      copies[id].inputs.clear();
      for (const Graph::Edge& e : graph_.node(id).inputs) {
        copies[id].inputs.push_back(InputFrom(e.node, e.port, id));
      }
      for (int c : graph_.node(id).control_inputs) {
        copies[id].inputs.push_back(InputFrom(c, -1, id));
      }
      // Data inputs must precede control inputs in a node's input list.
      std::stable_partition(copies[id].inputs.begin(), copies[id].inputs.end(),
                            [](const std::string& in) { return in.empty() || in[0] != '^'; });
    }
    for (int f = 1; f < plan_.num_frames(); ++f) {
      for (const std::string& task : plan_.control_loops[f]) AddControlLoop(f, task);
    }
    for (int id = 0; id < n; ++id) parts_[plan_.task[id]].nodes.push_back(std::move(copies[id]));
    // Each task checks the versions of the graph it was cut from.
    for (auto& [t, part] : parts_) part.versions = graph_.versions();
    return std::move(parts_);
  }

 private:
  // Node `dst`'s input from output `port` (-1: a control edge) of `src`:
  // the node itself on its task, else a _Recv of it.
  std::string InputFrom(int src, int port, int dst) {
    const std::string& name = graph_.node(src).name();
    if (plan_.task[src] == plan_.task[dst]) {
      return port < 0 ? "^" + name : FormatInput({name, port, false});
    }
    const std::string recv =
        Cut(src, port, plan_.task[dst], plan_.devices[dst], plan_.FrameOf(dst));
    return port < 0 ? "^" + recv : recv;
  }

  // The _Recv on `task` (on `device`) of `src`'s output `port` (-1: its
  // control edge, through a _Signal), added with its _Send unless there
  // already (one pair per tensor and receiving task). Inside loop `frame`
  // the _Recv waits on the frame's control loop, to run once per iteration.
  std::string Cut(int src, int port, const std::string& task, const std::string& device,
                  int frame) {
    const Graph::Node& from = graph_.node(src);
    const std::string edge =
        port < 0 ? "^" + from.name() : from.name() + ":" + std::to_string(port);
    const DType dtype = port < 0 ? DType::kBool : from.output_types[port];
    const std::string& src_device = plan_.devices[src];
    const AttrMap attrs{
        {"T", dtype}, {"tensor_name", edge}, {"send_device", src_device}, {"recv_device", device}};
    std::string sent = FormatInput({from.name(), port, false});
    if (port < 0) {
      NodeDef signal{"_signal/" + from.name(), "_Signal", {"^" + from.name()}, src_device, {}};
      sent = signal.name;
      Add(plan_.task[src], std::move(signal));
    }
    Add(plan_.task[src], {Safe("_send/" + edge + task), "_Send", {sent}, src_device, attrs});
    NodeDef recv{Safe("_recv/" + edge), "_Recv", {}, device, attrs};
    if (frame != 0) recv.inputs.push_back("^" + ControlLoopNode(frame, "merge"));
    recv.attrs["shape"] =
        port < 0 ? PartialShape(std::vector<int64_t>{}) : from.output_shapes[port];
    std::string name = recv.name;
    Add(task, std::move(recv));
    return name;
  }

  // Frame `f`'s control loop on `task` (partition_loops.h).
  void AddControlLoop(int f, const std::string& task) {
    const LoopFrames::Frame& frame = plan_.frames->frames[f];
    const std::string device = task + "/device:CPU:0";
    const int cond = plan_.loop_cond[f];
    std::string start = ControlLoopNode(frame.parent, "merge");
    if (frame.parent == 0) {
      start = ControlLoopNode(f, "start");
      Add(task,
          {start, "Const", {}, device, {{"dtype", DType::kBool}, {"value", Tensor::Scalar(true)}}});
    }
    const std::string pred =
        plan_.task[cond] == task ? graph_.node(cond).name() : Cut(cond, 0, task, device, f);
    const AttrMap bool_t{{"T", DType::kBool}};
    Add(task, {ControlLoopNode(f, "enter"),
               "Enter",
               {start},
               device,
               {{"T", DType::kBool},
                {"frame_name", frame.name},
                {"is_constant", false},
                {"parallel_iterations", int64_t{frame.parallel_iterations}}}});
    Add(task, {ControlLoopNode(f, "merge"),
               "Merge",
               {ControlLoopNode(f, "enter"), ControlLoopNode(f, "next")},
               device,
               {{"T", DType::kBool}, {"N", int64_t{2}}}});
    Add(task, {ControlLoopNode(f, "switch"),
               "Switch",
               {ControlLoopNode(f, "merge"), pred},
               device,
               bool_t});
    Add(task, {ControlLoopNode(f, "next"),
               "NextIteration",
               {ControlLoopNode(f, "switch") + ":1"},
               device,
               bool_t});
  }

  void Add(const std::string& task, NodeDef node) {
    if (made_.insert(task + "|" + node.name).second) parts_[task].nodes.push_back(std::move(node));
  }

  const Graph& graph_;
  const LoopPlan& plan_;
  std::map<std::string, GraphDef> parts_;
  std::set<std::string> made_;  // "task|name" of the nodes added so far
};

}  // namespace

StatusOr<std::map<std::string, GraphDef>> PartitionGraph(const Graph& graph,
                                                         const std::vector<std::string>& devices) {
  TFD_ASSIGN_OR_RETURN(LoopPlan plan, PlanLoops(graph, devices));
  return Partitioner(graph, plan).Run();
}

}  // namespace tfd
