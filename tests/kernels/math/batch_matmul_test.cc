// BatchMatMul and BatchMatMulV2 against a naive float64 triple loop per batch
// index, for every adj_x/adj_y combination, broadcast batch dimensions (V2),
// empty inner dimensions, and their errors.
#include <catch2/catch.hpp>

#include "tests/kernels/math/math_test_util.h"

namespace tfd {
namespace {

using namespace math_test;  // NOLINT: test helpers
using Dims = std::vector<int64_t>;

// Element [r, c] of op(m) for a row-major [rows, cols] matrix at `base`.
double At(const std::vector<double>& v, int64_t base, int64_t cols, bool adj, int64_t r,
          int64_t c) {
  return adj ? v[base + c * cols + r] : v[base + r * cols + c];
}

// numpy.matmul(op(x), op(y)) with numpy's batch broadcasting.
Ref NaiveBatchMatMul(const Dims& xd, const std::vector<double>& x, const Dims& yd,
                     const std::vector<double>& y, bool adj_x, bool adj_y) {
  const int64_t xr = xd[xd.size() - 2], xc = xd.back(), yr = yd[yd.size() - 2], yc = yd.back();
  const int64_t m = adj_x ? xc : xr, k = adj_x ? xr : xc, n = adj_y ? yr : yc;
  const Dims xb(xd.begin(), xd.end() - 2), yb(yd.begin(), yd.end() - 2);
  const size_t rank = std::max(xb.size(), yb.size());
  Dims xp(rank, 1), yp(rank, 1), ob(rank);
  std::copy(xb.begin(), xb.end(), xp.begin() + (rank - xb.size()));
  std::copy(yb.begin(), yb.end(), yp.begin() + (rank - yb.size()));
  for (size_t d = 0; d < rank; ++d) ob[d] = xp[d] == 1 ? yp[d] : xp[d];
  Ref r{ob, {}};
  r.dims.push_back(m);
  r.dims.push_back(n);
  for (int64_t b = 0; b < Count(ob); ++b) {
    Dims idx = Unflatten(b, ob), xi = idx, yi = idx;
    for (size_t d = 0; d < rank; ++d) {
      if (xp[d] == 1) xi[d] = 0;
      if (yp[d] == 1) yi[d] = 0;
    }
    const int64_t xbase = Flatten(xi, xp) * xr * xc, ybase = Flatten(yi, yp) * yr * yc;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t t = 0; t < k; ++t) {
          sum += At(x, xbase, xc, adj_x, i, t) * At(y, ybase, yc, adj_y, t, j);
        }
        r.values.push_back(sum);
      }
    }
  }
  return r;
}

// x's and y's dims for products [m, k] x [k, n], adjoints stored transposed.
Dims WithMatrix(Dims batch, int64_t rows, int64_t cols, bool adj) {
  batch.push_back(adj ? cols : rows);
  batch.push_back(adj ? rows : cols);
  return batch;
}

TEST_CASE("BatchMatMulV2 matches a float64 loop with broadcast batches and adjoints") {
  struct Case {
    Dims xb, yb;
    int64_t m, k, n;
  };
  const Case cases[] = {{{}, {}, 3, 4, 2},       {{2}, {2}, 2, 3, 4},    {{3, 1}, {2}, 2, 2, 3},
                        {{1}, {4}, 1, 5, 1},     {{2, 3}, {}, 3, 1, 2},  {{2}, {2}, 2, 0, 3},
                        {{0}, {1}, 2, 2, 2}};
  for (const Case& c : cases) {
    for (bool adj_x : {false, true}) {
      for (bool adj_y : {false, true}) {
        for (DType d : {DType::kFloat64, DType::kFloat32, DType::kInt32}) {
          const Dims xd = WithMatrix(c.xb, c.m, c.k, adj_x), yd = WithMatrix(c.yb, c.k, c.n, adj_y);
          INFO(TensorShape(xd).ToString() << " x " << TensorShape(yd).ToString() << " adj "
                                           << adj_x << adj_y << " " << DTypeName(d));
          const std::vector<double> x = Values(MakeOf(d, xd, Ramp(Count(xd), 0.5, -2)));
          const std::vector<double> y = Values(MakeOf(d, yd, Ramp(Count(yd), 0.25, -1)));
          const Ref want = NaiveBatchMatMul(xd, x, yd, y, adj_x, adj_y);
          const Tensor z = Run1("BatchMatMulV2", {{"T", d}, {"adj_x", adj_x}, {"adj_y", adj_y}},
                                {MakeOf(d, xd, x), MakeOf(d, yd, y)});
          CHECK(z.dtype() == d);
          ExpectTensor(z, want.dims, want.values, d == DType::kFloat32 ? 1e-6 : 1e-14);
          if (c.xb == c.yb) {  // TF1's BatchMatMul: the same product
            const Tensor z1 = Run1("BatchMatMul", {{"T", d}, {"adj_x", adj_x}, {"adj_y", adj_y}},
                                   {MakeOf(d, xd, x), MakeOf(d, yd, y)});
            ExpectTensor(z1, want.dims, want.values, d == DType::kFloat32 ? 1e-6 : 1e-14);
          }
        }
      }
    }
  }
}

TEST_CASE("BatchMatMul refuses unequal batches, and both refuse mismatched matrices") {
  const AttrMap attrs = {{"T", DType::kFloat64}};
  const Tensor a = Make<double>({2, 2, 3}, Ramp(12)), b = Make<double>({1, 3, 2}, Ramp(6));
  ExpectInvalid("BatchMatMul", attrs, {a, b}, {"equal batch dimensions", "BatchMatMulV2"});
  CHECK(Run1("BatchMatMulV2", attrs, {a, b}).shape() == TensorShape({2, 2, 2}));
  ExpectInvalid("BatchMatMulV2", attrs, {a, Make<double>({2, 2, 2}, Ramp(8))},
                {"inner dimensions differ", "3 of x", "2 of y"});
  ExpectInvalid("BatchMatMulV2", attrs, {a, Make<double>({3, 3, 2}, Ramp(18))},
                {"do not broadcast"});
  ExpectInvalid("BatchMatMulV2", attrs, {Make<double>({3}, Ramp(3)), b}, {"rank >= 2"});
}

TEST_CASE("BatchMatMul shape functions broadcast known batch dimensions") {
  auto r = InferShapes("BatchMatMulV2", {{"T", DType::kFloat32}, {"adj_y", true}},
                       {PartialShape({5, 1, 2, 3}), PartialShape({4, 7, 3})});
  REQUIRE(r.status.ok());
  CHECK(r.outputs[0] == PartialShape({5, 4, 2, 7}));
  r = InferShapes("BatchMatMul", {{"T", DType::kFloat32}},
                  {PartialShape({-1, 2, 3}), PartialShape({6, 3, -1})});
  REQUIRE(r.status.ok());
  CHECK(r.outputs[0] == PartialShape({6, 2, -1}));
  r = InferShapes("BatchMatMulV2", {{"T", DType::kFloat32}},
                  {PartialShape({2, 3}), PartialShape({4, 2})});
  CHECK(r.status.code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd
