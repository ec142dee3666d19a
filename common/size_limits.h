// SizeLimits: how large the tensors that a task accepts and makes may be, so
// that a request of a few bytes cannot make it allocate gigabytes.
//
// One value, filled by tfd's main from its flags (see docs/cli.md) and passed
// down explicitly; tfctl and tests use the defaults written here. Graph
// loading (graph_io.h) checks the tensors a graph carries in its attrs before
// allocating them; TensorFromProto checks any tensor it decodes; kernels'
// outputs are checked by OpKernelContext::allocate_output, which also charges
// the task's MemoryBudget (memory_budget.h).
//
//   SizeLimits limits;                                  // the defaults
//   limits.max_graph_tensor_bytes = uint64_t{1} << 30;  // a frozen model's weights
//   TFD_ASSIGN_OR_RETURN(GraphDef g, ParseGraph(bytes, "model.capnp", limits));
//
// Thread-safety: a value.
#pragma once

#include <cstdint>
#include <string>

#include "common/dtype.h"

namespace tfd {

struct SizeLimits {
  // The most bytes one tensor held in a graph's attr (a Const's value) may
  // take once decoded. A graph carries code and small constants: weights live
  // in variables, filled by initializers, restores or feeds on the task. A
  // typed value list shorter than its shape is repeated to fill it (as in
  // TensorFlow), so without this a 2 KB graph saying "shape [250000000],
  // floatVal [1]" makes the task allocate and fill 1 GB. 64 MiB still holds a
  // lookup table or a small frozen layer. tfd --max-graph-tensor-bytes.
  uint64_t max_graph_tensor_bytes = uint64_t{64} << 20;

  // The most bytes all attr tensors of one graph (a session's graph, each
  // extension of it, each partition a worker registers) may take together,
  // so that many constants under the per-tensor limit cannot add up to the
  // same. 256 MiB, an eighth of the 2 GB TensorFlow allows for a whole
  // GraphDef. tfd --max-graph-bytes.
  uint64_t max_graph_bytes = uint64_t{256} << 20;

  // The most bytes one tensor made at run time may take: a kernel's output
  // (OneHot with depth 2e9, Fill with huge dims) or a fed tensor decoded from
  // a request. 4 GiB: far above what training steps make (all of MNIST's
  // training images as float32 are 180 MiB), and a larger variable is what
  // partitioned variables across ps tasks are for. tfd --max-tensor-bytes.
  uint64_t max_tensor_bytes = uint64_t{4} << 30;
};

// The bytes `num_elements` elements of `dtype` take in memory (for strings,
// the std::string objects, not their characters); UINT64_MAX when that does
// not fit in 64 bits, which passes any limit.
uint64_t TensorBytes(DType dtype, int64_t num_elements);

// "4000 bytes" (exact below 1 MiB), "64 MiB", "953.7 MiB", "14.9 GiB": for
// messages.
std::string FormatBytes(uint64_t bytes);

}  // namespace tfd
