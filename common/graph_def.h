// GraphDef in memory: the plain form of schemas/graph.capnp that the rest of
// the runtime edits (pruning, partitioning, rewriting). It is not validated:
// common/graph.h turns it into a checked Graph.
//
//   GraphDef g;
//   g.nodes.push_back({.name = "a", .op = "Const", .attrs = {{"value", Tensor::Scalar(1.0f)},
//                                                           {"dtype", DType::kFloat32}}});
//   g.nodes.push_back({.name = "b", .op = "Identity", .inputs = {"a"}});
#pragma once

#include <string>
#include <vector>

#include "common/attr_value.h"
#include "common/graph_versions.h"
#include "common/status.h"

namespace tfd {

struct NodeDef {
  std::string name;
  std::string op;
  std::vector<std::string> inputs;  // "name", "name:port", "^name"
  std::string device;               // partial device spec, "" = unconstrained
  AttrMap attrs;
};

struct GraphDef {
  std::vector<NodeDef> nodes;
  GraphVersions versions;  // this build's, unless the graph was loaded (common/graph_versions.h)
};

// A parsed input string.
struct InputRef {
  std::string node;
  int port = 0;
  bool control = false;
};

// "a" -> {a, 0}; "a:1" -> {a, 1}; "^a" -> control. INVALID_ARGUMENT for an
// empty name, a bad port or a control input with a port.
StatusOr<InputRef> ParseInput(const std::string& input);
std::string FormatInput(const InputRef& ref);

// A tensor name as users write it in --fetch / --feed: "name" or "name:port".
struct TensorId {
  std::string node;
  int port = 0;
  std::string ToString() const { return node + ":" + std::to_string(port); }
  auto operator<=>(const TensorId&) const = default;
};
StatusOr<TensorId> ParseTensorId(const std::string& name);

}  // namespace tfd
