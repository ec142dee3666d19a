#include "bench/kernel_cases.h"

#include <algorithm>

#include "bench/kernel_cases_internal.h"

namespace tfd::bench {
namespace cases_internal {

KernelCase MakePure(std::string op, std::string shapes, std::string role,
                    std::unique_ptr<KernelHarness> tfd, std::shared_ptr<Pure> state,
                    std::function<void(Pure&)> compute) {
  KernelCase c;
  c.op = std::move(op);
  c.shapes = std::move(shapes);
  c.role = std::move(role);
  KernelHarness* k = tfd.get();
  c.tfd = std::move(tfd);
  c.hand = [state, compute] { compute(*state); };
  c.check = [state, compute, k]() -> StatusOr<double> {
    compute(*state);
    TFD_ASSIGN_OR_RETURN(std::vector<Value> out, k->RunAndKeep());
    double worst = 0;
    for (size_t i = 0; i < state->outputs.size() && i < out.size(); ++i) {
      worst = std::max(worst, RelativeDifference(out[i].tensor, state->outputs[i]));
    }
    return worst;
  };
  return c;
}

}  // namespace cases_internal

namespace {

using namespace cases_internal;

Status AddMatMul(std::vector<KernelCase>& cases, const OpRegistry& r, const KernelEnv& env,
                 std::mt19937& rng, TensorShape a_shape, TensorShape b_shape, bool ta, bool tb,
                 const char* role) {
  Tensor a = Uniform(rng, a_shape, -1, 1), b = Uniform(rng, b_shape, -1, 1);
  TFD_ASSIGN_OR_RETURN(
      auto k,
      KernelHarness::Create(r, env, "MatMul",
                            {{"T", DType::kFloat32}, {"transpose_a", ta}, {"transpose_b", tb}},
                            {Val(a), Val(b)}));
  auto s = std::make_shared<Pure>();
  s->outputs.emplace_back(ta ? a.dim(1) : a.dim(0), tb ? b.dim(0) : b.dim(1));
  const std::string shapes = ShapeOf(a) + (ta ? "^T" : "") + " x " + ShapeOf(b) + (tb ? "^T" : "");
  cases.push_back(MakePure("MatMul", shapes, role, std::move(k), s,
                           [A = Copy(a), B = Copy(b), ta, tb](Pure& p) {
                             Matrix& C = p.outputs[0];
                             if (ta && !tb)
                               C.noalias() = A.transpose() * B;
                             else if (!ta && tb)
                               C.noalias() = A * B.transpose();
                             else if (ta && tb)
                               C.noalias() = A.transpose() * B.transpose();
                             else
                               C.noalias() = A * B;
                           }));
  return OkStatus();
}

Status AddBias(std::vector<KernelCase>& cases, const OpRegistry& r, const KernelEnv& env,
               std::mt19937& rng, int64_t rows, int64_t cols, const char* role) {
  Tensor x = Uniform(rng, {rows, cols}, -1, 1), b = Uniform(rng, {cols}, -1, 1);
  TFD_ASSIGN_OR_RETURN(auto k, KernelHarness::Create(r, env, "BiasAdd", kF32, {Val(x), Val(b)}));
  auto s = std::make_shared<Pure>();
  s->outputs.emplace_back(rows, cols);
  cases.push_back(MakePure(
      "BiasAdd", ShapeOf(x) + " + " + ShapeOf(b), role, std::move(k), s,
      [X = Copy(x), B = Row(Copy(b))](Pure& p) { p.outputs[0].noalias() = X.rowwise() + B; }));
  return OkStatus();
}

Status AddBiasGrad(std::vector<KernelCase>& cases, const OpRegistry& r, const KernelEnv& env,
                   std::mt19937& rng, int64_t rows, int64_t cols, const char* role) {
  Tensor g = Uniform(rng, {rows, cols}, -1, 1);
  TFD_ASSIGN_OR_RETURN(auto k, KernelHarness::Create(r, env, "BiasAddGrad", kF32, {Val(g)}));
  auto s = std::make_shared<Pure>();
  s->outputs.emplace_back(1, cols);
  cases.push_back(MakePure("BiasAddGrad", ShapeOf(g), role, std::move(k), s,
                           [G = Copy(g)](Pure& p) { p.outputs[0].noalias() = G.colwise().sum(); }));
  return OkStatus();
}

// Element-wise y = f(x) on the hidden layer's shape.
Status AddUnary(std::vector<KernelCase>& cases, const OpRegistry& r, const KernelEnv& env,
                std::mt19937& rng, const char* op, std::function<void(const Matrix&, Matrix&)> f,
                const char* role) {
  Tensor x = Uniform(rng, {kBatch, kHidden}, -4, 4);
  TFD_ASSIGN_OR_RETURN(auto k, KernelHarness::Create(r, env, op, kF32, {Val(x)}));
  auto s = std::make_shared<Pure>();
  s->outputs.emplace_back(kBatch, kHidden);
  cases.push_back(MakePure(op, ShapeOf(x), role, std::move(k), s,
                           [X = Copy(x), f](Pure& p) { f(X, p.outputs[0]); }));
  return OkStatus();
}

// Element-wise z = f(a, b), inputs in the op's order.
Status AddBinary(std::vector<KernelCase>& cases, const OpRegistry& r, const KernelEnv& env,
                 std::mt19937& rng, const char* op, float a_lo, float a_hi, float b_lo, float b_hi,
                 std::function<void(const Matrix&, const Matrix&, Matrix&)> f, const char* role) {
  Tensor a = Uniform(rng, {kBatch, kHidden}, a_lo, a_hi);
  Tensor b = Uniform(rng, {kBatch, kHidden}, b_lo, b_hi);
  TFD_ASSIGN_OR_RETURN(auto k, KernelHarness::Create(r, env, op, kF32, {Val(a), Val(b)}));
  auto s = std::make_shared<Pure>();
  s->outputs.emplace_back(kBatch, kHidden);
  cases.push_back(MakePure(op, ShapeOf(a) + ", " + ShapeOf(b), role, std::move(k), s,
                           [A = Copy(a), B = Copy(b), f](Pure& p) { f(A, B, p.outputs[0]); }));
  return OkStatus();
}

Status AddXent(std::vector<KernelCase>& cases, const OpRegistry& r, const KernelEnv& env,
               std::mt19937& rng) {
  Tensor logits = Uniform(rng, {kBatch, kClasses}, -8, 8);
  Tensor labels = OneHot(rng, kBatch, kClasses);
  TFD_ASSIGN_OR_RETURN(auto k, KernelHarness::Create(r, env, "SoftmaxCrossEntropyWithLogits", kF32,
                                                     {Val(logits), Val(labels)}));
  auto s = std::make_shared<Pure>();
  s->outputs.emplace_back(kBatch, 1);         // loss
  s->outputs.emplace_back(kBatch, kClasses);  // backprop
  cases.push_back(
      MakePure("SoftmaxCrossEntropyWithLogits", ShapeOf(logits) + ", " + ShapeOf(labels), "loss",
               std::move(k), s, [Z = Copy(logits), Y = Copy(labels)](Pure& p) {
                 // The max-shifted, dense-label form the op computes (rows of Y are
                 // distributions), written the way Eigen reads best.
                 Matrix& loss = p.outputs[0];
                 Matrix& backprop = p.outputs[1];
                 const Eigen::ArrayXf max = Z.array().rowwise().maxCoeff();
                 backprop.array() = Z.array().colwise() - max;
                 const Eigen::ArrayXf lse = backprop.array().exp().rowwise().sum().log();
                 loss.array() =
                     ((-backprop.array()).colwise() + lse).cwiseProduct(Y.array()).rowwise().sum();
                 backprop.array() = (backprop.array().colwise() - lse).exp() - Y.array();
               }));
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<KernelCase>> ClassicKernelCases(const OpRegistry& r, const KernelEnv& env) {
  std::mt19937 rng(1);
  std::vector<KernelCase> cases;
  // MatMul: the forward products, then the gradients' (autodiff's
  // transposes, as api/ builds them).
  TFD_RETURN_IF_ERROR(AddMatMul(cases, r, env, rng, {kBatch, kPixels}, {kPixels, kHidden}, false,
                                false, "layer 1, forward"));
  TFD_RETURN_IF_ERROR(AddMatMul(cases, r, env, rng, {kBatch, kHidden}, {kHidden, kClasses}, false,
                                false, "layer 2, forward"));
  TFD_RETURN_IF_ERROR(AddMatMul(cases, r, env, rng, {kBatch, kClasses}, {kHidden, kClasses}, false,
                                true, "layer 2, d input"));
  TFD_RETURN_IF_ERROR(AddMatMul(cases, r, env, rng, {kBatch, kHidden}, {kBatch, kClasses}, true,
                                false, "layer 2, d weights"));
  TFD_RETURN_IF_ERROR(AddMatMul(cases, r, env, rng, {kBatch, kPixels}, {kBatch, kHidden}, true,
                                false, "layer 1, d weights"));
  TFD_RETURN_IF_ERROR(AddBias(cases, r, env, rng, kBatch, kHidden, "layer 1, forward"));
  TFD_RETURN_IF_ERROR(AddBias(cases, r, env, rng, kBatch, kClasses, "layer 2, forward"));
  TFD_RETURN_IF_ERROR(AddBiasGrad(cases, r, env, rng, kBatch, kHidden, "layer 1, d bias"));
  TFD_RETURN_IF_ERROR(AddBiasGrad(cases, r, env, rng, kBatch, kClasses, "layer 2, d bias"));
  TFD_RETURN_IF_ERROR(AddUnary(
      cases, r, env, rng, "Sigmoid",
      [](const Matrix& x, Matrix& y) { y.array() = 1.f / (1.f + (-x.array()).exp()); },
      "layer 1, forward"));
  TFD_RETURN_IF_ERROR(AddBinary(
      cases, r, env, rng, "SigmoidGrad", 0, 1, -1, 1,
      [](const Matrix& y, const Matrix& dy, Matrix& z) {
        z.array() = dy.array() * y.array() * (1.f - y.array());
      },
      "layer 1, d pre-activation"));
  TFD_RETURN_IF_ERROR(AddUnary(
      cases, r, env, rng, "Relu",
      [](const Matrix& x, Matrix& y) { y.array() = x.array().max(0.f); }, "the strong model"));
  TFD_RETURN_IF_ERROR(AddBinary(
      cases, r, env, rng, "ReluGrad", -1, 1, -4, 4,
      [](const Matrix& g, const Matrix& x, Matrix& z) {
        z.array() = (x.array() > 0.f).select(g.array(), 0.f);
      },
      "the strong model"));
  TFD_RETURN_IF_ERROR(AddUnary(
      cases, r, env, rng, "Tanh", [](const Matrix& x, Matrix& y) { y.array() = x.array().tanh(); },
      "(not in the models)"));
  TFD_RETURN_IF_ERROR(AddBinary(
      cases, r, env, rng, "TanhGrad", -1, 1, -1, 1,
      [](const Matrix& y, const Matrix& dy, Matrix& z) {
        z.array() = dy.array() * (1.f - y.array().square());
      },
      "(not in the models)"));
  TFD_RETURN_IF_ERROR(AddXent(cases, r, env, rng));
  TFD_RETURN_IF_ERROR(AddOptimizerCases(cases, r, env, rng));
  return cases;
}

}  // namespace tfd::bench
