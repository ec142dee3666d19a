// The Apply* cases: each updates variables in place, so both sides keep
// their own state across calls, and the check first copies tfd's state
// into the hand-written side's.
#include <cmath>
#include <memory>

#include "bench/kernel_cases_internal.h"
#include "kernels/state/variable.h"

namespace tfd::bench::cases_internal {
namespace {

using kernels::Variable;
using HandUpdate = std::function<void(std::vector<Matrix>&)>;

// TensorFlow's Adam defaults, and the hyper-parameters' values as scalars.
constexpr float kLr = 0.001f, kMomentum = 0.9f, kBeta1 = 0.9f, kBeta2 = 0.999f, kEpsilon = 1e-7f;
constexpr float kBeta1Power = 0.9f * 0.9f, kBeta2Power = 0.999f * 0.999f;

StatusOr<std::shared_ptr<Variable>> NewVariable(const std::string& name, const Tensor& init) {
  auto v = std::make_shared<Variable>("", name, DType::kFloat32, PartialShape(init.shape().dims()));
  TFD_RETURN_IF_ERROR(v->Assign(init, /*validate_shape=*/true));
  return v;
}

Value Ref(std::shared_ptr<Variable> v) { return Value{Tensor(), std::move(v)}; }
Value Scalar(float x) { return Val(Tensor::Scalar<float>(x)); }

// `vars` are the op's variables in input order; `hand` holds the
// hand-written side's copies of them, which `update` changes in place.
KernelCase MakeUpdate(std::string op, std::string shapes, std::string role,
                      std::unique_ptr<KernelHarness> tfd,
                      std::vector<std::shared_ptr<Variable>> vars, HandUpdate update) {
  auto hand = std::make_shared<std::vector<Matrix>>();
  for (const auto& v : vars) hand->push_back(Copy(*v->Read()));
  KernelCase c;
  c.op = std::move(op);
  c.shapes = std::move(shapes);
  c.role = std::move(role);
  KernelHarness* k = tfd.get();
  c.tfd = std::move(tfd);
  c.hand = [hand, update] { update(*hand); };
  c.check = [hand, update, k, vars]() -> StatusOr<double> {
    // Each Read() is dropped at once: a snapshot held across the update
    // would make the kernel copy the variable instead of writing in place.
    for (size_t i = 0; i < vars.size(); ++i) {
      TFD_ASSIGN_OR_RETURN(Tensor now, vars[i]->Read());
      (*hand)[i] = Copy(now);
    }
    update(*hand);
    TFD_RETURN_IF_ERROR(k->Run());
    double worst = 0;
    for (size_t i = 0; i < vars.size(); ++i) {
      TFD_ASSIGN_OR_RETURN(Tensor after, vars[i]->Read());
      worst = std::max(worst, RelativeDifference(after, (*hand)[i]));
    }
    return worst;
  };
  return c;
}

Status AddGradientDescent(std::vector<KernelCase>& cases, const OpRegistry& r, const KernelEnv& env,
                          std::mt19937& rng, TensorShape shape, const char* role) {
  TFD_ASSIGN_OR_RETURN(auto var, NewVariable("gd", Uniform(rng, shape, -1, 1)));
  const Tensor delta = Uniform(rng, shape, -1, 1);
  TFD_ASSIGN_OR_RETURN(auto k, KernelHarness::Create(r, env, "ApplyGradientDescent", kF32,
                                                     {Ref(var), Scalar(kLr), Val(delta)}));
  cases.push_back(MakeUpdate("ApplyGradientDescent", ShapeOf(delta), role, std::move(k), {var},
                             [D = Copy(delta)](std::vector<Matrix>& v) { v[0] -= kLr * D; }));
  return OkStatus();
}

Status AddMomentum(std::vector<KernelCase>& cases, const OpRegistry& r, const KernelEnv& env,
                   std::mt19937& rng, TensorShape shape) {
  TFD_ASSIGN_OR_RETURN(auto var, NewVariable("momentum_var", Uniform(rng, shape, -1, 1)));
  TFD_ASSIGN_OR_RETURN(auto accum, NewVariable("momentum_accum", Uniform(rng, shape, -1, 1)));
  const Tensor grad = Uniform(rng, shape, -1, 1);
  TFD_ASSIGN_OR_RETURN(auto k, KernelHarness::Create(r, env, "ApplyMomentum", kF32,
                                                     {Ref(var), Ref(accum), Scalar(kLr), Val(grad),
                                                      Scalar(kMomentum)}));
  cases.push_back(MakeUpdate("ApplyMomentum", ShapeOf(grad), "other optimizers", std::move(k),
                             {var, accum}, [G = Copy(grad)](std::vector<Matrix>& v) {
                               v[1] = v[1] * kMomentum + G;
                               v[0] -= kLr * v[1];
                             }));
  return OkStatus();
}

Status AddAdam(std::vector<KernelCase>& cases, const OpRegistry& r, const KernelEnv& env,
               std::mt19937& rng, TensorShape shape) {
  TFD_ASSIGN_OR_RETURN(auto var, NewVariable("adam_var", Uniform(rng, shape, -1, 1)));
  TFD_ASSIGN_OR_RETURN(auto m, NewVariable("adam_m", Uniform(rng, shape, -1, 1)));
  TFD_ASSIGN_OR_RETURN(auto v, NewVariable("adam_v", Uniform(rng, shape, 0, 1)));
  const Tensor grad = Uniform(rng, shape, -1, 1);
  TFD_ASSIGN_OR_RETURN(
      auto k, KernelHarness::Create(
                  r, env, "ApplyAdam", kF32,
                  {Ref(var), Ref(m), Ref(v), Scalar(kBeta1Power), Scalar(kBeta2Power), Scalar(kLr),
                   Scalar(kBeta1), Scalar(kBeta2), Scalar(kEpsilon), Val(grad)}));
  cases.push_back(MakeUpdate("ApplyAdam", ShapeOf(grad), "the strong model", std::move(k),
                             {var, m, v}, [G = Copy(grad)](std::vector<Matrix>& s) {
                               const float lr_t =
                                   kLr * std::sqrt(1.f - kBeta2Power) / (1.f - kBeta1Power);
                               auto var = s[0].array();
                               auto mm = s[1].array();
                               auto vv = s[2].array();
                               mm += (G.array() - mm) * (1.f - kBeta1);
                               vv += (G.array().square() - vv) * (1.f - kBeta2);
                               var -= lr_t * mm / (vv.sqrt() + kEpsilon);
                             }));
  return OkStatus();
}

}  // namespace

Status AddOptimizerCases(std::vector<KernelCase>& cases, const OpRegistry& r, const KernelEnv& env,
                         std::mt19937& rng) {
  TFD_RETURN_IF_ERROR(
      AddGradientDescent(cases, r, env, rng, {kPixels, kHidden}, "update w1"));
  TFD_RETURN_IF_ERROR(AddGradientDescent(cases, r, env, rng, {kHidden}, "update b1"));
  TFD_RETURN_IF_ERROR(AddMomentum(cases, r, env, rng, {kPixels, kHidden}));
  TFD_RETURN_IF_ERROR(AddAdam(cases, r, env, rng, {kPixels, kHidden}));
  return OkStatus();
}

}  // namespace tfd::bench::cases_internal
