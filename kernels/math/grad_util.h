// Small graph-building helpers for the gradient functions of every family
// (math_grad.cc, nn/nn_grad.cc, array/array_grad.cc): one call per node, and
// the shape arithmetic gradients share (undoing a broadcast, re-expanding a
// reduction). Shapes known at graph time become constants; unknown ones are
// computed in the graph.
//
//   Output gx = Mul(s, dy, Reciprocal(s, x));
//   auto [rx, ry] = SumBroadcast(s, x, y, gx_full, gy_full);
//
// Invalid inputs propagate: a helper given an invalid Output returns one and
// the scope holds the error, as with Scope::AddOp.
#pragma once

#include <utility>
#include <vector>

#include "common/gradients.h"

namespace tfd::kernels::grad {

// Output 0 of a new node.
Output Op(const Scope& s, const std::string& op, const std::vector<Output>& inputs,
          AttrMap attrs = {});

Output Const(const Scope& s, Tensor value);
Output IntVector(const Scope& s, const std::vector<int64_t>& v);  // int32
Output IntScalar(const Scope& s, int64_t v);                      // int32
// A scalar of dtype `like.dtype` (a float type).
Output ScalarLike(const Scope& s, double v, const Output& like);

// x's shape as an int32 vector: a constant when known at graph time.
Output ShapeOf(const Scope& s, const Output& x);
Output Reshape(const Scope& s, const Output& x, const Output& shape);
// Reshape to `like`'s shape.
Output ReshapeLike(const Scope& s, const Output& x, const Output& like);
Output Sum(const Scope& s, const Output& x, const Output& axes, bool keep_dims = false);
Output Cast(const Scope& s, const Output& x, DType to);

Output Add(const Scope& s, const Output& x, const Output& y);
Output Sub(const Scope& s, const Output& x, const Output& y);
Output Mul(const Scope& s, const Output& x, const Output& y);
Output Div(const Scope& s, const Output& x, const Output& y);
Output Neg(const Scope& s, const Output& x);
Output ZerosLike(const Scope& s, const Output& x);

// Gradients of a broadcasting binary op z = f(x, y): gx and gy shaped like
// z are summed over the broadcast axes and reshaped to x's and y's shapes
// (TensorFlow's BroadcastGradientArgs pattern). Invalid gradients pass
// through as invalid.
std::pair<Output, Output> SumBroadcast(const Scope& s, const Output& x, const Output& y,
                                       const Output& gx, const Output& gy);

// The shape of x after reducing over `axes` with keep_dims: x's shape with
// 1 in each reduced dimension (an int32 vector).
Output KeptShape(const Scope& s, const Output& x, const Output& axes);
// dy (the gradient of a reduction of x over axes) spread back over x's
// shape: each element of x gets the dy of the slot it was reduced into.
Output SpreadReduction(const Scope& s, const Output& x, const Output& axes, const Output& dy);

// Registers fn as the gradient of op; used by each family's Register*Gradients.
Status Register(OpRegistry& r, const std::string& op, GradFn fn);

}  // namespace tfd::kernels::grad
