#include "daemon/runtime/gpu_placement.h"

#include <numeric>

namespace tfd {
namespace {

std::string Where(const Graph::Node& n) { return "node '" + n.name() + "' (" + n.op() + ")"; }

int Root(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

bool Internal(const Graph::Node& n) { return !n.op().empty() && n.op()[0] == '_'; }

const std::string* WholeGraphBlocker(const GpuPlacementOptions& o, const Graph::Node& n) {
  if (o.whole_graph_blockers == nullptr) return nullptr;
  auto it = o.whole_graph_blockers->find(n.name());
  return it == o.whole_graph_blockers->end() ? nullptr : &it->second;
}

// Colocation groups (a reference consumer goes where its resource is), and
// for each group's root why the group cannot go to a GPU ("": it can).
struct Groups {
  std::vector<int> root;
  std::vector<const Graph::Node*> blocker;
  std::vector<std::string> why;
};

Groups MakeGroups(const Graph& graph) {
  const int n = graph.num_nodes();
  Groups g{ColocationRoots(graph), std::vector<const Graph::Node*>(n, nullptr),
           std::vector<std::string>(n)};
  for (int id = 0; id < n; ++id) {
    const Graph::Node& node = graph.node(id);
    const int root = g.root[id];
    std::string why;
    if (!Internal(node) && g.blocker[root] == nullptr &&
        !node.reg->HasKernelFor(kDeviceGpu, node.def.attrs, &why)) {
      g.blocker[root] = &node;
      g.why[root] = why;
    }
  }
  return g;
}

// Why `node`, in the group rooted at `root`, cannot go to a GPU.
std::string Why(const Groups& g, int root, const Graph::Node& node) {
  return g.blocker[root] == &node ? g.why[root]
                                  : "it runs with " + Where(*g.blocker[root]) + ", whose " +
                                        g.why[root];
}

}  // namespace

std::vector<int> ColocationRoots(const Graph& graph) {
  const int n = graph.num_nodes();
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
  for (int id = 0; id < n; ++id) parent[id] = Root(parent, id);
  return parent;
}

std::map<std::string, std::string> GpuBlockers(const Graph& whole) {
  const Groups g = MakeGroups(whole);
  std::map<std::string, std::string> blocked;
  for (int id = 0; id < whole.num_nodes(); ++id) {
    const int root = g.root[id];
    if (g.blocker[root] == nullptr) continue;
    blocked[whole.node(id).name()] = Why(g, root, whole.node(id));
  }
  return blocked;
}

StatusOr<std::vector<int>> PlaceOnGpus(const Graph& graph, const std::vector<DeviceName>& requested,
                                       const GpuPlacementOptions& options) {
  const int n = graph.num_nodes();
  const Groups groups = MakeGroups(graph);

  std::vector<int> gpu(n, -1);
  bool said = false;
  for (int id = 0; id < n; ++id) {
    const Graph::Node& node = graph.node(id);
    const int root = groups.root[id];
    const DeviceName& want = requested[root];
    if (want.type != std::string(kDeviceGpu) || Internal(node)) continue;
    const int index = want.id.value_or(0);
    const int have = options.gpus(id);
    std::string why;
    if (have == 0) {
      why = "its task has no usable GPU: " + options.unavailable;
    } else if (index >= have) {
      why = "its task has " + std::to_string(have) + " GPU" + (have == 1 ? "" : "s");
    } else if (groups.blocker[root] != nullptr) {
      why = Why(groups, root, node);
    } else if (const std::string* whole = WholeGraphBlocker(options, node); whole != nullptr) {
      why = *whole;
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
