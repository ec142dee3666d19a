#include "common/prune.h"

#include <map>
#include <set>

namespace tfd {

StatusOr<GraphDef> PruneGraph(const GraphDef& graph, const std::vector<std::string>& roots) {
  std::map<std::string, const NodeDef*> by_name;
  for (const NodeDef& n : graph.nodes) by_name.emplace(n.name, &n);
  std::set<std::string> keep;
  std::vector<std::string> stack;
  for (const std::string& r : roots) {
    if (!by_name.count(r)) return errors::NotFound("'", r, "' names no node in the graph");
    if (keep.insert(r).second) stack.push_back(r);
  }
  while (!stack.empty()) {
    const NodeDef* n = by_name.at(stack.back());
    stack.pop_back();
    for (const std::string& in : n->inputs) {
      TFD_ASSIGN_OR_RETURN(InputRef ref, ParseInput(in));
      if (!by_name.count(ref.node)) {
        return errors::InvalidArgument("node '", n->name, "' (", n->op, "): input '", in,
                                       "' names node '", ref.node, "', which is not in the graph");
      }
      if (keep.insert(ref.node).second) stack.push_back(ref.node);
    }
  }
  GraphDef out;
  out.versions = graph.versions;
  for (const NodeDef& n : graph.nodes) {
    if (keep.count(n.name)) out.nodes.push_back(n);
  }
  return out;
}

}  // namespace tfd
