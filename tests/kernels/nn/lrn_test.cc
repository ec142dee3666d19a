// LRN and LRNGrad against float64 references written from their
// definitions, at block-crossing channel counts, several window radii, and
// with IEEE edge values.
#include <cmath>
#include <vector>

#include "tests/kernels/nn/window_reference.h"

namespace tfd::testing::nn {
namespace {

constexpr double kBias = 1.5, kAlpha = 0.3, kBeta = 0.75;

AttrMap LrnAttrs(DType t, int64_t radius) {
  return {{"T", t}, {"depth_radius", radius}, {"bias", kBias}, {"alpha", kAlpha}, {"beta", kBeta}};
}

RefValues Near(const std::vector<double>& v) {
  RefValues r(static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) {
    r.value[i] = v[i];
    r.magnitude[i] = std::abs(v[i]) + 1e-3;
  }
  return r;
}

void CheckLrn(DType t, int64_t depth, int64_t radius, bool edges) {
  const TensorShape shape({2, 3, 1, depth});
  const int64_t pixels = 6, n = pixels * depth;
  std::vector<double> xs = Spread(n, -2, 2, static_cast<uint32_t>(depth));
  std::vector<double> dys = Spread(n, -1, 1, static_cast<uint32_t>(depth + 3));
  if (edges) {  // in pixels 3 and above only
    const std::vector<double> e = EdgeValues();
    for (int64_t i = 3 * depth, k = 0; i < n; i += 3, ++k) xs[i] = e[k % e.size()];
  }
  const Tensor x = Make(t, xs, shape), dy = Make(t, dys, shape);
  const std::vector<double> xv = Values(x), dyv = Values(dy);
  std::vector<double> y(n);
  RefValues dx(n);  // a sum of terms that may cancel: held to their magnitudes
  for (int64_t p = 0; p < pixels; ++p) {
    const double* xp = xv.data() + p * depth;
    for (int64_t d = 0; d < depth; ++d) {
      const int64_t lo = std::max<int64_t>(0, d - radius), hi = std::min(depth, d + radius + 1);
      double sum = 0;
      for (int64_t k = lo; k < hi; ++k) sum += xp[k] * xp[k];
      const double norm = kBias + kAlpha * sum;
      y[p * depth + d] = xp[d] * std::pow(norm, -kBeta);
      // d y[d] / d x[k] = [k == d] norm^-beta - 2 alpha beta x[d] x[k] norm^(-beta - 1).
      const double g = dyv[p * depth + d];
      dx.Add(p * depth + d, g * std::pow(norm, -kBeta));
      for (int64_t k = lo; k < hi; ++k) {
        dx.Add(p * depth + k, -g * 2 * kAlpha * kBeta * xp[d] * xp[k] * std::pow(norm, -kBeta - 1));
      }
    }
  }
  auto out = MustRun("LRN", LrnAttrs(t, radius), {x});
  CheckAgainst(out[0], shape, Near(y));
  auto grad = MustRun("LRNGrad", LrnAttrs(t, radius), {dy, x, out[0]});
  CheckAgainst(grad[0], shape, dx);
}

TEST_CASE("LRN and LRNGrad match float64 references") {
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    for (int64_t depth : BlockCrossingDepths()) {
      for (int64_t radius : {0, 2, 5}) {
        for (bool edges : {false, true}) {
          INFO(DTypeName(t) << ", depth " << depth << ", radius " << radius
                            << (edges ? ", edge values" : ""));
          CheckLrn(t, depth, radius, edges);
        }
      }
    }
  }
}

TEST_CASE("LRN refuses a negative radius and inputs of another rank") {
  auto radius = RunOp(Registry(), "LRN", LrnAttrs(DType::kFloat64, -1),
                      {Doubles({1, 2}, {1, 1, 1, 2})});
  CHECK(radius.status().code() == Code::kInvalidArgument);
  CHECK(radius.status().message().find("depth_radius") != std::string::npos);
  auto rank = RunOp(Registry(), "LRN", LrnAttrs(DType::kFloat64, 1), {Doubles({1, 2}, {1, 2})});
  CHECK(rank.status().code() == Code::kInvalidArgument);
  auto mismatch = RunOp(Registry(), "LRNGrad", LrnAttrs(DType::kFloat64, 1),
                        {Doubles({1, 2}, {1, 1, 1, 2}), Doubles({1, 2}, {1, 1, 1, 2}),
                         Doubles({1}, {1, 1, 1, 1})});
  CHECK(mismatch.status().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd::testing::nn
