// Graph: a GraphDef checked against the op registry and annotated.
//
// Build() first checks the graph's versions (CheckGraphVersions: a graph
// that needs a newer tfd, or one this tfd no longer runs, is refused with
// FAILED_PRECONDITION naming both graph versions). It then refuses, with
// INVALID_ARGUMENT (NOT_FOUND for an unknown op) naming the node: duplicate
// or empty names, inputs that name a missing node or
// port, cycles (but those through a NextIteration -> Merge edge, which
// closes a while loop), unknown ops, missing or mistyped attrs, dtype mismatches
// between producer and consumer, a value where a reference is required, and
// shape mismatches that inference can prove. Type attrs left out of a node
// ("T", "N", type lists) are inferred from its inputs, so hand-written graphs
// need not repeat what their inputs already say. In a graph written by a
// newer tfd, an unknown op or an attr its op lacks here is
// FAILED_PRECONDITION instead, naming both graph versions: this tfd is the
// one to upgrade.
//
//   TFD_ASSIGN_OR_RETURN(Graph g, Graph::Build(def, registry));
//   for (int id : g.topo_order()) { const Graph::Node& n = g.node(id); ... }
//
// Thread-safety: immutable after Build; share freely.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/graph_def.h"
#include "common/op_registry.h"

namespace tfd {

// What checking one node against the registry yields: its op and the
// dtypes, reference flags, shapes and graph-time values of its inputs and
// outputs. Graph::Build computes it for every node; the graph builder
// (common/scope.h) for each node as it is added.
struct NodeAnnotation {
  const OpRegistration* reg = nullptr;
  std::vector<DType> input_types, output_types;
  std::vector<bool> input_refs, output_refs;
  std::vector<PartialShape> output_shapes;
  std::vector<Tensor> output_values;  // known at graph time, else uninitialized
};

// One data input of a node being annotated: the producing node (for its name
// and op in messages), its annotation, and the output port read.
struct AnnotatedInput {
  const NodeDef* producer_def = nullptr;
  const NodeAnnotation* producer = nullptr;
  int port = 0;
};

// Checks `def` given the producers of its data inputs, in order (each already
// annotated): fills in default attrs and type/count attrs inferred from the
// inputs (completing def.attrs in place), checks dtypes and references, and
// runs the op's shape function. Errors do not name the node: callers prefix
// it. NOT_FOUND for an unknown op, INVALID_ARGUMENT otherwise.
StatusOr<NodeAnnotation> AnnotateNode(NodeDef& def, const OpRegistry& registry,
                                      const std::vector<AnnotatedInput>& inputs);

class Graph {
 public:
  struct Edge {
    int node = -1;  // producer (for inputs) or consumer (for outputs)
    int port = 0;   // producer's output port, or consumer's input index
  };
  // The annotation's fields (reg, input_types, output_shapes, ...) are the
  // node's own, as for any member.
  struct Node : NodeAnnotation {
    NodeDef def;  // attrs completed: defaults and inferred type attrs filled in
    std::vector<Edge> inputs;          // data inputs, in order: {producer, output port}
    std::vector<int> control_inputs;   // producers of control edges
    std::vector<Edge> consumers;       // data consumers: {consumer, input index}
    std::vector<int> control_consumers;
    const std::string& name() const { return def.name; }
    const std::string& op() const { return def.op; }
  };

  static StatusOr<Graph> Build(GraphDef def, const OpRegistry& registry);

  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const Node& node(int id) const { return nodes_[id]; }
  const std::vector<Node>& nodes() const { return nodes_; }
  // -1 when absent.
  int FindNode(const std::string& name) const;
  // Every node after all of its inputs (data and control), but a Merge
  // before the NextIteration that feeds it a loop's back edge.
  const std::vector<int>& topo_order() const { return topo_; }
  // The completed definition (attrs filled in), in the original node order.
  GraphDef ToGraphDef() const;
  // The versions of the GraphDef it was built from.
  const GraphVersions& versions() const { return versions_; }

 private:
  Status Index(GraphDef def);
  Status Sort();
  Status Annotate(const OpRegistry& registry);
  Status AnnotateNode(Node& n, const OpRegistry& registry);

  std::vector<Node> nodes_;
  std::map<std::string, int> by_name_;
  std::vector<int> topo_;
  GraphVersions versions_;
};

}  // namespace tfd
