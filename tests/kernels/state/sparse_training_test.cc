// The Adagrad, FTRL, Momentum, RMSProp and lazy Adam updates, dense and sparse, against
// reference arithmetic written out here from TensorFlow's formulas: several
// steps (so the slots' state matters), duplicate indices applied one after
// another, untouched rows left exactly as they were, IEEE edge values, and
// hostile sparse gradients refused before anything is written.
#include <functional>
#include <map>
#include <optional>

#include "tests/kernels/state/sparse_test_util.h"

namespace tfd::testing {
namespace {

using kernels::Variable;
using sparse::CheckNear;
using sparse::Make;
using sparse::Vec;

// One element's update: r[0] is var, r[1..] the slots, s the scalars in the
// op's input order, flag its bool attr. R is the reference's arithmetic.
template <typename R>
using RefRule = std::function<void(const Vec& s, bool flag, std::vector<R*> r, R g)>;

template <typename R>
R Pow(R x, R p) {
  return std::pow(x, -p);
}

template <typename R>
std::map<std::string, RefRule<R>> Rules() {
  std::map<std::string, RefRule<R>> m;
  m["Adagrad"] = [](const Vec& s, bool update_slots, std::vector<R*> r, R g) {
    if (update_slots) *r[1] += g * g;
    *r[0] -= R(s[0]) * g / std::sqrt(*r[1]);
  };
  m["Momentum"] = [](const Vec& s, bool nesterov, std::vector<R*> r, R g) {
    const R lr = R(s[0]), mu = R(s[1]);
    *r[1] = *r[1] * mu + g;
    *r[0] -= nesterov ? g * lr + *r[1] * mu * lr : lr * *r[1];
  };
  m["RMSProp"] = [](const Vec& s, bool, std::vector<R*> r, R g) {
    const R lr = R(s[0]), rho = R(s[1]), mu = R(s[2]), eps = R(s[3]);
    *r[1] = rho * *r[1] + (1 - rho) * g * g;
    *r[2] = mu * *r[2] + lr * g / std::sqrt(*r[1] + eps);
    *r[0] -= *r[2];
  };
  // TF contrib's LazyAdam, per element of a row given.
  m["LazyAdam"] = [](const Vec& s, bool, std::vector<R*> r, R g) {
    const R b1p = R(s[0]), b2p = R(s[1]), lr = R(s[2]), b1 = R(s[3]), b2 = R(s[4]), eps = R(s[5]);
    const R alpha = lr * std::sqrt(R(1) - b2p) / (R(1) - b1p);
    *r[1] += (g - *r[1]) * (R(1) - b1);
    *r[2] += (g * g - *r[2]) * (R(1) - b2);
    *r[0] -= alpha * *r[1] / (std::sqrt(*r[2]) + eps);
  };
  // McMahan et al.'s per-coordinate FTRL-Proximal with TF's lr_power.
  // shrink: FtrlV2's l2_shrinkage, or nullopt for Ftrl (where an infinite w
  // must not turn g into NaN through 0 * inf).
  const auto ftrl = [](R lr, R l1, R l2, std::optional<R> shrink, R p, bool by_lr,
                       std::vector<R*> r, R g) {
    R &w = *r[0], &n = *r[1], &z = *r[2];
    const R g_shrunk = shrink ? g + 2 * *shrink * w : g;
    const R n_new = n + g * g;
    const R sigma = (Pow(n_new, p) - Pow(n, p)) / lr;
    z += by_lr ? lr * (g_shrunk - sigma * w) : g_shrunk - sigma * w;
    const R l1_eff = by_lr ? l1 * lr : l1;
    const R denom = by_lr ? lr * (Pow(n_new, p) / lr + 2 * l2) : Pow(n_new, p) / lr + 2 * l2;
    w = std::abs(z) > l1_eff ? (R(z > 0 ? 1 : -1) * l1_eff - z) / denom : R(0);
    n = n_new;
  };
  m["Ftrl"] = [ftrl](const Vec& s, bool by_lr, std::vector<R*> r, R g) {
    ftrl(R(s[0]), R(s[1]), R(s[2]), std::nullopt, R(s[3]), by_lr, r, g);
  };
  m["FtrlV2"] = [ftrl](const Vec& s, bool by_lr, std::vector<R*> r, R g) {
    ftrl(R(s[0]), R(s[1]), R(s[2]), R(s[3]), R(s[4]), by_lr, r, g);
  };
  return m;
}

// An op: its rule, its input order ('v' variables, 'g' grad, 'i' indices,
// 's' the next scalar), its scalars, its bool attr and the slots' start.
struct Opt {
  std::string op, rule, order;
  Vec scalars;
  const char* flag_attr;
  Vec slot_init;  // per slot
};

std::vector<Opt> Opts(bool sparse) {
  std::vector<Opt> dense = {
      {"ApplyAdagrad", "Adagrad", "vvsg", {0.1}, "update_slots", {0.1}},
      {"ApplyFtrl", "Ftrl", "vvvgssss", {0.2, 0.01, 0.05, -0.5}, "multiply_linear_by_lr",
       {0.1, 0}},
      {"ApplyFtrlV2", "FtrlV2", "vvvgsssss", {0.2, 0.01, 0.05, 0.1, -0.6},
       "multiply_linear_by_lr", {0.1, 0}},
      {"ApplyRMSProp", "RMSProp", "vvvssssg", {0.01, 0.9, 0.5, 1e-6}, nullptr, {1, 0}},
  };
  std::vector<Opt> sp = {
      {"SparseApplyAdagrad", "Adagrad", "vvsgi", {0.1}, "update_slots", {0.1}},
      {"SparseApplyFtrl", "Ftrl", "vvvgissss", {0.2, 0.01, 0.05, -0.5}, "multiply_linear_by_lr",
       {0.1, 0}},
      {"SparseApplyFtrlV2", "FtrlV2", "vvvgisssss", {0.2, 0.01, 0.05, 0.1, -0.6},
       "multiply_linear_by_lr", {0.1, 0}},
      {"SparseApplyMomentum", "Momentum", "vvsgis", {0.05, 0.9}, "use_nesterov", {0}},
      {"SparseApplyRMSProp", "RMSProp", "vvvssssgi", {0.01, 0.9, 0.5, 1e-6}, nullptr, {1, 0}},
      {"SparseApplyLazyAdam", "LazyAdam", "vvvssssssgi", {0.81, 0.998, 0.05, 0.9, 0.999, 1e-7},
       nullptr, {0.1, 0.2}},
  };
  return sparse ? sp : dense;
}

// Runs `steps` updates of `opt` on a [rows, cols] variable and checks the
// variable and slots against the reference computed in R. `idx` empty means
// a dense op (grads then cover the whole variable).
template <typename T, typename I, typename R>
void RunOpt(const Opt& opt, bool flag, int64_t rows, int64_t cols, const Vec& var0,
            const std::vector<std::vector<int64_t>>& idx, const std::vector<Vec>& grads,
            double rel) {
  INFO(opt.op << " " << DTypeName(DTypeOf<T>::value) << " flag " << flag);
  StateTestEnv e;
  const DType dt = DTypeOf<T>::value;
  const TensorShape shape({rows, cols});
  const int nvars = 1 + static_cast<int>(opt.slot_init.size());
  std::vector<std::shared_ptr<Variable>> vars;
  std::vector<std::vector<R>> ref(nvars);
  for (int k = 0; k < nvars; ++k) {
    vars.push_back(e.NewVariable("w" + std::to_string(k), dt, shape));
    const Vec init = k == 0 ? var0 : Vec(var0.size(), opt.slot_init[k - 1]);
    e.Assign(vars[k], Make<T>(init, shape));
    for (double x : init) ref[k].push_back(static_cast<R>(static_cast<T>(x)));
  }
  const RefRule<R> rule = Rules<R>().at(opt.rule);
  for (size_t step = 0; step < grads.size(); ++step) {
    const bool sparse = opt.order.find('i') != std::string::npos;
    const int64_t n = sparse ? static_cast<int64_t>(idx[step].size()) : rows;
    std::vector<Value> in;
    size_t v = 0, s = 0;
    for (char c : opt.order) {
      if (c == 'v') in.push_back(StateTestEnv::Ref(vars[v++]));
      if (c == 'g') in.push_back(StateTestEnv::Val(Make<T>(grads[step], TensorShape({n, cols}))));
      if (c == 'i') in.push_back(StateTestEnv::Val(sparse::Indices<I>(idx[step])));
      if (c == 's') in.push_back(StateTestEnv::Val(Tensor::Scalar<T>(T(opt.scalars[s++]))));
    }
    AttrMap attrs{{"T", dt}};
    if (sparse) attrs["Tindices"] = DTypeOf<I>::value;
    if (opt.flag_attr != nullptr) attrs[opt.flag_attr] = flag;
    auto out = e.Run(opt.op, attrs, std::move(in));
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CHECK((*out)[0].ref == vars[0]);
    for (int64_t i = 0; i < n; ++i) {  // rows in index order, as TF's CPU kernels
      const int64_t row = sparse ? idx[step][i] : i;
      for (int64_t c = 0; c < cols; ++c) {
        std::vector<R*> r;
        for (int k = 0; k < nvars; ++k) r.push_back(&ref[k][row * cols + c]);
        rule(opt.scalars, flag, r, static_cast<R>(static_cast<T>(grads[step][i * cols + c])));
      }
    }
  }
  for (int k = 0; k < nvars; ++k) {
    INFO("variable " << k);
    CheckNear<T>(*vars[k]->Read(), Vec(ref[k].begin(), ref[k].end()), rel);
  }
}

const Vec kVar0 = {0.5, -1.0, 2.0, 0.0, 3.5, -0.25, 1.5, 0.75, -2.0, 0.1, 0.2, -0.3, 4.0, 1.0, -1.0};

TEST_CASE("dense Adagrad, FTRL and RMSProp match TF's formulas over several steps") {
  const std::vector<Vec> grads = {{0.1, -0.2, 0.3, 1.0, -1.5, 0.05, 0.2, 0.2, -0.1, 0.5, 0.0,
                                   -0.3, -1, 1, 0.5},
                                  {0.2, 0.2, -0.1, 0.5, 0.0, -0.3, 1, 2, 3, -1, -2, -3, 0.5, 0, 1},
                                  {-1, 1, 0.5, 0.25, 2, 0, 0.1, 0.1, 0.1, 0, 0, 0, 3, -3, 0.01}};
  for (const Opt& opt : Opts(false)) {
    for (bool flag : {false, true}) {
      RunOpt<float, int32_t, double>(opt, flag, 5, 3, kVar0, {}, grads, 1e-5);
      RunOpt<double, int32_t, double>(opt, flag, 5, 3, kVar0, {}, grads, 1e-12);
    }
  }
}

TEST_CASE("sparse updates touch only the indexed rows, duplicates one after another") {
  // Step 1 updates row 3 twice and row 0 once; step 2 rows 4, 4, 4; step 3 nothing.
  const std::vector<std::vector<int64_t>> idx = {{3, 0, 3}, {4, 4, 4}, {}};
  const std::vector<Vec> grads = {{0.5, -1, 2, 0.25, 0.25, -0.5, 1, 1, 1},
                                  {0.1, 0.2, 0.3, -0.1, -0.2, -0.3, 2, 0, -2},
                                  {}};
  for (const Opt& opt : Opts(true)) {
    for (bool flag : {false, true}) {
      RunOpt<float, int32_t, double>(opt, flag, 5, 3, kVar0, idx, grads, 1e-5);
      RunOpt<float, int64_t, double>(opt, flag, 5, 3, kVar0, idx, grads, 1e-5);
      RunOpt<double, int64_t, double>(opt, flag, 5, 3, kVar0, idx, grads, 1e-12);
      RunOpt<double, int32_t, double>(opt, flag, 1, 3, {1, 2, 3}, {{0, 0}}, {grads[0]}, 1e-12);
    }
  }
}

TEST_CASE("sparse and dense optimizers follow IEEE arithmetic at edge values") {
  // Each grad edge value against each var edge value, one element each. The
  // reference runs in T (numpy's float32 for float), so a denormal squared
  // is zero in float32 just as it is in the kernel.
  const auto run = [](auto zero) {
    using T = decltype(zero);
    const Vec edges = sparse::EdgeValues<T>();
    Vec var0, grad;
    std::vector<int64_t> idx;
    for (double w : edges) {
      for (double g : edges) {
        idx.push_back(static_cast<int64_t>(var0.size()));
        var0.push_back(w);
        grad.push_back(g);
      }
    }
    const int64_t n = static_cast<int64_t>(var0.size());
    const double rel = std::is_same_v<T, float> ? 1e-6 : 1e-14;
    for (bool sparse : {false, true}) {
      for (const Opt& opt : Opts(sparse)) {
        RunOpt<T, int64_t, T>(opt, false, n, 1, var0, {idx}, {grad}, rel);
      }
    }
  };
  run(0.0f);
  run(0.0);
}

// Runs SparseApplyAdagrad on a fresh 3x2 `emb` (accum `acc`) with the given
// indices and grad; both variables must be unchanged afterwards.
Status RunBadAdagrad(const Tensor& indices, const Tensor& grad) {
  StateTestEnv e;
  auto var = e.NewVariable("emb", DType::kFloat32, PartialShape({3, 2}));
  auto acc = e.NewVariable("acc", DType::kFloat32, PartialShape({3, 2}));
  const Vec v0 = {1, 2, 3, 4, 5, 6}, a0 = {1, 1, 1, 1, 1, 1};
  e.Assign(var, Make<float>(v0, TensorShape({3, 2})));
  e.Assign(acc, Make<float>(a0, TensorShape({3, 2})));
  auto out = e.Run("SparseApplyAdagrad", {{"T", DType::kFloat32}, {"Tindices", indices.dtype()}},
                   {StateTestEnv::Ref(var), StateTestEnv::Ref(acc),
                    StateTestEnv::Val(Tensor::Scalar<float>(0.1f)), StateTestEnv::Val(grad),
                    StateTestEnv::Val(indices)});
  CheckNear<float>(*var->Read(), v0, 0);
  CheckNear<float>(*acc->Read(), a0, 0);
  return out.status();
}

TEST_CASE("a hostile sparse gradient is refused on the ps and writes nothing") {
  const Tensor two_rows = Make<float>({1, 1, 1, 1}, TensorShape({2, 2}));
  Status s = RunBadAdagrad(sparse::Indices<int64_t>({0, 3}), two_rows);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message() == "indices[1] = 3 is not in [0, 3) (the rows of variable 'emb')");
  s = RunBadAdagrad(sparse::Indices<int32_t>({-2, 0}), two_rows);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(Contains(s.message(), "indices[0] = -2"));
  s = RunBadAdagrad(sparse::Indices<int32_t>({0, 1, 2}), two_rows);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(Contains(s.message(), "grad must have one row per index"));
  s = RunBadAdagrad(sparse::Indices<int32_t>({0, 1}), Make<float>({1, 1}, TensorShape({2, 1})));
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(Contains(s.message(), "grad is float32[2, 1]"));
  s = RunBadAdagrad(Tensor::FromVector<int32_t>({0, 1}, TensorShape({1, 2})),
                    Make<float>({1, 1, 1, 1}, TensorShape({1, 2, 2})));
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(Contains(s.message(), "indices must be a vector"));
  s = RunBadAdagrad(sparse::Indices<int32_t>({0}), Tensor::Scalar<float>(1));
  CHECK(s.code() == Code::kInvalidArgument);
}

TEST_CASE("every sparse optimizer refuses an index outside the rows and writes nothing") {
  const TensorShape shape({5, 3});
  const TensorShape grad_shape({2, 3});
  const std::vector<std::vector<int64_t>> bad = {{0, 5}, {-1, 0}};
  for (const Opt& opt : Opts(true)) {
    for (const std::vector<int64_t>& idx : bad) {
      INFO(opt.op << " indices " << idx[0] << ", " << idx[1]);
      StateTestEnv e;
      std::vector<std::shared_ptr<Variable>> vars;
      for (size_t k = 0; k <= opt.slot_init.size(); ++k) {
        vars.push_back(e.NewVariable("w" + std::to_string(k), DType::kFloat32, shape));
        e.Assign(vars.back(), Make<float>(kVar0, shape));
      }
      std::vector<Value> in;
      size_t v = 0, s = 0;
      for (char c : opt.order) {
        if (c == 'v') in.push_back(StateTestEnv::Ref(vars[v++]));
        if (c == 'g') in.push_back(StateTestEnv::Val(Make<float>(Vec(6, 1.0), grad_shape)));
        if (c == 'i') in.push_back(StateTestEnv::Val(sparse::Indices<int64_t>(idx)));
        if (c == 's') {
          in.push_back(StateTestEnv::Val(Tensor::Scalar<float>(float(opt.scalars[s++]))));
        }
      }
      AttrMap attrs{{"T", DType::kFloat32}, {"Tindices", DType::kInt64}};
      if (opt.flag_attr != nullptr) attrs[opt.flag_attr] = false;
      auto out = e.Run(opt.op, attrs, std::move(in));
      CHECK(out.status().code() == Code::kInvalidArgument);
      CHECK(Contains(out.status().message(), "is not in [0, 5) (the rows of variable 'w0')"));
      for (const auto& var : vars) CheckNear<float>(*var->Read(), kVar0, 0);
    }
  }
}

TEST_CASE("sparse optimizers refuse a slot of another shape and a non-scalar lr") {
  StateTestEnv e;
  auto var = e.NewVariable("emb", DType::kFloat64, PartialShape({3, 2}));
  auto acc = e.NewVariable("acc", DType::kFloat64, PartialShape({2, 2}));
  e.Assign(var, Make<double>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2})));
  e.Assign(acc, Make<double>({1, 1, 1, 1}, TensorShape({2, 2})));
  const auto grad = StateTestEnv::Val(Make<double>({1, 1}, TensorShape({1, 2})));
  const auto idx = StateTestEnv::Val(sparse::Indices<int32_t>({2}));
  auto out = e.Run("SparseApplyMomentum", {{"T", DType::kFloat64}, {"Tindices", DType::kInt32}},
                   {StateTestEnv::Ref(var), StateTestEnv::Ref(acc),
                    StateTestEnv::Val(Tensor::Scalar<double>(0.1)), grad, idx,
                    StateTestEnv::Val(Tensor::Scalar<double>(0.9))});
  CHECK(out.status().code() == Code::kInvalidArgument);
  CHECK(out.status().message() ==
        "accum is float64[2, 2] but variable 'emb' holds float64[3, 2]");
  auto acc2 = e.NewVariable("acc2", DType::kFloat64, PartialShape({3, 2}));
  e.Assign(acc2, Make<double>({1, 1, 1, 1, 1, 1}, TensorShape({3, 2})));
  out = e.Run("SparseApplyMomentum", {{"T", DType::kFloat64}, {"Tindices", DType::kInt32}},
              {StateTestEnv::Ref(var), StateTestEnv::Ref(acc2),
               StateTestEnv::Val(Tensor::FromVector<double>({0.1})), grad, idx,
               StateTestEnv::Val(Tensor::Scalar<double>(0.9))});
  CHECK(out.status().code() == Code::kInvalidArgument);
  CHECK(Contains(out.status().message(), "lr must be a scalar"));
}

TEST_CASE("sparse optimizer shape functions check grad against indices and var") {
  StateTestEnv e;
  const OpRegistration* reg = e.registry().Find("SparseApplyFtrl");
  REQUIRE(reg != nullptr);
  AttrMap attrs{{"T", DType::kFloat32},
                {"Tindices", DType::kInt32},
                {"use_locking", false},
                {"multiply_linear_by_lr", false}};
  std::vector<DType> types(9, DType::kFloat32);
  types[4] = DType::kInt32;
  const auto infer = [&](PartialShape grad, PartialShape indices) {
    std::vector<PartialShape> shapes(9, PartialShape({}));
    shapes[0] = PartialShape({-1, 8});
    shapes[1] = shapes[2] = PartialShape({100, -1});
    shapes[3] = std::move(grad);
    shapes[4] = std::move(indices);
    InferenceContext c(attrs, shapes, types, std::vector<const Tensor*>(9, nullptr), 1);
    Status s = reg->shape_fn(c);
    return std::make_pair(s, c.output(0));
  };
  auto [ok, shape] = infer(PartialShape({-1, 8}), PartialShape({5}));
  CHECK(ok.ok());
  CHECK(shape == PartialShape({100, 8}));
  CHECK(infer(PartialShape({5, 7}), PartialShape({5})).first.code() == Code::kInvalidArgument);
  CHECK(infer(PartialShape({4, 8}), PartialShape({5})).first.code() == Code::kInvalidArgument);
  CHECK(infer(PartialShape({5, 8}), PartialShape({5, 1})).first.code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd::testing
