// The convnet ops' GPU arithmetic (kernels/nn/cnn_gpu_math.h), evaluated
// on the CPU for every element of each result and held against the CPU
// kernels on the same inputs. The GPU kernels run exactly these functions,
// one thread per element, so their index math (taps, padding, strides,
// dilations, the gathers of the gradients) and IEEE behaviour (NaN and inf
// through sums, the padding multiplied or dropped, MaxPool's NaN and ties)
// are checked here, on machines without a GPU; tests/gpu/gpu_kernels_test.cc
// checks the launches themselves where there is one.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/nn/cnn_gpu_math.h"
#include "kernels/nn/cnn_gpu_window.h"
#include "tests/kernels/nn/window_reference.h"

namespace tfd::testing::nn {
namespace {

namespace cnn = gpu::cnn;
using kernels::nn::ConvGeometry;

// One windowed op's shapes: input [batch, rows, cols, depth], a k_rows x
// k_cols window; `out` is Conv2D's output depth or the depthwise multiplier.
struct Case {
  const char* what;
  int64_t batch, rows, cols, depth, k_rows, k_cols, stride_rows, stride_cols;
  int64_t dilation_rows, dilation_cols;
  bool same;
  int64_t out;
};

const Case kConvCases[] = {
    {"a 1x1 image under a 3x3 SAME window", 2, 1, 1, 3, 3, 3, 1, 1, 1, 1, true, 2},
    {"a 1x1 image, stride 2", 1, 1, 1, 2, 3, 3, 2, 2, 1, 1, true, 3},
    {"stride larger than the window, VALID", 2, 8, 7, 2, 2, 2, 3, 3, 1, 1, false, 3},
    {"stride larger than the window, SAME", 2, 8, 7, 2, 2, 2, 3, 4, 1, 1, true, 3},
    {"dilations, SAME", 2, 9, 7, 2, 3, 3, 1, 2, 2, 3, true, 3},
    {"dilations and strides, VALID", 2, 9, 11, 3, 3, 2, 2, 1, 2, 3, false, 2},
    {"SAME, even padding totals", 2, 5, 5, 2, 3, 3, 1, 1, 1, 1, true, 3},
    {"SAME, odd padding totals", 2, 6, 7, 2, 4, 2, 1, 1, 1, 1, true, 2},
    {"SAME, odd and even totals with stride 2", 2, 6, 7, 3, 3, 3, 2, 2, 1, 1, true, 2},
    {"VALID leaving one output", 2, 5, 4, 2, 5, 4, 1, 1, 1, 1, false, 3},
    {"pointwise (1x1, stride 1)", 2, 4, 3, 5, 1, 1, 1, 1, 1, 1, false, 4},
    {"an empty batch", 0, 5, 5, 2, 3, 3, 1, 1, 1, 1, true, 3},
    {"no channels", 1, 4, 4, 0, 3, 3, 1, 1, 1, 1, true, 2},
    {"Deep MNIST's first layer: 28x28x1 -> 5x5x32", 2, 28, 28, 1, 5, 5, 1, 1, 1, 1, true, 32},
    {"Deep MNIST's second layer: 14x14x32 -> 5x5x64", 2, 14, 14, 32, 5, 5, 1, 1, 1, 1, true, 64},
};

const Case kPoolCases[] = {
    {"a 1x1 image under a 2x2 SAME window", 2, 1, 1, 3, 2, 2, 2, 2, 1, 1, true, 0},
    {"a 1x1 image under a 3x3 SAME window", 1, 1, 1, 2, 3, 3, 1, 1, 1, 1, true, 0},
    {"stride larger than the window, VALID", 2, 8, 7, 2, 2, 2, 3, 3, 1, 1, false, 0},
    {"stride larger than the window, SAME", 2, 8, 7, 2, 2, 1, 3, 4, 1, 1, true, 0},
    {"overlapping windows, SAME, even totals", 2, 5, 5, 2, 3, 3, 1, 1, 1, 1, true, 0},
    {"overlapping windows, SAME, odd totals", 2, 6, 7, 2, 4, 2, 1, 1, 1, 1, true, 0},
    {"SAME, odd and even totals with stride 2", 2, 6, 7, 3, 3, 3, 2, 2, 1, 1, true, 0},
    {"VALID leaving one output", 2, 5, 4, 2, 5, 4, 1, 1, 1, 1, false, 0},
    {"an empty batch", 0, 5, 5, 2, 2, 2, 2, 2, 1, 1, true, 0},
    {"Deep MNIST's first pooling: 28x28x32, 2x2", 2, 28, 28, 32, 2, 2, 2, 2, 1, 1, true, 0},
    {"Deep MNIST's second pooling: 14x14x64, 2x2", 2, 14, 14, 64, 2, 2, 2, 2, 1, 1, true, 0},
};

// What the inputs hold besides values in [-1, 1).
enum class Inputs {
  kPlain,
  kEdges,  // inf, -inf, NaN, signed zeros and denormals scattered through every input
  kTies,   // values on a grid of 0.5 (many equal maxima), and a few edge values
};

const char* InputsName(Inputs k) {
  return k == Inputs::kPlain ? "plain" : k == Inputs::kEdges ? "edge values" : "ties";
}

template <typename T>
Tensor Operand(const TensorShape& shape, uint32_t salt, Inputs kind) {
  const int64_t n = shape.num_elements();
  std::vector<double> v = kind == Inputs::kPlain ? Spread(n, -1, 1, salt)
                                                 : WithEdges(n, salt, salt % 5, 13 + salt % 7);
  if (kind == Inputs::kTies) {
    for (double& x : v) x = std::isfinite(x) ? std::round(x * 2) / 2 : x;
  }
  return Make(DTypeOf<T>::value, v, shape);
}

Tensor Sizes(const TensorShape& s) {
  std::vector<int32_t> v(s.dims().begin(), s.dims().end());
  return Tensor::FromVector<int32_t>(v);
}

AttrMap Attrs(DType t, const Case& c, bool pool) {
  AttrMap a = {{"T", t},
               {"strides", std::vector<int64_t>{1, c.stride_rows, c.stride_cols, 1}},
               {"padding", std::string(c.same ? "SAME" : "VALID")}};
  if (pool) {
    a["ksize"] = std::vector<int64_t>{1, c.k_rows, c.k_cols, 1};
  } else {
    a["dilations"] = std::vector<int64_t>{1, c.dilation_rows, c.dilation_cols, 1};
  }
  return a;
}

// Every element of `cpu`, the CPU kernel's result, against element(i) of
// the GPU arithmetic: NaN where it is NaN, the same infinity, else equal
// within the rounding of sums of up to `terms` terms of magnitude <= 1
// added in another order.
template <typename T, typename Element>
void CheckEveryElement(const char* op, const Tensor& cpu, int64_t count, int64_t terms,
                       Element element) {
  INFO(op);
  REQUIRE(count == cpu.num_elements());
  const double tol =
      4 * static_cast<double>(std::numeric_limits<T>::epsilon()) * std::max<int64_t>(terms, 1);
  int failures = 0;
  for (int64_t i = 0; i < count && failures < 5; ++i) {
    const double want = cpu.data<T>()[i], got = element(i);
    const bool ok = std::isnan(want)   ? std::isnan(got)
                    : std::isinf(want) ? got == want
                                       : std::abs(got - want) <= tol * (1 + std::abs(want));
    if (!ok) {
      ++failures;
      FAIL_CHECK("element " << i << " of " << count << ": CPU " << want << ", GPU math " << got);
    }
  }
}

template <typename T>
void CheckConvFamily(const Case& c, bool depthwise, Inputs kind) {
  const DType t = DTypeOf<T>::value;
  const int64_t filter_out = c.out;  // Conv2D: out_depth; depthwise: the multiplier
  const TensorShape in_shape({c.batch, c.rows, c.cols, c.depth});
  const TensorShape f_shape({c.k_rows, c.k_cols, c.depth, filter_out});
  const AttrMap attrs = Attrs(t, c, false);
  auto window = kernels::nn::ConvAttrsFrom(attrs);
  REQUIRE(window.ok());
  auto g = depthwise ? kernels::nn::MakeDepthwiseGeometry(*window, in_shape.dims(), f_shape.dims())
                     : kernels::nn::MakeConvGeometry(*window, in_shape.dims(), f_shape.dims());
  REQUIRE(g.ok());
  const TfdGpuWindow w = kernels::nn::ToGpuWindow(*g);
  const auto out_dims = g->output_dims();
  const TensorShape out_shape({out_dims[0], out_dims[1], out_dims[2], out_dims[3]});
  const Tensor x = Operand<T>(in_shape, 1, kind), f = Operand<T>(f_shape, 2, kind);
  const Tensor dy = Operand<T>(out_shape, 3, kind);

  const std::string name = depthwise ? "DepthwiseConv2dNative" : "Conv2D";
  const Tensor y = MustRun(name, attrs, {x, f})[0];
  const Tensor dx = MustRun(name + "BackpropInput", attrs, {Sizes(in_shape), f, dy})[0];
  const Tensor df = MustRun(name + "BackpropFilter", attrs, {x, Sizes(f_shape), dy})[0];

  const int forward = depthwise ? TFD_GPU_DEPTHWISE : TFD_GPU_CONV2D;
  const int input_grad = depthwise ? TFD_GPU_DEPTHWISE_INPUT_GRAD : TFD_GPU_CONV2D_INPUT_GRAD;
  const int filter_grad = depthwise ? TFD_GPU_DEPTHWISE_FILTER_GRAD : TFD_GPU_CONV2D_FILTER_GRAD;
  const int64_t taps = c.k_rows * c.k_cols;
  const T *xp = x.data<T>(), *fp = f.data<T>(), *dyp = dy.data<T>();
  CheckEveryElement<T>("forward", y, cnn::ConvResultElements(forward, w),
                       depthwise ? taps : taps * c.depth,
                       [&](int64_t i) { return cnn::ConvElement(forward, w, xp, fp, i); });
  CheckEveryElement<T>("input gradient", dx, cnn::ConvResultElements(input_grad, w),
                       taps * filter_out,
                       [&](int64_t i) { return cnn::ConvElement(input_grad, w, fp, dyp, i); });
  CheckEveryElement<T>("filter gradient", df, cnn::ConvResultElements(filter_grad, w),
                       g->out_pixels(),
                       [&](int64_t i) { return cnn::ConvElement(filter_grad, w, xp, dyp, i); });
}

template <typename T>
void CheckPoolFamily(const Case& c, Inputs kind) {
  const DType t = DTypeOf<T>::value;
  const TensorShape in_shape({c.batch, c.rows, c.cols, c.depth});
  const AttrMap attrs = Attrs(t, c, true);
  auto window = kernels::nn::PoolAttrsFrom(attrs);
  REQUIRE(window.ok());
  auto g = kernels::nn::MakePoolGeometry(*window, in_shape.dims());
  REQUIRE(g.ok());
  const TfdGpuWindow w = kernels::nn::ToGpuWindow(*g);
  const Tensor x = Operand<T>(in_shape, 4, kind);

  const Tensor max = MustRun("MaxPool", attrs, {x})[0];
  const Tensor avg = MustRun("AvgPool", attrs, {x})[0];
  const Tensor dy = Operand<T>(max.shape(), 5, kind);
  const Tensor max_dx = MustRun("MaxPoolGrad", attrs, {x, max, dy})[0];
  const Tensor avg_dx = MustRun("AvgPoolGrad", attrs, {Sizes(in_shape), dy})[0];

  const int64_t taps = c.k_rows * c.k_cols;
  const T *xp = x.data<T>(), *dyp = dy.data<T>();
  for (auto [op, cpu, what] : {std::tuple{TFD_GPU_MAX_POOL, &max, "MaxPool"},
                               std::tuple{TFD_GPU_AVG_POOL, &avg, "AvgPool"},
                               std::tuple{TFD_GPU_MAX_POOL_GRAD, &max_dx, "MaxPoolGrad"},
                               std::tuple{TFD_GPU_AVG_POOL_GRAD, &avg_dx, "AvgPoolGrad"}}) {
    const int pool_op = op;
    CheckEveryElement<T>(what, *cpu, cnn::PoolResultElements(pool_op, w), taps,
                         [&](int64_t i) { return cnn::PoolElement(pool_op, w, xp, dyp, i); });
  }
}

TEST_CASE("the GPU arithmetic of Conv2D and its gradients matches the CPU kernels") {
  for (const Case& c : kConvCases) {
    for (Inputs kind : {Inputs::kPlain, Inputs::kEdges}) {
      INFO(c.what << ", " << InputsName(kind));
      CheckConvFamily<float>(c, false, kind);
      CheckConvFamily<double>(c, false, kind);
    }
  }
}

TEST_CASE("the GPU arithmetic of DepthwiseConv2dNative and its gradients matches the CPU") {
  for (const Case& c : kConvCases) {
    for (Inputs kind : {Inputs::kPlain, Inputs::kEdges}) {
      INFO(c.what << ", " << InputsName(kind));
      // A multiplier of 1 (the CPU's own path) and of c.out.
      Case one = c;
      one.out = 1;
      CheckConvFamily<float>(one, true, kind);
      CheckConvFamily<double>(one, true, kind);
      CheckConvFamily<float>(c, true, kind);
      CheckConvFamily<double>(c, true, kind);
    }
  }
}

TEST_CASE("the GPU arithmetic of MaxPool, AvgPool and their gradients matches the CPU") {
  for (const Case& c : kPoolCases) {
    for (Inputs kind : {Inputs::kPlain, Inputs::kEdges, Inputs::kTies}) {
      INFO(c.what << ", " << InputsName(kind));
      CheckPoolFamily<float>(c, kind);
      CheckPoolFamily<double>(c, kind);
    }
  }
}

// The cases above hold the two against each other; this pins what both
// must do where a window's maximum is not unique, on values written out.
TEST_CASE("the GPU arithmetic of MaxPoolGrad sends a tied window's gradient where the CPU does") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // One 2x3 image, one channel, one 2x3 VALID window: maxima 2 at (0, 1)
  // and (1, 0); then the same with a NaN at (1, 2), which takes it.
  for (const std::vector<double>& image :
       {std::vector<double>{1, 2, 0, 2, -1, 1}, std::vector<double>{1, 2, 0, 2, -1, nan}}) {
    const Case c{"2x3", 1, 2, 3, 1, 2, 3, 1, 1, 1, 1, false, 0};
    const AttrMap attrs = Attrs(DType::kFloat64, c, true);
    const Tensor x = Doubles(image, TensorShape({1, 2, 3, 1}));
    const Tensor dy = Doubles({5}, TensorShape({1, 1, 1, 1}));
    const Tensor cpu = MustRun("MaxPoolGrad", attrs, {x, dy, dy})[0];
    auto g = kernels::nn::MakePoolGeometry(*kernels::nn::PoolAttrsFrom(attrs), x.shape().dims());
    REQUIRE(g.ok());
    const TfdGpuWindow w = kernels::nn::ToGpuWindow(*g);
    std::vector<double> gpu(6);
    for (int64_t i = 0; i < 6; ++i) {
      gpu[i] = cnn::MaxPoolGradAt(w, x.data<double>(), dy.data<double>(), i);
    }
    const std::vector<double> want = std::isnan(image[5]) ? std::vector<double>{0, 0, 0, 0, 0, 5}
                                                          : std::vector<double>{0, 5, 0, 0, 0, 0};
    CHECK(Values(cpu) == want);
    CHECK(gpu == want);
  }
}

}  // namespace
}  // namespace tfd::testing::nn
