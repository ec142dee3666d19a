#include "daemon/runtime/gpu_placement.h"

#include <numeric>

namespace tfd {
namespace {

std::string Where(const Graph::Node& n) { return "node '" + n.name() + "' (" + n.op() + ")"; }

int Root(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

bool HasGpuKernel(const Graph::Node& n) { return n.reg->kernels.count(kDeviceGpu) > 0; }
bool Internal(const Graph::Node& n) { return !n.op().empty() && n.op()[0] == '_'; }

}  // namespace

StatusOr<std::vector<int>> PlaceOnGpus(const Graph& graph, const std::vector<DeviceName>& requested,
                                       const GpuPlacementOptions& options) {
  const int n = graph.num_nodes();
  // Colocation groups: a reference consumer goes where its resource is.
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (int id = 0; id < n; ++id) {
    const Graph::Node& node = graph.node(id);
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      if (!node.input_refs[k]) continue;
      const int owner = Root(parent, node.inputs[k].node);
      const int self = Root(parent, id);
      if (owner != self) parent[self] = owner;
    }
  }
  // A group without a GPU kernel for every member cannot go to the GPU.
  std::vector<const Graph::Node*> blocker(n, nullptr);
  for (int id = 0; id < n; ++id) {
    const Graph::Node& node = graph.node(id);
    const int root = Root(parent, id);
    if (!HasGpuKernel(node) && !Internal(node) && blocker[root] == nullptr) blocker[root] = &node;
  }

  std::vector<int> gpu(n, -1);
  bool said = false;
  for (int id = 0; id < n; ++id) {
    const Graph::Node& node = graph.node(id);
    const int root = Root(parent, id);
    const DeviceName& want = requested[root];
    if (want.type != std::string(kDeviceGpu) || Internal(node)) continue;
    const int index = want.id.value_or(0);
    const int have = options.gpus(id);
    std::string why;
    if (have == 0) {
      why = "its task has no usable GPU: " + options.unavailable;
    } else if (index >= have) {
      why = "its task has " + std::to_string(have) + " GPU" + (have == 1 ? "" : "s");
    } else if (blocker[root] != nullptr) {
      why = blocker[root] == &node ? "op " + node.op() + " has no GPU kernel"
                                   : "it runs with " + Where(*blocker[root]) +
                                         ", whose op has no GPU kernel";
    } else {
      gpu[id] = index;
      continue;
    }
    if (!options.allow_soft_placement) {
      return errors::InvalidArgument(Where(node), " asks for ", want.ToString(), " but ", why,
                                     " (--allow-soft-placement runs such nodes on the CPU)");
    }
    if (!said && options.logger) {
      options.logger->info("{} asks for {} but {}: it and any other such node run on the CPU "
                           "(soft placement)",
                           Where(node), want.ToString(), why);
      said = true;
    }
  }
  return gpu;
}

}  // namespace tfd
