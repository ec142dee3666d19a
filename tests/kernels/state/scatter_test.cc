// ScatterUpdate / ScatterAdd / ScatterSub against row updates computed here
// in float64: duplicate indices, int32 and int64 indices, scalar updates,
// empty index lists, IEEE edge values, and every kind of bad input refused
// before anything is written.
#include "tests/kernels/state/sparse_test_util.h"

namespace tfd::testing {
namespace {

using kernels::Variable;
using sparse::CheckNear;
using sparse::Indices;
using sparse::Make;
using sparse::Vec;

// The reference: rows updated one after another in index order.
Vec ScatterReference(const std::string& op, Vec var, int64_t cols,
                     const std::vector<int64_t>& idx, const Vec& upd) {
  for (size_t i = 0; i < idx.size(); ++i) {
    for (int64_t k = 0; k < cols; ++k) {
      double& dst = var[idx[i] * cols + k];
      const double u = upd.size() == 1 ? upd[0] : upd[i * cols + k];
      if (op == "ScatterUpdate") dst = u;
      if (op == "ScatterAdd") dst += u;
      if (op == "ScatterSub") dst -= u;
    }
  }
  return var;
}

template <typename T, typename I>
void RunScatter(const std::string& op, const Vec& var0, int64_t rows,
                const std::vector<int64_t>& idx, const Vec& upd, bool scalar_updates) {
  INFO(op << " " << DTypeName(DTypeOf<T>::value) << " indices " << DTypeName(DTypeOf<I>::value));
  StateTestEnv e;
  const DType dt = DTypeOf<T>::value;
  const int64_t cols = static_cast<int64_t>(var0.size()) / rows;
  auto var = e.NewVariable("emb", dt, PartialShape({rows, cols}));
  e.Assign(var, Make<T>(var0, TensorShape({rows, cols})));
  const TensorShape upd_shape =
      scalar_updates ? TensorShape() : TensorShape({static_cast<int64_t>(idx.size()), cols});
  auto out = e.Run(op, {{"T", dt}, {"Tindices", DTypeOf<I>::value}},
                   {StateTestEnv::Ref(var), StateTestEnv::Val(Indices<I>(idx)),
                    StateTestEnv::Val(Make<T>(upd, upd_shape))});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK((*out)[0].ref == var);
  // The reference sees the values as T holds them (0.5 is 0 in an int32).
  const auto as_t = [](Vec v) {
    for (double& x : v) x = static_cast<double>(static_cast<T>(x));
    return v;
  };
  const Vec want = ScatterReference(op, as_t(var0), cols, idx, as_t(upd));
  CheckNear<T>(*var->Read(), want, 0);
  CheckNear<T>((*out)[0].tensor, want, 0);  // what a value consumer sees
}

template <typename T, typename I>
void RunAllScatters() {
  // Row 2 three times, row 0 twice: duplicates accumulate in order.
  const Vec var0 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const std::vector<int64_t> idx = {2, 0, 2, 4, 0, 2};
  const Vec upd = {0.5, -1, 2, 2, 3, 4, -8, 0.25, 1, 1, 10, 20};
  for (const char* op : {"ScatterUpdate", "ScatterAdd", "ScatterSub"}) {
    RunScatter<T, I>(op, var0, 5, idx, upd, false);
    RunScatter<T, I>(op, var0, 5, idx, {1.5}, true);
    RunScatter<T, I>(op, var0, 5, {}, {}, false);  // an empty batch changes nothing
    RunScatter<T, I>(op, {7}, 1, {0, 0}, {2, 3}, false);  // one row
  }
}

TEST_CASE("Scatter ops update rows in index order; duplicates accumulate for add and sub") {
  RunAllScatters<float, int32_t>();
  RunAllScatters<float, int64_t>();
  RunAllScatters<double, int32_t>();
  RunAllScatters<double, int64_t>();
  RunAllScatters<int32_t, int64_t>();
  RunAllScatters<int64_t, int32_t>();
}

TEST_CASE("Scatter ops follow IEEE arithmetic at inf, NaN, signed zeros and denormals") {
  // Every pair (var value, update value) of edge values, one per row, so
  // inf - inf, NaN + x, denormal + denormal and -0 + 0 all appear.
  const auto run = [](auto zero) {
    using T = decltype(zero);
    const Vec edges = sparse::EdgeValues<T>();
    Vec var0, upd;
    std::vector<int64_t> idx;
    for (size_t a = 0; a < edges.size(); ++a) {
      for (size_t b = 0; b < edges.size(); ++b) {
        idx.push_back(static_cast<int64_t>(var0.size()));
        var0.push_back(edges[a]);
        upd.push_back(edges[b]);
      }
    }
    const int64_t rows = static_cast<int64_t>(var0.size());
    for (const char* op : {"ScatterUpdate", "ScatterAdd", "ScatterSub"}) {
      RunScatter<T, int64_t>(op, var0, rows, idx, upd, false);
    }
  };
  run(0.0f);
  run(0.0);
}

TEST_CASE("ScatterUpdate writes rows of a string variable") {
  StateTestEnv e;
  auto var = e.NewVariable("names", DType::kString, PartialShape({3}));
  e.Assign(var, Tensor::FromVector<std::string>({"a", "b", "c"}));
  auto out = e.Run("ScatterUpdate", {{"T", DType::kString}, {"Tindices", DType::kInt32}},
                   {StateTestEnv::Ref(var), StateTestEnv::Val(Tensor::FromVector<int32_t>({2, 0})),
                    StateTestEnv::Val(Tensor::FromVector<std::string>({"z", "x"}))});
  REQUIRE(out.ok());
  const Tensor v = *var->Read();
  CHECK(v.data<std::string>()[0] == "x");
  CHECK(v.data<std::string>()[1] == "b");
  CHECK(v.data<std::string>()[2] == "z");
}

// Runs op on a fresh 3x2 variable `emb` and returns the status; the variable
// must be unchanged afterwards.
Status RunBad(const std::string& op, const Tensor& indices, const Tensor& updates) {
  StateTestEnv e;
  auto var = e.NewVariable("emb", DType::kFloat32, PartialShape({3, 2}));
  const Vec var0 = {1, 2, 3, 4, 5, 6};
  e.Assign(var, Make<float>(var0, TensorShape({3, 2})));
  auto out = e.Run(op, {{"T", DType::kFloat32}, {"Tindices", indices.dtype()}},
                   {StateTestEnv::Ref(var), StateTestEnv::Val(indices), StateTestEnv::Val(updates)});
  CheckNear<float>(*var->Read(), var0, 0);  // nothing written
  return out.status();
}

TEST_CASE("Scatter ops refuse out-of-range indices and misshapen updates, writing nothing") {
  const Tensor two_rows = Make<float>({1, 1, 1, 1}, TensorShape({2, 2}));
  for (const char* op : {"ScatterUpdate", "ScatterAdd", "ScatterSub"}) {
    INFO(op);
    // The bad index comes after a good one: the good row must not be written either.
    Status s = RunBad(op, Indices<int32_t>({1, 3}), two_rows);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message() == "indices[1] = 3 is not in [0, 3) (the rows of variable 'emb')");
    s = RunBad(op, Indices<int64_t>({0, -1}), two_rows);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(Contains(s.message(), "indices[1] = -1 is not in [0, 3)"));
    s = RunBad(op, Indices<int64_t>({int64_t{1} << 40, 0}), two_rows);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(Contains(s.message(), "indices[0] = 1099511627776"));
    // Three indices, two rows of updates.
    s = RunBad(op, Indices<int32_t>({0, 1, 2}), two_rows);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(Contains(s.message(), "need updates shaped [3, 2]"));
    // Rows of the wrong width.
    s = RunBad(op, Indices<int32_t>({0, 1}), Make<float>({1, 1, 1, 1, 1, 1}, TensorShape({2, 3})));
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(Contains(s.message(), "updates is float32[2, 3]"));
  }
}

TEST_CASE("Scatter ops name the variable when it is uninitialized or a scalar") {
  StateTestEnv e;
  auto var = e.NewVariable("emb", DType::kFloat32, PartialShape({3, 2}));
  auto out = e.Run("ScatterAdd", {{"T", DType::kFloat32}, {"Tindices", DType::kInt32}},
                   {StateTestEnv::Ref(var), StateTestEnv::Val(Indices<int32_t>({0})),
                    StateTestEnv::Val(Make<float>({1, 1}, TensorShape({1, 2})))});
  CHECK(out.status().code() == Code::kFailedPrecondition);
  CHECK(Contains(out.status().message(), "'emb'"));

  auto scalar = e.NewVariable("s", DType::kFloat32, PartialShape({}));
  e.Assign(scalar, Tensor::Scalar<float>(1));
  out = e.Run("ScatterAdd", {{"T", DType::kFloat32}, {"Tindices", DType::kInt32}},
              {StateTestEnv::Ref(scalar), StateTestEnv::Val(Indices<int32_t>({0})),
               StateTestEnv::Val(Tensor::Scalar<float>(1))});
  CHECK(out.status().code() == Code::kInvalidArgument);
  CHECK(Contains(out.status().message(), "rank >= 1 but variable 's' is float32[]"));
}

TEST_CASE("Scatter shape functions check updates against indices and the variable") {
  StateTestEnv e;
  const OpRegistration* reg = e.registry().Find("ScatterSub");
  REQUIRE(reg != nullptr);
  AttrMap attrs{{"T", DType::kFloat32}, {"Tindices", DType::kInt64}, {"use_locking", false}};
  const std::vector<DType> types{DType::kFloat32, DType::kInt64, DType::kFloat32};
  const auto infer = [&](PartialShape var, PartialShape idx, PartialShape upd) {
    InferenceContext c(attrs, {std::move(var), std::move(idx), std::move(upd)}, types,
                       std::vector<const Tensor*>(3, nullptr), 1);
    Status s = reg->shape_fn(c);
    return std::make_pair(s, c.output(0));
  };
  auto [ok, shape] = infer(PartialShape({-1, 4}), PartialShape({-1}), PartialShape({7, 4}));
  CHECK(ok.ok());
  CHECK(shape == PartialShape({-1, 4}));
  CHECK(infer(PartialShape({10, 4}), PartialShape({7}), PartialShape({})).first.ok());
  CHECK(infer(PartialShape({10, 4}), PartialShape({7}), PartialShape({7, 3})).first.code() ==
        Code::kInvalidArgument);
  CHECK(infer(PartialShape({10, 4}), PartialShape({2, 3}), PartialShape({6, 4})).first.code() ==
        Code::kInvalidArgument);
  CHECK(infer(PartialShape({}), PartialShape({1}), PartialShape({1})).first.code() ==
        Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd::testing
