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

// A FIFOQueue of float32 scalars on `device` holding up to `capacity`,
// shared by `shared_name` (empty: by its node name), and a dequeue of one.
inline NodeDef ScalarQueue(std::string name, std::string device, int64_t capacity,
                           std::string shared_name = "") {
  AttrMap attrs = {{"component_types", std::vector<DType>{DType::kFloat32}},
                   {"shapes", std::vector<PartialShape>{PartialShape({})}},
                   {"capacity", capacity}};
  if (!shared_name.empty()) attrs["shared_name"] = std::move(shared_name);
  return Node(std::move(name), "FIFOQueue", {}, std::move(device), std::move(attrs));
}
inline NodeDef ScalarDequeue(std::string name, std::string queue, std::string device = "") {
  return Node(std::move(name), "QueueDequeue", {std::move(queue)}, std::move(device),
              {{"component_types", std::vector<DType>{DType::kFloat32}}});
}

// w (4x4) on the ps; each step the worker computes y = x w and the gradient
// of |y|^2 / 2, x^T y, and the ps applies it (SGD): the shape of a training
// step, MatMuls on the worker and the update on the ps. Targets: "init",
// then "apply" per step (fetch it for w after the step). A queue on the ps
// for a step that waits there: "take" (fetch "taken") waits until "put".
inline GraphDef SgdQueueGraph() {
  std::vector<float> w0(16), x(12);
  for (int i = 0; i < 16; ++i) w0[i] = 0.05f * static_cast<float>(i % 7) - 0.1f;
  for (int i = 0; i < 12; ++i) x[i] = 0.1f * static_cast<float>(i % 5) + 0.2f;
  GraphDef g;
  g.nodes = {
      Node("w", "VariableV2", {}, "/job:ps",
           {{"dtype", DType::kFloat32}, {"shape", PartialShape({4, 4})}}),
      ConstOf("w0", Tensor::FromVector<float>(w0, TensorShape({4, 4})), "/job:ps"),
      Node("init", "Assign", {"w", "w0"}, "/job:ps"),
      ConstOf("x", Tensor::FromVector<float>(x, TensorShape({3, 4})), "/job:worker"),
      Node("y", "MatMul", {"x", "w"}, "/job:worker"),
      Node("grad", "MatMul", {"x", "y"}, "/job:worker", {{"transpose_a", true}}),
      Const("rate", 0.05f, "/job:ps"),
      Node("apply", "ApplyGradientDescent", {"w", "rate", "grad"}, "/job:ps"),
      ScalarQueue("queue", "/job:ps", 2),
      Const("five", 5.0f, "/job:ps"),
      Node("put", "QueueEnqueue", {"queue", "five"}, "/job:ps"),
      ScalarDequeue("take", "queue", "/job:ps"),
      Node("taken", "Identity", {"take"}, "/job:worker"),
  };
  return g;
}

// A queue "work" (float32 scalars, capacity 10) on the ps: `taken` dequeues
// on the ps and crosses to the worker, so a step fetching it runs on both
// tasks and blocks while the queue is empty; `put` enqueues 42 and `size`
// counts what is held.
inline GraphDef QueueGraph() {
  GraphDef g;
  g.nodes = {
      ScalarQueue("queue", "/job:ps", 10, "work"),
      ScalarDequeue("take", "queue"),
      Node("taken", "Identity", {"take"}, "/job:worker"),
      Const("v", 42.0f, "/job:ps"),
      Node("put", "QueueEnqueue", {"queue", "v"}, ""),
      Node("size", "QueueSize", {"queue"}, ""),
  };
  return g;
}

}  // namespace tfd::testing
