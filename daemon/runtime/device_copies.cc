#include "daemon/runtime/device_copies.h"

#include <map>
#include <optional>
#include <tuple>

#include "common/device_name.h"
#include "kernels/framework/framework_ops.h"

namespace tfd {
namespace {

// The GPU a node runs on, when it does.
std::optional<DeviceName> GpuOf(const Graph::Node& n) {
  if (n.def.device.empty()) return std::nullopt;
  auto d = DeviceName::Parse(n.def.device);
  if (!d.ok() || d->type != std::string(kDeviceGpu)) return std::nullopt;
  return *d;
}

// The runtime's own nodes (feeds, fetches, transfers between tasks) work on
// host memory, wherever partitioning put them: on their task's CPU.
bool RuntimeNode(const Graph::Node& n) {
  return n.op()[0] == '_' && n.op() != kernels::kCopyToDeviceOp &&
         n.op() != kernels::kCopyToHostOp;
}

HostMemory HostArgs(const Graph::Node& n) {
  auto it = n.reg->host_memory.find(kDeviceGpu);
  return it == n.reg->host_memory.end() ? HostMemory{} : it->second;
}

std::string TensorName(const Graph::Node& n, int port) {
  return port == 0 ? n.name() : n.name() + ":" + std::to_string(port);
}

}  // namespace

StatusOr<GraphDef> InsertDeviceCopies(const Graph& graph) {
  GraphDef def = graph.ToGraphDef();
  const int n = graph.num_nodes();
  // Each node's GPU (by id), and where each of its arguments lives: the
  // device string of the GPU holding it, or "" for host memory.
  std::vector<std::optional<DeviceName>> gpu(n);
  for (int id = 0; id < n; ++id) {
    gpu[id] = GpuOf(graph.node(id));
    if (gpu[id] && RuntimeNode(graph.node(id))) {
      DeviceName cpu = *gpu[id];
      cpu.type = kDeviceCpu;
      cpu.id = 0;
      def.nodes[id].device = cpu.ToString();
      gpu[id].reset();
    }
  }

  // (producer, port, device) -> the copy node's name.
  std::map<std::tuple<int, int, std::string>, std::string> copies;
  std::vector<NodeDef> added;
  for (int id = 0; id < n; ++id) {
    const Graph::Node& node = graph.node(id);
    NodeDef& out = def.nodes[id];
    int data_index = -1;
    for (std::string& input : out.inputs) {
      if (!input.empty() && input[0] == '^') continue;
      const int k = ++data_index;
      if (node.input_refs[k]) continue;
      const Graph::Edge& e = node.inputs[k];
      const Graph::Node& producer = graph.node(e.node);
      const std::string from = gpu[e.node] && !HostArgs(producer).output(e.port)
                                   ? gpu[e.node]->ToString() : "";
      const std::string to = gpu[id] && !HostArgs(node).input(k) ? gpu[id]->ToString() : "";
      if (from == to) continue;
      if (!from.empty() && !to.empty()) {
        return errors::InvalidArgument("node '", node.name(), "' on ", to, " takes ",
                                       TensorName(producer, e.port), " from ", from,
                                       ": tensors do not move between GPUs yet");
      }
      // The copy runs on the GPU side: the device whose stream orders it.
      const std::string device = to.empty() ? from : to;
      const auto key = std::make_tuple(e.node, e.port, device);
      auto it = copies.find(key);
      if (it == copies.end()) {
        NodeDef copy;
        copy.op = to.empty() ? kernels::kCopyToHostOp : kernels::kCopyToDeviceOp;
        copy.name = producer.name() + "/_" + std::to_string(e.port) +
                    (to.empty() ? "_to_host" : "_to_" + gpu[id]->type.value_or("GPU") + "_" +
                                                   std::to_string(gpu[id]->id.value_or(0)));
        copy.inputs = {TensorName(producer, e.port)};
        copy.device = device;
        copy.attrs["T"] = producer.output_types[e.port];
        it = copies.emplace(key, copy.name).first;
        added.push_back(std::move(copy));
      }
      input = it->second;
    }
  }
  for (NodeDef& copy : added) def.nodes.push_back(std::move(copy));
  return def;
}

}  // namespace tfd
