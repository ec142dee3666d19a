// The optimizer updates against float64 reference arithmetic written out
// here, over several steps so that the slot variables' state matters.
#include <cmath>

#include "tests/kernels/state/state_test_util.h"

namespace tfd::testing {
namespace {

using kernels::Variable;
using Vec = std::vector<double>;

template <typename T>
Tensor Make(const Vec& v, const TensorShape& shape) {
  std::vector<T> cast(v.begin(), v.end());
  return Tensor::FromVector<T>(cast, shape);
}

template <typename T>
void CheckClose(const Tensor& got, const Vec& want, double rel) {
  REQUIRE(got.num_elements() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(static_cast<double>(got.data<T>()[i]) == Approx(want[i]).epsilon(rel).margin(rel));
  }
}

// The shapes each test runs on: a matrix, a scalar and an empty tensor.
struct Case {
  TensorShape shape;
  Vec var0;
  std::vector<Vec> grads;  // one per step
};

std::vector<Case> Cases() {
  return {
      {TensorShape({2, 3}),
       {0.5, -1.0, 2.0, 0.0, 3.5, -0.25},
       {{0.1, -0.2, 0.3, 1.0, -1.5, 0.05},
        {0.2, 0.2, -0.1, 0.5, 0.0, -0.3},
        {-1, 1, 0.5, 0.25, 2, 0}}},
      {TensorShape({}), {1.0}, {{0.5}, {-0.25}, {2.0}}},
      {TensorShape({0, 2}), {}, {{}, {}, {}}},
  };
}

template <typename T>
void RunGradientDescent(double rel) {
  for (const Case& c : Cases()) {
    StateTestEnv e;
    const DType dt = DTypeOf<T>::value;
    auto var = e.NewVariable("w", dt, c.shape);
    e.Assign(var, Make<T>(c.var0, c.shape));
    Vec ref = c.var0;
    const double alpha = 0.1;
    for (const Vec& g : c.grads) {
      auto out = e.Run("ApplyGradientDescent", {{"T", dt}},
                       {StateTestEnv::Ref(var), StateTestEnv::Val(Tensor::Scalar<T>(T(alpha))),
                        StateTestEnv::Val(Make<T>(g, c.shape))});
      REQUIRE(out.ok());
      CHECK((*out)[0].ref == var);
      for (size_t i = 0; i < ref.size(); ++i) ref[i] -= alpha * g[i];
    }
    CheckClose<T>(*var->Read(), ref, rel);
  }
}

template <typename T>
void RunMomentum(bool nesterov, double rel) {
  for (const Case& c : Cases()) {
    StateTestEnv e;
    const DType dt = DTypeOf<T>::value;
    auto var = e.NewVariable("w", dt, c.shape);
    auto accum = e.NewVariable("w/Momentum", dt, c.shape);
    e.Assign(var, Make<T>(c.var0, c.shape));
    e.Assign(accum, Make<T>(Vec(c.var0.size(), 0.0), c.shape));
    Vec w = c.var0, a(c.var0.size(), 0.0);
    const double lr = 0.05, momentum = 0.9;
    for (const Vec& g : c.grads) {
      auto out = e.Run(
          "ApplyMomentum", {{"T", dt}, {"use_nesterov", nesterov}},
          {StateTestEnv::Ref(var), StateTestEnv::Ref(accum),
           StateTestEnv::Val(Tensor::Scalar<T>(T(lr))), StateTestEnv::Val(Make<T>(g, c.shape)),
           StateTestEnv::Val(Tensor::Scalar<T>(T(momentum)))});
      REQUIRE(out.ok());
      for (size_t i = 0; i < w.size(); ++i) {
        a[i] = a[i] * momentum + g[i];
        w[i] -= nesterov ? g[i] * lr + a[i] * momentum * lr : lr * a[i];
      }
    }
    CheckClose<T>(*var->Read(), w, rel);
    CheckClose<T>(*accum->Read(), a, rel);
  }
}

template <typename T>
void RunAdam(bool nesterov, double rel) {
  for (const Case& c : Cases()) {
    StateTestEnv e;
    const DType dt = DTypeOf<T>::value;
    auto var = e.NewVariable("w", dt, c.shape);
    auto m = e.NewVariable("w/Adam", dt, c.shape);
    auto v = e.NewVariable("w/Adam_1", dt, c.shape);
    const Vec zeros(c.var0.size(), 0.0);
    e.Assign(var, Make<T>(c.var0, c.shape));
    e.Assign(m, Make<T>(zeros, c.shape));
    e.Assign(v, Make<T>(zeros, c.shape));
    Vec w = c.var0, mr = zeros, vr = zeros;
    const double lr = 0.01, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    double beta1_power = 1, beta2_power = 1;
    for (const Vec& g : c.grads) {
      beta1_power *= beta1;
      beta2_power *= beta2;
      auto out = e.Run(
          "ApplyAdam", {{"T", dt}, {"use_nesterov", nesterov}},
          {StateTestEnv::Ref(var), StateTestEnv::Ref(m), StateTestEnv::Ref(v),
           StateTestEnv::Val(Tensor::Scalar<T>(T(beta1_power))),
           StateTestEnv::Val(Tensor::Scalar<T>(T(beta2_power))),
           StateTestEnv::Val(Tensor::Scalar<T>(T(lr))),
           StateTestEnv::Val(Tensor::Scalar<T>(T(beta1))),
           StateTestEnv::Val(Tensor::Scalar<T>(T(beta2))),
           StateTestEnv::Val(Tensor::Scalar<T>(T(eps))), StateTestEnv::Val(Make<T>(g, c.shape))});
      REQUIRE(out.ok());
      const double lr_t = lr * std::sqrt(1 - beta2_power) / (1 - beta1_power);
      for (size_t i = 0; i < w.size(); ++i) {
        mr[i] = beta1 * mr[i] + (1 - beta1) * g[i];
        vr[i] = beta2 * vr[i] + (1 - beta2) * g[i] * g[i];
        const double step = nesterov ? (beta1 * mr[i] + (1 - beta1) * g[i]) : mr[i];
        w[i] -= lr_t * step / (std::sqrt(vr[i]) + eps);
      }
    }
    CheckClose<T>(*var->Read(), w, rel);
    CheckClose<T>(*m->Read(), mr, rel);
    CheckClose<T>(*v->Read(), vr, rel);
  }
}

TEST_CASE("ApplyGradientDescent matches var -= alpha * delta") {
  RunGradientDescent<float>(1e-6);
  RunGradientDescent<double>(1e-12);
}

TEST_CASE("ApplyMomentum matches the reference, plain and Nesterov") {
  RunMomentum<float>(false, 1e-5);
  RunMomentum<double>(false, 1e-12);
  RunMomentum<float>(true, 1e-5);
  RunMomentum<double>(true, 1e-12);
}

TEST_CASE("ApplyAdam matches the reference, plain and Nesterov") {
  RunAdam<float>(false, 1e-5);
  RunAdam<double>(false, 1e-10);
  RunAdam<float>(true, 1e-5);
  RunAdam<double>(true, 1e-10);
}

// A variable large enough that its update is cut into ranges run on the
// intra-op threads: every element, the last range's included, gets the
// reference's value. Counted, not CHECKed one by one: 1.5 M elements.
template <typename T>
void CheckEveryElement(const Tensor& got, const Vec& want, double rel) {
  REQUIRE(got.num_elements() == static_cast<int64_t>(want.size()));
  int64_t bad = 0, first_bad = -1;
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = static_cast<double>(got.data<T>()[i]);
    if (!(std::abs(g - want[i]) <= rel * (1 + std::abs(want[i])))) {
      if (bad++ == 0) first_bad = static_cast<int64_t>(i);
    }
  }
  INFO("first element off: " << first_bad);
  CHECK(bad == 0);
}

TEST_CASE("Apply ops split a large variable over the intra-op threads, every element updated") {
  constexpr int64_t kN = 1'500'007;  // 3 * kN passes the split threshold; odd, so ranges differ
  const TensorShape shape({kN});
  Vec w0(kN), g(kN);
  for (int64_t i = 0; i < kN; ++i) {
    w0[i] = std::sin(0.001 * static_cast<double>(i));
    g[i] = std::cos(0.0007 * static_cast<double>(i));
  }
  StateTestEnv e;
  e.env().compute_threads = 3;  // a pool, whatever this machine allows
  const DType dt = DType::kFloat32;
  auto sgd = e.NewVariable("sgd", dt, shape);
  auto mom = e.NewVariable("mom", dt, shape);
  auto accum = e.NewVariable("mom/Momentum", dt, shape);
  auto adam = e.NewVariable("adam", dt, shape);
  auto m = e.NewVariable("adam/Adam", dt, shape);
  auto v = e.NewVariable("adam/Adam_1", dt, shape);
  const Vec zeros(kN, 0.0);
  for (auto* var : {&sgd, &mom, &adam}) e.Assign(*var, Make<float>(w0, shape));
  for (auto* slot : {&accum, &m, &v}) e.Assign(*slot, Make<float>(zeros, shape));
  const Tensor grad = Make<float>(g, shape);
  auto scalar = [](double x) { return StateTestEnv::Val(Tensor::Scalar<float>(float(x))); };

  REQUIRE(e.Run("ApplyGradientDescent", {{"T", dt}},
                {StateTestEnv::Ref(sgd), scalar(0.1), StateTestEnv::Val(grad)}).ok());
  REQUIRE(e.Run("ApplyMomentum", {{"T", dt}, {"use_nesterov", true}},
                {StateTestEnv::Ref(mom), StateTestEnv::Ref(accum), scalar(0.05),
                 StateTestEnv::Val(grad), scalar(0.9)}).ok());
  REQUIRE(e.Run("ApplyAdam", {{"T", dt}, {"use_nesterov", false}},
                {StateTestEnv::Ref(adam), StateTestEnv::Ref(m), StateTestEnv::Ref(v),
                 scalar(0.9), scalar(0.999), scalar(0.01), scalar(0.9), scalar(0.999),
                 scalar(1e-8), StateTestEnv::Val(grad)}).ok());

  Vec want_sgd(kN), want_mom(kN), want_adam(kN);
  const double lr_t = 0.01 * std::sqrt(1 - 0.999) / (1 - 0.9);
  for (int64_t i = 0; i < kN; ++i) {
    want_sgd[i] = w0[i] - 0.1 * g[i];
    want_mom[i] = w0[i] - (g[i] * 0.05 + g[i] * 0.9 * 0.05);  // accum = g after one step
    const double mi = 0.1 * g[i], vi = 0.001 * g[i] * g[i];
    want_adam[i] = w0[i] - lr_t * mi / (std::sqrt(vi) + 1e-8);
  }
  CheckEveryElement<float>(*sgd->Read(), want_sgd, 1e-6);
  CheckEveryElement<float>(*mom->Read(), want_mom, 1e-6);
  CheckEveryElement<float>(*adam->Read(), want_adam, 1e-5);
}

TEST_CASE("Apply ops with use_locking produce the same values") {
  StateTestEnv e;
  auto var = e.NewVariable("w", DType::kFloat64, PartialShape({2}));
  auto accum = e.NewVariable("a", DType::kFloat64, PartialShape({2}));
  e.Assign(var, Tensor::FromVector<double>({1, 2}));
  e.Assign(accum, Tensor::FromVector<double>({0.5, 0.5}));
  // A reader holds accum's value, so the update must go to a copy.
  const Tensor accum_snapshot = *accum->Read();
  auto out = e.Run("ApplyMomentum", {{"T", DType::kFloat64}, {"use_locking", true}},
                   {StateTestEnv::Ref(var), StateTestEnv::Ref(accum),
                    StateTestEnv::Val(Tensor::Scalar<double>(0.1)),
                    StateTestEnv::Val(Tensor::FromVector<double>({1, -1})),
                    StateTestEnv::Val(Tensor::Scalar<double>(0.5))});
  REQUIRE(out.ok());
  // accum = 0.5 * 0.5 + g = [1.25, -0.75]; var -= 0.1 * accum.
  CheckClose<double>(*accum->Read(), {1.25, -0.75}, 1e-15);
  CheckClose<double>(*var->Read(), {1 - 0.125, 2 + 0.075}, 1e-15);
  CheckClose<double>(accum_snapshot, {0.5, 0.5}, 0);
}

TEST_CASE("Apply ops refuse bad inputs with messages that say what is wrong") {
  StateTestEnv e;
  auto var = e.NewVariable("w", DType::kFloat32, PartialShape({2}));
  auto accum = e.NewVariable("w/Momentum", DType::kFloat32, PartialShape({2}));
  auto grad = StateTestEnv::Val(Tensor::FromVector<float>({1, 2}));
  auto lr = StateTestEnv::Val(Tensor::Scalar<float>(0.1f));

  auto out =
      e.Run("ApplyGradientDescent", {{"T", DType::kFloat32}}, {StateTestEnv::Ref(var), lr, grad});
  CHECK(out.status().code() == Code::kFailedPrecondition);
  CHECK(out.status().message() == "variable 'w' is uninitialized");

  e.Assign(var, Tensor::FromVector<float>({1, 1}));
  out = e.Run("ApplyMomentum", {{"T", DType::kFloat32}},
              {StateTestEnv::Ref(var), StateTestEnv::Ref(accum), lr, grad, lr});
  CHECK(out.status().code() == Code::kFailedPrecondition);
  CHECK(Contains(out.status().message(), "'w/Momentum'"));
  CHECK(std::vector<float>(var->Read()->data<float>(), var->Read()->data<float>() + 2) ==
        std::vector<float>{1, 1});  // nothing was written

  out =
      e.Run("ApplyGradientDescent", {{"T", DType::kFloat32}},
            {StateTestEnv::Ref(var), lr, StateTestEnv::Val(Tensor::FromVector<float>({1, 2, 3}))});
  CHECK(out.status().code() == Code::kInvalidArgument);
  CHECK(Contains(out.status().message(), "delta is float32[3]"));

  out = e.Run("ApplyGradientDescent", {{"T", DType::kFloat32}},
              {StateTestEnv::Ref(var), StateTestEnv::Val(Tensor::FromVector<float>({0.1f})), grad});
  CHECK(out.status().code() == Code::kInvalidArgument);
  CHECK(Contains(out.status().message(), "alpha must be a scalar"));

  out = e.Run("ApplyGradientDescent", {{"T", DType::kFloat64}},
              {StateTestEnv::Ref(var), StateTestEnv::Val(Tensor::Scalar<double>(0.1)),
               StateTestEnv::Val(Tensor::FromVector<double>({1, 2}))});
  CHECK(out.status().code() == Code::kInvalidArgument);
  CHECK(Contains(out.status().message(), "variable 'w' is float32"));

  SECTION("shape functions catch certain mismatches at graph time") {
    const OpRegistration* reg = e.registry().Find("ApplyAdam");
    REQUIRE(reg != nullptr);
    AttrMap attrs{{"T", DType::kFloat32}, {"use_locking", false}, {"use_nesterov", false}};
    std::vector<PartialShape> shapes(10, PartialShape({}));
    shapes[0] = shapes[1] = shapes[2] = PartialShape({-1, 3});
    shapes[9] = PartialShape({4, 3});
    InferenceContext ok(attrs, shapes, std::vector<DType>(10, DType::kFloat32),
                        std::vector<const Tensor*>(10, nullptr), 1);
    REQUIRE(reg->shape_fn(ok).ok());
    CHECK(ok.output(0) == PartialShape({4, 3}));
    shapes[5] = PartialShape({1});
    InferenceContext bad_lr(attrs, shapes, std::vector<DType>(10, DType::kFloat32),
                            std::vector<const Tensor*>(10, nullptr), 1);
    Status s = reg->shape_fn(bad_lr);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(Contains(s.message(), "lr"));
    shapes[5] = PartialShape({});
    shapes[9] = PartialShape({4, 2});
    InferenceContext bad_grad(attrs, shapes, std::vector<DType>(10, DType::kFloat32),
                              std::vector<const Tensor*>(10, nullptr), 1);
    CHECK(reg->shape_fn(bad_grad).code() == Code::kInvalidArgument);
  }
}

}  // namespace
}  // namespace tfd::testing
