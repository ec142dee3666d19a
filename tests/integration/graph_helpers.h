// Short ways to write the nodes of the small graphs integration tests run.
//
//   GraphDef g;
//   g.nodes = {Const("x", 2.0f, "/job:ps"), Node("y", "Add", {"x", "x"}, "/job:worker")};
//
// Thread-safety: plain functions.
#pragma once

#include <string>
#include <vector>

#include "common/graph_def.h"

namespace tfd::testing {

inline NodeDef Node(std::string name, std::string op, std::vector<std::string> inputs,
                    std::string device, AttrMap attrs = {}) {
  return NodeDef{std::move(name), std::move(op), std::move(inputs), std::move(device),
                 std::move(attrs)};
}

inline NodeDef Const(std::string name, float v, std::string device = "") {
  return Node(std::move(name), "Const", {}, std::move(device),
              {{"value", Tensor::Scalar(v)}, {"dtype", DType::kFloat32}});
}

inline NodeDef ConstOf(std::string name, Tensor value, std::string device) {
  const DType dtype = value.dtype();
  return Node(std::move(name), "Const", {}, std::move(device), {{"value", value}, {"dtype", dtype}});
}

}  // namespace tfd::testing
