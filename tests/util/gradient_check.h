// Finite-difference gradient checks for kernel tests.
//
// A gradient kernel (ReluGrad, SigmoidGrad, BiasAddGrad, ...) computes the
// vector-Jacobian product dy^T * J of its forward op: the derivative of
// sum(f(x) * dy) with respect to one input. CheckGradient compares such an
// analytic result with central differences of the forward op, in float64:
//
//   TensorFunction relu = [&](const std::vector<Tensor>& in) -> StatusOr<Tensor> {
//     TFD_ASSIGN_OR_RETURN(auto out, RunOp(reg, "Relu", {{"T", DType::kFloat64}}, in));
//     return out[0];
//   };
//   Tensor analytic = RunOp(reg, "ReluGrad", attrs, {dy, x}).value()[0];
//   Status s = CheckGradient(relu, {x}, /*wrt=*/0, dy, analytic);
//   INFO(s.message());
//   CHECK(s.ok());
//
// Header-only, so any test executable can include it without build changes.
// Keep evaluation points away from kinks (Relu at 0): there the two one-sided
// derivatives differ and no analytic value can match.
#pragma once

#include <cmath>
#include <functional>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"

namespace tfd::testing {

// Maps float64 inputs to one float64 output (usually through RunOp).
using TensorFunction = std::function<StatusOr<Tensor>(const std::vector<Tensor>& inputs)>;

struct GradientCheckOptions {
  // Central differences err by O(delta^2) from truncation and by
  // O(eps * |f| / delta) from rounding; 1e-5 balances the two near 1e-10 for
  // well-scaled functions, far below the tolerances.
  double delta = 1e-5;
  // An element passes when |analytic - numeric| <= atol + rtol * |numeric|.
  double atol = 1e-6;
  double rtol = 1e-6;
};

// d/d inputs[wrt] of sum(f(inputs) * dy), by central differences. inputs[wrt],
// dy and f's output must be float64; dy must have f's output shape.
inline StatusOr<Tensor> NumericVjp(const TensorFunction& f, const std::vector<Tensor>& inputs,
                                   int wrt, const Tensor& dy, double delta) {
  if (wrt < 0 || wrt >= static_cast<int>(inputs.size())) {
    return errors::InvalidArgument("wrt = ", wrt, " but there are ", inputs.size(), " inputs");
  }
  if (inputs[wrt].dtype() != DType::kFloat64 || dy.dtype() != DType::kFloat64) {
    return errors::InvalidArgument("gradient checks need float64, got input ",
                                   inputs[wrt].Describe(), " and dy ", dy.Describe());
  }
  // Tensors share buffers on copy: perturb a private copy, never the caller's.
  std::vector<Tensor> args = inputs;
  TFD_ASSIGN_OR_RETURN(args[wrt], inputs[wrt].DeepCopy());
  TFD_ASSIGN_OR_RETURN(Tensor grad, Tensor::Allocate(DType::kFloat64, inputs[wrt].shape()));
  double* x = args[wrt].data<double>();

  auto weighted_sum = [&]() -> StatusOr<double> {
    TFD_ASSIGN_OR_RETURN(Tensor y, f(args));
    if (y.dtype() != DType::kFloat64 || !(y.shape() == dy.shape())) {
      return errors::InvalidArgument("f returned ", y.Describe(), " but dy is ", dy.Describe());
    }
    double sum = 0;
    for (int64_t i = 0; i < y.num_elements(); ++i)
      sum += y.data<double>()[i] * dy.data<double>()[i];
    return sum;
  };

  for (int64_t i = 0; i < args[wrt].num_elements(); ++i) {
    const double saved = x[i];
    x[i] = saved + delta;
    TFD_ASSIGN_OR_RETURN(double plus, weighted_sum());
    x[i] = saved - delta;
    TFD_ASSIGN_OR_RETURN(double minus, weighted_sum());
    x[i] = saved;
    grad.data<double>()[i] = (plus - minus) / (2 * delta);
  }
  return grad;
}

// OK when `analytic` (float64, the shape of inputs[wrt]) matches the numeric
// gradient of sum(f(inputs) * dy) element by element; otherwise
// INVALID_ARGUMENT naming the worst element and both values.
inline Status CheckGradient(const TensorFunction& f, const std::vector<Tensor>& inputs, int wrt,
                            const Tensor& dy, const Tensor& analytic,
                            const GradientCheckOptions& options = {}) {
  TFD_ASSIGN_OR_RETURN(Tensor numeric, NumericVjp(f, inputs, wrt, dy, options.delta));
  if (analytic.dtype() != DType::kFloat64 || !(analytic.shape() == numeric.shape())) {
    return errors::InvalidArgument("analytic gradient is ", analytic.Describe(), " but input ", wrt,
                                   " is ", inputs[wrt].Describe());
  }
  int64_t worst = -1;
  double worst_excess = 0;
  for (int64_t i = 0; i < numeric.num_elements(); ++i) {
    const double a = analytic.data<double>()[i], n = numeric.data<double>()[i];
    const double excess = std::abs(a - n) - (options.atol + options.rtol * std::abs(n));
    // A NaN on either side is a failure, never silently within tolerance.
    if (!(excess <= 0) && (worst < 0 || !(excess <= worst_excess))) {
      worst = i;
      worst_excess = excess;
      if (std::isnan(excess)) break;
    }
  }
  if (worst < 0) return OkStatus();
  return errors::InvalidArgument("gradient of input ", wrt, " differs at flat index ", worst,
                                 ": analytic ", analytic.data<double>()[worst], " vs numeric ",
                                 numeric.data<double>()[worst], " (tolerance ", options.atol, " + ",
                                 options.rtol, " * |numeric|)");
}

}  // namespace tfd::testing
