// The Deep MNIST convnet's convolutions (batch 50, 5x5 SAME, stride 1) and
// their two gradients, each beside the same computation written as Eigen's
// Tensor-module expressions: the patches of the input extracted lazily and
// contracted with the filter, which is how TensorFlow's SpatialConvolution
// (and its backward counterparts) formulate it. tfd's kernels copy blocks of
// patches and multiply them with a GEMM (kernels/nn/conv_gemm.h); this is
// the comparison that choice rests on.
//
// The input gradient is the convolution of the output gradient with the
// filter turned by 180 degrees and its depths swapped; the filter gradient
// is the input's patches, transposed, times the output gradient.
#include <unsupported/Eigen/CXX11/Tensor>

#include "bench/kernel_cases_internal.h"

namespace tfd::bench {
namespace {

using namespace cases_internal;

constexpr int64_t kConvBatch = 50, kWindow = 5;

using Tensor4 = Eigen::TensorMap<Eigen::Tensor<const float, 4, Eigen::RowMajor>>;
using Out2 = Eigen::TensorMap<Eigen::Tensor<float, 2, Eigen::RowMajor>>;
using Pair = Eigen::IndexPair<Eigen::DenseIndex>;

struct ConvLayer {
  int64_t size, in_depth, out_depth;
  const char* role;
};

Tensor Sizes(const TensorShape& s) {
  std::vector<int32_t> v(s.dims().begin(), s.dims().end());
  return Tensor::FromVector<int32_t>(v);
}

const AttrMap& ConvAttrs() {
  static const AttrMap attrs = {{"T", DType::kFloat32},
                                {"strides", std::vector<int64_t>{1, 1, 1, 1}},
                                {"padding", std::string("SAME")}};
  return attrs;
}

// [pixels, out_depth] = patches of x [b, s, s, in] (SAME, stride 1) times
// w seen as [window * window * in, out].
template <typename W>
void PatchProduct(const Tensor4& x, const W& w, int64_t in, int64_t out, Out2& y) {
  const Eigen::DenseIndex pixels = x.dimension(0) * x.dimension(1) * x.dimension(2);
  const Eigen::array<Eigen::DenseIndex, 2> patch_shape = {pixels, kWindow * kWindow * in};
  const Eigen::array<Eigen::DenseIndex, 2> filter_shape = {kWindow * kWindow * in, out};
  const Eigen::array<Pair, 1> dims = {Pair(1, 0)};
  y = x.extract_image_patches(kWindow, kWindow, 1, 1, 1, 1, Eigen::PADDING_SAME)
          .reshape(patch_shape)
          .contract(w.reshape(filter_shape), dims);
}

// One layer's operands, random, and their shapes as Eigen sees them.
struct LayerOperands {
  ConvLayer l;
  TensorShape in_shape, filter_shape, out_shape;
  Tensor x, w, dy;
  int64_t pixels;
  Eigen::array<Eigen::DenseIndex, 4> in_dims, out_dims, w_dims;

  LayerOperands(const ConvLayer& layer, std::mt19937& rng)
      : l(layer),
        in_shape({kConvBatch, l.size, l.size, l.in_depth}),
        filter_shape({kWindow, kWindow, l.in_depth, l.out_depth}),
        out_shape({kConvBatch, l.size, l.size, l.out_depth}),
        x(Uniform(rng, in_shape, 0, 1)),
        w(Uniform(rng, filter_shape, -0.2f, 0.2f)),
        dy(Uniform(rng, out_shape, -1, 1)),
        pixels(kConvBatch * l.size * l.size),
        in_dims({kConvBatch, l.size, l.size, l.in_depth}),
        out_dims({kConvBatch, l.size, l.size, l.out_depth}),
        w_dims({kWindow, kWindow, l.in_depth, l.out_depth}) {}
};

Status AddForward(std::vector<KernelCase>& cases, const OpRegistry& r, const KernelEnv& env,
                  const LayerOperands& o) {
  TFD_ASSIGN_OR_RETURN(auto k,
                       KernelHarness::Create(r, env, "Conv2D", ConvAttrs(), {Val(o.x), Val(o.w)}));
  auto s = std::make_shared<Pure>();
  s->outputs.emplace_back(o.pixels, o.l.out_depth);
  cases.push_back(MakePure(
      "Conv2D", ShapeOf(o.x) + " * " + ShapeOf(o.w), std::string(o.l.role) + ", fwd",
      std::move(k), s,
      [X = Copy(o.x), W = Copy(o.w), in_dims = o.in_dims, w_dims = o.w_dims, l = o.l](Pure& p) {
        const Tensor4 xt(X.data(), in_dims), wt(W.data(), w_dims);
        Out2 y(p.outputs[0].data(), p.outputs[0].rows(), l.out_depth);
        PatchProduct(xt, wt, l.in_depth, l.out_depth, y);
      }));
  return OkStatus();
}

Status AddInputGradient(std::vector<KernelCase>& cases, const OpRegistry& r,
                        const KernelEnv& env, const LayerOperands& o) {
  TFD_ASSIGN_OR_RETURN(auto k,
                       KernelHarness::Create(r, env, "Conv2DBackpropInput", ConvAttrs(),
                                             {Val(Sizes(o.in_shape)), Val(o.w), Val(o.dy)}));
  auto s = std::make_shared<Pure>();
  s->outputs.emplace_back(o.pixels, o.l.in_depth);
  cases.push_back(MakePure(
      "Conv2DBackpropInput", ShapeOf(o.dy) + " * " + ShapeOf(o.w) + "'",
      std::string(o.l.role) + ", d input", std::move(k), s,
      [DY = Copy(o.dy), W = Copy(o.w), out_dims = o.out_dims, w_dims = o.w_dims,
       l = o.l](Pure& p) {
        const Tensor4 dyt(DY.data(), out_dims), wt(W.data(), w_dims);
        const Eigen::array<bool, 4> turn = {true, true, false, false};
        const Eigen::array<int, 4> swap = {0, 1, 3, 2};
        Out2 dx(p.outputs[0].data(), p.outputs[0].rows(), l.in_depth);
        PatchProduct(dyt, wt.reverse(turn).shuffle(swap), l.out_depth, l.in_depth, dx);
      }));
  return OkStatus();
}

Status AddFilterGradient(std::vector<KernelCase>& cases, const OpRegistry& r,
                         const KernelEnv& env, const LayerOperands& o) {
  TFD_ASSIGN_OR_RETURN(auto k,
                       KernelHarness::Create(r, env, "Conv2DBackpropFilter", ConvAttrs(),
                                             {Val(o.x), Val(Sizes(o.filter_shape)), Val(o.dy)}));
  auto s = std::make_shared<Pure>();
  s->outputs.emplace_back(kWindow * kWindow * o.l.in_depth, o.l.out_depth);
  cases.push_back(MakePure(
      "Conv2DBackpropFilter", ShapeOf(o.x) + " * " + ShapeOf(o.w),
      std::string(o.l.role) + ", d filter", std::move(k), s,
      [X = Copy(o.x), DY = Copy(o.dy), in_dims = o.in_dims, out_dims = o.out_dims,
       pixels = o.pixels, l = o.l](Pure& p) {
        const Tensor4 xt(X.data(), in_dims), dyt(DY.data(), out_dims);
        const Eigen::array<Eigen::DenseIndex, 2> patch_shape = {pixels,
                                                                kWindow * kWindow * l.in_depth};
        const Eigen::array<Eigen::DenseIndex, 2> grad_shape = {pixels, l.out_depth};
        const Eigen::array<Pair, 1> dims = {Pair(0, 0)};
        Out2 dw(p.outputs[0].data(), p.outputs[0].rows(), l.out_depth);
        dw = xt.extract_image_patches(kWindow, kWindow, 1, 1, 1, 1, Eigen::PADDING_SAME)
                 .reshape(patch_shape)
                 .contract(dyt.reshape(grad_shape), dims);
      }));
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<KernelCase>> ConvKernelCases(const OpRegistry& r, const KernelEnv& env) {
  std::mt19937 rng(3);
  std::vector<KernelCase> cases;
  const ConvLayer layers[] = {{28, 1, 32, "conv 1"}, {14, 32, 64, "conv 2"}};
  for (const ConvLayer& l : layers) {
    const LayerOperands o(l, rng);
    TFD_RETURN_IF_ERROR(AddForward(cases, r, env, o));
    TFD_RETURN_IF_ERROR(AddInputGradient(cases, r, env, o));
    TFD_RETURN_IF_ERROR(AddFilterGradient(cases, r, env, o));
  }
  return cases;
}

}  // namespace tfd::bench
