// GatherNd and ScatterNd against naive multi-index loops written from their
// definitions, for index depths 0 to the full rank and both index dtypes;
// repeated scatter indices sum; out-of-range indices and mismatched updates
// are INVALID_ARGUMENT naming what is wrong.
#include <string>
#include <vector>

#include "tests/kernels/array/array_test_util.h"

namespace tfd {
namespace {

using namespace array_test;  // NOLINT: test helpers
using Dims = std::vector<int64_t>;

std::vector<double> Iota(int64_t n, double scale = 1) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = scale * static_cast<double>(i) + 0.5;
  return v;
}

int64_t Prod(const Dims& d, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < d.size(); ++i) p *= d[i];
  return p;
}

// params[idx[0], ..., idx[k-1], rest...] for the rest flattened.
double ParamAt(const std::vector<double>& p, const Dims& dims, const std::vector<int64_t>& idx,
               int64_t rest) {
  int64_t flat = 0;
  for (size_t j = 0; j < dims.size(); ++j) flat = flat * dims[j] + (j < idx.size() ? idx[j] : 0);
  return p[flat + rest];
}

TEST_CASE("GatherNd picks the slice each index row names, for every index depth") {
  const Dims dims = {3, 4, 2};
  const std::vector<double> p = Iota(24);
  const std::vector<std::vector<std::vector<int64_t>>> cases = {
      {{}},                                     // k = 0: the whole tensor
      {{2}, {0}, {2}},                          // k = 1: rows, one repeated
      {{1, 3}, {0, 0}, {2, 1}, {1, 3}},         // k = 2
      {{2, 3, 1}, {0, 1, 0}},                   // k = 3: single elements
  };
  for (const auto& rows : cases) {
    const int64_t k = static_cast<int64_t>(rows[0].size());
    INFO("k = " << k);
    std::vector<int64_t> flat;
    for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
    const int64_t n = static_cast<int64_t>(rows.size());
    const int64_t slice = Prod(dims, k);
    std::vector<double> want;
    for (const auto& r : rows) {
      for (int64_t j = 0; j < slice; ++j) want.push_back(ParamAt(p, dims, r, j));
    }
    Dims out_dims = {n};
    out_dims.insert(out_dims.end(), dims.begin() + k, dims.end());
    for (DType index : {DType::kInt32, DType::kInt64}) {
      const Tensor idx = index == DType::kInt64
                             ? I64(flat, TensorShape({n, k}))
                             : I32(std::vector<int32_t>(flat.begin(), flat.end()),
                                   TensorShape({n, k}));
      const Tensor y = RunOne("GatherNd", {{"Tparams", DType::kFloat64}, {"Tindices", index}},
                              {F64(p, TensorShape(dims)), idx});
      REQUIRE(y.shape() == TensorShape(out_dims));
      for (int64_t i = 0; i < y.num_elements(); ++i) CHECK(y.data<double>()[i] == want[i]);
    }
  }
  // Leading index dimensions stay: indices [2, 1, 2] give [2, 1, 2] slices.
  const Tensor y = RunOne("GatherNd", {{"Tparams", DType::kString}, {"Tindices", DType::kInt32}},
                          {Str({"a", "b", "c", "d"}, TensorShape({2, 2})),
                           I32({1, 0, 0, 1}, TensorShape({2, 1, 2}))});
  REQUIRE(y.shape() == TensorShape({2, 1}));
  CHECK(y.data<std::string>()[0] == "c");
  CHECK(y.data<std::string>()[1] == "b");
}

TEST_CASE("ScatterNd adds each update at its index into zeros, repeats summed") {
  // shape [4, 3], k = 1: whole rows; row 1 twice.
  const Tensor idx = I64({1, 3, 1}, TensorShape({3, 1}));
  const Tensor upd = F64(Iota(9), TensorShape({3, 3}));
  const Tensor y = RunOne("ScatterNd", {{"T", DType::kFloat64}, {"Tindices", DType::kInt64}},
                          {idx, upd, I64({4, 3})});
  REQUIRE(y.shape() == TensorShape({4, 3}));
  const std::vector<double> want = {0, 0, 0, 0.5 + 6.5, 1.5 + 7.5, 2.5 + 8.5, 0, 0, 0,
                                    3.5, 4.5, 5.5};
  for (int i = 0; i < 12; ++i) CHECK(y.data<double>()[i] == want[i]);
  // k = 2: single elements, int32.
  const Tensor z = RunOne("ScatterNd", {{"T", DType::kInt32}, {"Tindices", DType::kInt32}},
                          {I32({0, 2, 1, 0}, TensorShape({2, 2})), I32({7, -3}),
                           I32({2, 3})});
  const std::vector<int32_t> zw = {0, 0, 7, -3, 0, 0};
  for (int i = 0; i < 6; ++i) CHECK(z.data<int32_t>()[i] == zw[i]);
}

TEST_CASE("GatherNd and ScatterNd refuse out-of-range indices and bad updates") {
  auto expect = [](const std::string& op, AttrMap attrs, std::vector<Tensor> in,
                   const std::vector<std::string>& parts) {
    auto out = Run(op, std::move(attrs), std::move(in));
    INFO(out.status().ToString());
    REQUIRE(out.status().code() == Code::kInvalidArgument);
    for (const auto& p : parts) CHECK(out.status().message().find(p) != std::string::npos);
  };
  const AttrMap g = {{"Tparams", DType::kFloat64}, {"Tindices", DType::kInt32}};
  const Tensor p = F64(Iota(6), TensorShape({2, 3}));
  expect("GatherNd", g, {p, I32({1, 3}, TensorShape({1, 2}))},
         {"index 3", "dimension 1 of size 3"});
  expect("GatherNd", g, {p, I32({-1}, TensorShape({1, 1}))}, {"index -1"});
  expect("GatherNd", g, {p, I32({0, 0, 0}, TensorShape({1, 3}))}, {"exceeds the rank 2"});
  const AttrMap sc = {{"T", DType::kFloat64}, {"Tindices", DType::kInt32}};
  expect("ScatterNd", sc, {I32({4}, TensorShape({1, 1})), F64({1, 2}, TensorShape({1, 2})),
                           I32({4, 2})},
         {"index 4", "size 4"});
  expect("ScatterNd", sc, {I32({1}, TensorShape({1, 1})), F64({1, 2, 3}, TensorShape({1, 3})),
                           I32({4, 2})},
         {"updates must have shape [1, 2]"});
}

}  // namespace
}  // namespace tfd
