// FusedBatchNorm (training and inference) and FusedBatchNormGrad against
// float64 references written from their definitions, at block-crossing
// channel counts and with IEEE edge values in some channels.
#include <cmath>
#include <vector>

#include "tests/kernels/nn/window_reference.h"

namespace tfd::testing::nn {
namespace {

constexpr double kEpsilon = 1e-3;

struct Moments {
  std::vector<double> mean, var;  // biased variance
};

Moments RefMoments(const std::vector<double>& x, int64_t rows, int64_t channels) {
  Moments m{std::vector<double>(channels, 0.0), std::vector<double>(channels, 0.0)};
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t r = 0; r < rows; ++r) m.mean[c] += x[r * channels + c] / rows;
    for (int64_t r = 0; r < rows; ++r) {
      m.var[c] += (x[r * channels + c] - m.mean[c]) * (x[r * channels + c] - m.mean[c]) / rows;
    }
  }
  return m;
}

// A result to compare with CheckAgainst: tolerance relative to |value| + 1.
RefValues AsRef(const std::vector<double>& v) {
  RefValues r(static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) {
    r.value[i] = v[i];
    r.magnitude[i] = std::abs(v[i]) + 1;
  }
  return r;
}

AttrMap BnAttrs(DType t, bool training, double factor = 1) {
  return {{"T", t},
          {"epsilon", kEpsilon},
          {"is_training", training},
          {"exponential_avg_factor", factor}};
}

void CheckBatchNorm(DType t, int64_t channels, bool training, bool edges) {
  const TensorShape shape({2, 3, 5, channels});
  const int64_t rows = 30, n = rows * channels;
  std::vector<double> xs = Spread(n, -2, 2, static_cast<uint32_t>(channels));
  std::vector<double> dys = Spread(n, -1, 1, static_cast<uint32_t>(channels + 9));
  if (edges) {  // in channel 0 only: the others must not be touched by them
    const std::vector<double> e = EdgeValues();
    for (int64_t r = 0; r < rows; r += 4) xs[r * channels] = e[(r / 4) % e.size()];
  }
  const Tensor x = Make(t, xs, shape), dy = Make(t, dys, shape);
  const Tensor scale = Make(t, Spread(channels, 0.5, 2, 3), {channels});
  const Tensor offset = Make(t, Spread(channels, -1, 1, 4), {channels});
  const Tensor mean_in = Make(t, Spread(channels, -0.5, 0.5, 5), {channels});
  const Tensor var_in = Make(t, Spread(channels, 0.5, 1.5, 6), {channels});
  const std::vector<double> xv = Values(x), dyv = Values(dy), sv = Values(scale),
                            ov = Values(offset);
  Moments m = training ? RefMoments(xv, rows, channels) : Moments{Values(mean_in), Values(var_in)};

  std::vector<double> y(n), dx(n), dscale(channels, 0.0), doffset(channels, 0.0);
  for (int64_t c = 0; c < channels; ++c) {
    const double inv_std = 1 / std::sqrt(m.var[c] + kEpsilon);
    double sum_dy = 0, sum_dy_xc = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r * channels + c;
      y[i] = (xv[i] - m.mean[c]) * inv_std * sv[c] + ov[c];
      sum_dy += dyv[i];
      sum_dy_xc += dyv[i] * (xv[i] - m.mean[c]);
    }
    dscale[c] = sum_dy_xc * inv_std;
    doffset[c] = sum_dy;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r * channels + c;
      dx[i] = sv[c] * inv_std *
              (training ? dyv[i] - sum_dy / rows -
                              (xv[i] - m.mean[c]) * sum_dy_xc / rows * inv_std * inv_std
                        : dyv[i]);
    }
  }

  auto out = MustRun("FusedBatchNorm", BnAttrs(t, training), {x, scale, offset, mean_in, var_in});
  CheckAgainst(out[0], shape, AsRef(y));
  std::vector<double> running_var = m.var;
  if (training) {
    for (double& v : running_var) v *= rows / (rows - 1.0);  // Bessel's correction
  }
  CheckAgainst(out[1], TensorShape({channels}), AsRef(m.mean));
  CheckAgainst(out[2], TensorShape({channels}), AsRef(running_var));
  CheckAgainst(out[3], TensorShape({channels}), AsRef(m.mean));
  CheckAgainst(out[4], TensorShape({channels}), AsRef(m.var));

  AttrMap grad_attrs = BnAttrs(t, training);
  grad_attrs.erase("exponential_avg_factor");  // the forward's alone
  auto grad = MustRun("FusedBatchNormGrad", grad_attrs,
                      {dy, x, scale, training ? out[3] : mean_in, training ? out[4] : var_in});
  CheckAgainst(grad[0], shape, AsRef(dx));
  CheckAgainst(grad[1], TensorShape({channels}), AsRef(dscale));
  CheckAgainst(grad[2], TensorShape({channels}), AsRef(doffset));
}

TEST_CASE("FusedBatchNorm and its gradient match float64 references") {
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    for (int64_t channels : BlockCrossingDepths()) {
      for (bool training : {true, false}) {
        for (bool edges : {false, true}) {
          INFO(DTypeName(t) << ", " << channels << " channels, "
                            << (training ? "training" : "inference")
                            << (edges ? ", edge values" : ""));
          CheckBatchNorm(t, channels, training, edges);
        }
      }
    }
  }
}

TEST_CASE("FusedBatchNorm averages the running estimates with exponential_avg_factor") {
  const Tensor x = Doubles({1, 10, 3, 20, 5, 60, 7, 10}, {1, 2, 2, 2});  // channels 0 and 1
  const Tensor ones = Doubles({1, 1}, {2}), zeros = Doubles({0, 0}, {2});
  const Tensor mean_in = Doubles({2, 4}, {2}), var_in = Doubles({8, 16}, {2});
  auto out = MustRun("FusedBatchNorm", BnAttrs(DType::kFloat64, true, 0.25),
                     {x, ones, zeros, mean_in, var_in});
  // Channel 0: mean 4, unbiased variance 20/3; channel 1: mean 25, 1700/3.
  CheckClose(out[1], TensorShape({2}), {0.75 * 2 + 0.25 * 4, 0.75 * 4 + 0.25 * 25}, 1e-12);
  CheckClose(out[2], TensorShape({2}), {0.75 * 8 + 0.25 * 20 / 3.0, 0.75 * 16 + 0.25 * 1700 / 3.0},
             1e-12);
  // With the default factor the estimates are not read and may be empty.
  auto empty = MustRun("FusedBatchNorm", BnAttrs(DType::kFloat64, true),
                       {x, ones, zeros, Doubles({}, {0}), Doubles({}, {0})});
  CheckClose(empty[1], TensorShape({2}), {4, 25}, 1e-12);
  auto refused = RunOp(Registry(), "FusedBatchNorm", BnAttrs(DType::kFloat64, true, 0.25),
                       {x, ones, zeros, Doubles({}, {0}), Doubles({}, {0})});
  CHECK(refused.status().code() == Code::kInvalidArgument);
  CHECK(refused.status().message().find("mean") != std::string::npos);
}

TEST_CASE("FusedBatchNorm refuses inputs that do not fit and NCHW") {
  const Tensor x = Doubles(std::vector<double>(12, 1.0), {1, 2, 2, 3});
  const Tensor three = Doubles({1, 1, 1}, {3}), two = Doubles({1, 1}, {2});
  auto scale = RunOp(Registry(), "FusedBatchNorm", BnAttrs(DType::kFloat64, false),
                     {x, two, three, three, three});
  CHECK(scale.status().code() == Code::kInvalidArgument);
  CHECK(scale.status().message().find("scale") != std::string::npos);
  auto rank = RunOp(Registry(), "FusedBatchNorm", BnAttrs(DType::kFloat64, false),
                    {Doubles({1, 2, 3}, {1, 3}), three, three, three, three});
  CHECK(rank.status().code() == Code::kInvalidArgument);
  AttrMap nchw = BnAttrs(DType::kFloat64, false);
  nchw["data_format"] = std::string("NCHW");
  auto format = RunOp(Registry(), "FusedBatchNorm", nchw, {x, three, three, three, three});
  CHECK(format.status().code() == Code::kInvalidArgument);
  CHECK(format.status().message().find("NCHW") != std::string::npos);
}

}  // namespace
}  // namespace tfd::testing::nn
