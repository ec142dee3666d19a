#include "common/graph.h"

#include <algorithm>
#include <deque>
#include <optional>

namespace tfd {
namespace {

std::string Where(const NodeDef& n) { return "node '" + n.name + "' (" + n.op + ")"; }

// What a node of a graph from a newer tfd names that this build lacks: its
// op, or an attr its op has no more here. Either means this tfd is too old.
Status CheckKnownHere(const NodeDef& n, const OpRegistry& registry, const GraphVersions& versions) {
  const OpRegistration* reg = registry.Find(n.op);
  if (reg == nullptr) return NewerGraphError(versions, "this tfd has no op " + n.op);
  for (const auto& [name, value] : n.attrs) {
    if (reg->def.FindAttr(name) == nullptr) {
      return NewerGraphError(versions, "op " + n.op + " has no attr '" + name + "' in this tfd");
    }
  }
  return OkStatus();
}

// The edge that closes a while loop: a NextIteration feeding its loop's
// Merge. It is the only edge a cycle may pass through (TensorFlow's rule);
// sorting and annotating treat it as pointing backwards.
bool IsBackEdge(const NodeDef& producer, const NodeDef& consumer) {
  return producer.op == "NextIteration" && consumer.op == "Merge";
}

// What a Merge's back-edge input stands in as while the Merge is annotated:
// a value of the dtype its forward inputs have, of unknown shape.
NodeAnnotation BackEdgeStandIn(const std::vector<Graph::Node>& nodes, const Graph::Node& merge) {
  NodeAnnotation a;
  DType dtype = DType::kInvalid;
  for (const Graph::Edge& e : merge.inputs) {
    const Graph::Node& from = nodes[e.node];
    if (!IsBackEdge(from.def, merge.def)) {
      dtype = from.output_types[e.port];
      break;
    }
  }
  a.output_types = {dtype};
  a.output_refs = {false};
  a.output_shapes = {PartialShape::Unknown()};
  a.output_values = {Tensor()};
  return a;
}

// The back edge into input k of `merge`, once its producer is annotated:
// a port it has, of the dtype the loop's other inputs have.
Status CheckBackEdge(const Graph::Node& from, const Graph::Node& merge, int k) {
  const int port = merge.inputs[k].port;
  if (port < 0 || port >= static_cast<int>(from.output_types.size())) {
    return errors::InvalidArgument(Where(merge.def), ": input ", k, " names output ", port, " of ",
                                   Where(from.def), ", which has ", from.output_types.size());
  }
  if (from.output_types[port] != merge.input_types[k]) {
    return errors::InvalidArgument(Where(merge.def), ": input ", k, " from ", Where(from.def),
                                   " is ", DTypeName(from.output_types[port]), ", expected ",
                                   DTypeName(merge.input_types[k]), " as the loop's other inputs");
  }
  return OkStatus();
}

}  // namespace

StatusOr<Graph> Graph::Build(GraphDef def, const OpRegistry& registry) {
  TFD_RETURN_IF_ERROR(CheckGraphVersions(def.versions));
  Graph g;
  TFD_RETURN_IF_ERROR(g.Index(std::move(def)));
  TFD_RETURN_IF_ERROR(g.Sort());
  TFD_RETURN_IF_ERROR(g.Annotate(registry));
  return g;
}

int Graph::FindNode(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : it->second;
}

Status Graph::Index(GraphDef def) {
  versions_ = def.versions;
  nodes_.resize(def.nodes.size());
  for (size_t i = 0; i < def.nodes.size(); ++i) {
    NodeDef& n = def.nodes[i];
    if (n.name.empty()) return errors::InvalidArgument("node #", i, " has no name");
    if (n.name.find_first_of(":^ ") != std::string::npos) {
      return errors::InvalidArgument("node name '", n.name, "' may not contain ':', '^' or spaces");
    }
    if (n.op.empty()) return errors::InvalidArgument("node '", n.name, "' has no op");
    if (!by_name_.emplace(n.name, static_cast<int>(i)).second) {
      return errors::InvalidArgument("two nodes are named '", n.name, "'");
    }
    nodes_[i].def = std::move(n);
  }
  for (Node& n : nodes_) {
    bool seen_control = false;
    for (const std::string& in : n.def.inputs) {
      auto ref = ParseInput(in);
      if (!ref.ok()) return ref.status().WithContext(Where(n.def));
      const int src = FindNode(ref->node);
      if (src < 0) {
        return errors::InvalidArgument(Where(n.def), ": input '", in, "' names node '", ref->node,
                                       "', which is not in the graph");
      }
      if (ref->control) {
        seen_control = true;
        n.control_inputs.push_back(src);
      } else {
        if (seen_control) {
          return errors::InvalidArgument(Where(n.def), ": data input '", in,
                                         "' comes after a control input");
        }
        n.inputs.push_back({src, ref->port});
      }
    }
  }
  return OkStatus();
}

Status Graph::Sort() {
  const int n = num_nodes();
  std::vector<int> pending(n);
  std::vector<std::vector<int>> succ(n);
  for (int i = 0; i < n; ++i) {
    for (const Edge& e : nodes_[i].inputs) {
      if (IsBackEdge(nodes_[e.node].def, nodes_[i].def)) continue;
      succ[e.node].push_back(i);
      ++pending[i];
    }
    for (int c : nodes_[i].control_inputs) succ[c].push_back(i);
    pending[i] += static_cast<int>(nodes_[i].control_inputs.size());
  }
  std::deque<int> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    const int id = ready.front();
    ready.pop_front();
    topo_.push_back(id);
    for (int s : succ[id]) {
      if (--pending[s] == 0) ready.push_back(s);
    }
  }
  if (static_cast<int>(topo_.size()) == n) return OkStatus();
  // Walk inputs among the unsorted nodes until one repeats: that is a cycle.
  int start = 0;
  while (pending[start] == 0) ++start;
  std::vector<int> path;
  std::vector<int> pos(n, -1);
  int cur = start;
  while (pos[cur] < 0) {
    pos[cur] = static_cast<int>(path.size());
    path.push_back(cur);
    int next = -1;
    for (const Edge& e : nodes_[cur].inputs) {
      if (pending[e.node] > 0 && !IsBackEdge(nodes_[e.node].def, nodes_[cur].def)) next = e.node;
    }
    for (int c : nodes_[cur].control_inputs) {
      if (pending[c] > 0) next = c;
    }
    cur = next;
  }
  std::string cycle;
  for (size_t i = path.size(); i-- > static_cast<size_t>(pos[cur]);) {
    cycle += "'" + nodes_[path[i]].name() + "' -> ";
  }
  cycle += "'" + nodes_[path.back()].name() + "'";
  return errors::InvalidArgument("the graph has a cycle: ", cycle);
}

Status Graph::Annotate(const OpRegistry& registry) {
  for (int id : topo_) {
    Node& n = nodes_[id];
    Status s = AnnotateNode(n, registry);
    if (!s.ok()) {
      return Status(s.code(), Where(n.def) + ": " + s.message());
    }
  }
  for (int id = 0; id < num_nodes(); ++id) {
    const Node& n = nodes_[id];
    for (int k = 0; k < static_cast<int>(n.inputs.size()); ++k) {
      const Node& from = nodes_[n.inputs[k].node];
      if (IsBackEdge(from.def, n.def)) TFD_RETURN_IF_ERROR(CheckBackEdge(from, n, k));
      nodes_[n.inputs[k].node].consumers.push_back({id, k});
    }
    for (int c : n.control_inputs) nodes_[c].control_consumers.push_back(id);
  }
  return OkStatus();
}

Status Graph::AnnotateNode(Node& n, const OpRegistry& registry) {
  if (WrittenByNewerTfd(versions_)) TFD_RETURN_IF_ERROR(CheckKnownHere(n.def, registry, versions_));
  std::vector<AnnotatedInput> inputs;
  inputs.reserve(n.inputs.size());
  // A back edge's producer comes later in the order, not yet annotated: it
  // stands in as a value of the loop's dtype and unknown shape (checked
  // against the producer once every node is annotated).
  std::optional<NodeAnnotation> back;
  for (const Edge& e : n.inputs) {
    const Node& from = nodes_[e.node];
    if (!IsBackEdge(from.def, n.def)) {
      inputs.push_back({&from.def, &from, e.port});
      continue;
    }
    if (!back) back = BackEdgeStandIn(nodes_, n);
    inputs.push_back({&from.def, &*back, 0});
  }
  TFD_ASSIGN_OR_RETURN(NodeAnnotation a, tfd::AnnotateNode(n.def, registry, inputs));
  static_cast<NodeAnnotation&>(n) = std::move(a);
  return OkStatus();
}

StatusOr<NodeAnnotation> AnnotateNode(NodeDef& node, const OpRegistry& registry,
                                      const std::vector<AnnotatedInput>& inputs) {
  NodeAnnotation n;
  TFD_ASSIGN_OR_RETURN(n.reg, registry.Lookup(node.op));
  const OpDef& def = n.reg->def;
  AttrMap& attrs = node.attrs;

  // How many inputs each arg takes; at most one variadic arg without its
  // count attr can be inferred from the total.
  const int total = static_cast<int>(inputs.size());
  std::vector<int> count(def.inputs.size(), 1);
  int unknown = -1, known_sum = 0;
  for (size_t a = 0; a < def.inputs.size(); ++a) {
    const ArgDef& arg = def.inputs[a];
    const std::string& count_attr = !arg.number_attr.empty() ? arg.number_attr : arg.type_list_attr;
    if (count_attr.empty()) {
      known_sum += 1;
      continue;
    }
    auto it = attrs.find(count_attr);
    if (it == attrs.end()) {
      if (unknown >= 0) {
        return errors::InvalidArgument("attrs '", def.inputs[unknown].number_attr,
                                       def.inputs[unknown].type_list_attr, "' and '", count_attr,
                                       "' must be given: they cannot both be inferred");
      }
      unknown = static_cast<int>(a);
      continue;
    }
    if (const int64_t* v = std::get_if<int64_t>(&it->second)) {
      count[a] = static_cast<int>(*v);
    } else if (const auto* l = std::get_if<std::vector<DType>>(&it->second)) {
      count[a] = static_cast<int>(l->size());
    } else if (std::holds_alternative<EmptyList>(it->second)) {
      count[a] = 0;
    }
    known_sum += count[a];
  }
  if (unknown >= 0) {
    count[unknown] = std::max(0, total - known_sum);
    if (!def.inputs[unknown].number_attr.empty()) {
      attrs[def.inputs[unknown].number_attr] = int64_t{count[unknown]};
    }
  }
  // Infer missing type attrs from the producers' dtypes.
  int pos = 0;
  for (size_t a = 0; a < def.inputs.size() && pos <= total; ++a) {
    const ArgDef& arg = def.inputs[a];
    std::vector<DType> seen;
    for (int k = 0; k < count[a] && pos + k < total; ++k) {
      const AnnotatedInput& e = inputs[pos + k];
      const NodeAnnotation& src = *e.producer;
      if (e.port >= static_cast<int>(src.output_types.size())) {
        return errors::InvalidArgument("input ", pos + k, " asks for output ", e.port, " of '",
                                       e.producer_def->name, "' (", e.producer_def->op,
                                       "), which has ", src.output_types.size(), " outputs");
      }
      seen.push_back(src.output_types[e.port]);
    }
    if (!arg.type_attr.empty() && !attrs.count(arg.type_attr) && !seen.empty()) {
      attrs[arg.type_attr] = seen.front();
    }
    if (!arg.type_list_attr.empty() && !attrs.count(arg.type_list_attr)) {
      attrs[arg.type_list_attr] = seen;
    }
    pos += count[a];
  }
  TFD_RETURN_IF_ERROR(CompleteAndCheckAttrs(def, attrs));
  TFD_ASSIGN_OR_RETURN(n.input_types, ArgTypes(def.inputs, attrs));
  TFD_ASSIGN_OR_RETURN(n.input_refs, ArgRefs(def.inputs, attrs));
  TFD_ASSIGN_OR_RETURN(n.output_types, ArgTypes(def.outputs, attrs));
  TFD_ASSIGN_OR_RETURN(n.output_refs, ArgRefs(def.outputs, attrs));
  if (static_cast<int>(n.input_types.size()) != total) {
    return errors::InvalidArgument("takes ", n.input_types.size(), " inputs but is given ", total);
  }

  std::vector<PartialShape> in_shapes;
  std::vector<const Tensor*> in_values;
  for (int k = 0; k < total; ++k) {
    const AnnotatedInput& e = inputs[k];
    const NodeAnnotation& src = *e.producer;
    const std::string& src_name = e.producer_def->name;
    if (e.port >= static_cast<int>(src.output_types.size())) {
      return errors::InvalidArgument("input ", k, " asks for output ", e.port, " of '", src_name,
                                     "' (", e.producer_def->op, "), which has ",
                                     src.output_types.size(), " outputs");
    }
    const DType got = src.output_types[e.port];
    if (got != n.input_types[k]) {
      return errors::InvalidArgument("input ", k, " ('", FormatInput({src_name, e.port, false}),
                                     "') is ", DTypeName(got), " but ", node.op, " expects ",
                                     DTypeName(n.input_types[k]), " there");
    }
    if (n.input_refs[k] && !src.output_refs[e.port]) {
      return errors::InvalidArgument("input ", k,
                                     " must be a reference (a variable or queue), but '", src_name,
                                     "' (", e.producer_def->op, ") produces a value");
    }
    in_shapes.push_back(src.output_shapes[e.port]);
    const Tensor& v = src.output_values[e.port];
    in_values.push_back(v.initialized() ? &v : nullptr);
  }
  InferenceContext ctx(attrs, std::move(in_shapes), n.input_types, std::move(in_values),
                       static_cast<int>(n.output_types.size()));
  if (n.reg->shape_fn) {
    Status s = n.reg->shape_fn(ctx);
    if (!s.ok()) return errors::InvalidArgument(s.message());
  }
  n.output_shapes = ctx.outputs();
  n.output_values = ctx.output_values();
  return n;
}

GraphDef Graph::ToGraphDef() const {
  GraphDef g;
  g.versions = versions_;
  for (const Node& n : nodes_) g.nodes.push_back(n.def);
  return g;
}

}  // namespace tfd
