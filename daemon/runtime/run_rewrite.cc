#include "daemon/runtime/run_rewrite.h"

#include <map>
#include <set>

#include "common/graph.h"
#include "common/prune.h"

namespace tfd {
namespace {

std::string ArgName(const TensorId& id) { return "_feed/" + id.node + "/" + std::to_string(id.port); }

// What the fed node declares for the fed output: validate just the fed node
// and what it depends on. When that cannot be done (its inputs are broken,
// or fed themselves), fall back to what the feed carries.
FeedSpec DeclaredFeed(const GraphDef& graph, const OpRegistry& registry, const TensorId& id,
                      const Tensor& value) {
  FeedSpec spec{id, value.dtype(), PartialShape::Unknown()};
  auto pruned = PruneGraph(graph, {id.node});
  if (!pruned.ok()) return spec;
  auto g = Graph::Build(std::move(pruned).value(), registry);
  if (!g.ok()) return spec;
  const Graph::Node& n = g->node(g->FindNode(id.node));
  if (id.port < static_cast<int>(n.output_types.size())) {
    spec.dtype = n.output_types[id.port];
    spec.shape = n.output_shapes[id.port];
  }
  return spec;
}

}  // namespace

Status CheckFeed(const FeedSpec& spec, const Tensor& t) {
  if (t.dtype() != spec.dtype) {
    return errors::InvalidArgument("feed '", spec.id.ToString(), "' is ", DTypeName(t.dtype()),
                                   " but node '", spec.id.node, "' produces ",
                                   DTypeName(spec.dtype));
  }
  if (!spec.shape.IsCompatibleWith(PartialShape(t.shape()))) {
    return errors::InvalidArgument("feed '", spec.id.ToString(), "' has shape ",
                                   t.shape().ToString(), " but node '", spec.id.node,
                                   "' declares ", spec.shape.ToString());
  }
  return OkStatus();
}

StatusOr<GraphDef> RewriteForRun(const GraphDef& graph, const OpRegistry& registry,
                           const std::vector<std::pair<TensorId, Tensor>>& feeds,
                           const std::vector<TensorId>& fetches,
                           const std::vector<std::string>& targets, std::vector<FeedSpec>* specs) {
  std::set<std::string> names;
  for (const NodeDef& n : graph.nodes) names.insert(n.name);
  std::map<TensorId, std::string> fed;
  GraphDef out;
  out.versions = graph.versions;
  for (size_t i = 0; i < feeds.size(); ++i) {
    const TensorId& id = feeds[i].first;
    if (!names.count(id.node)) {
      return errors::NotFound("feed '", id.ToString(), "' names no node in the graph");
    }
    if (fed.count(id)) return errors::InvalidArgument("'", id.ToString(), "' is fed twice");
    FeedSpec spec = DeclaredFeed(graph, registry, id, feeds[i].second);
    TFD_RETURN_IF_ERROR(CheckFeed(spec, feeds[i].second));
    fed[id] = ArgName(id);
    NodeDef arg;
    arg.name = ArgName(id);
    arg.op = "_Arg";
    arg.attrs = {{"T", spec.dtype}, {"index", int64_t(i)}, {"shape", spec.shape}};
    out.nodes.push_back(std::move(arg));
    if (specs) specs->push_back(std::move(spec));
  }
  for (const NodeDef& n : graph.nodes) {
    NodeDef copy = n;
    for (std::string& in : copy.inputs) {
      auto ref = ParseInput(in);
      if (!ref.ok() || ref->control) continue;  // Graph::Build reports bad inputs
      auto it = fed.find(TensorId{ref->node, ref->port});
      if (it != fed.end()) in = it->second;
    }
    out.nodes.push_back(std::move(copy));
  }
  std::vector<std::string> roots;
  for (size_t i = 0; i < fetches.size(); ++i) {
    const TensorId& id = fetches[i];
    if (!names.count(id.node)) {
      return errors::NotFound("fetch '", id.ToString(), "' names no node in the graph");
    }
    auto it = fed.find(id);
    NodeDef ret;
    ret.name = "_fetch/" + std::to_string(i) + "/" + id.node + "/" + std::to_string(id.port);
    ret.op = "_Retval";
    ret.inputs = {it != fed.end() ? it->second : FormatInput({id.node, id.port, false})};
    ret.attrs = {{"index", int64_t(i)}};
    roots.push_back(ret.name);
    out.nodes.push_back(std::move(ret));
  }
  for (const std::string& t : targets) {
    if (!names.count(t)) return errors::NotFound("target '", t, "' names no node in the graph");
    roots.push_back(t);
  }
  return PruneGraph(out, roots);
}

}  // namespace tfd
