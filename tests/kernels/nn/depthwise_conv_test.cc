// DepthwiseConv2dNative and its two gradients against float64 direct loops:
// multipliers 1 and above, channel counts across the vector blocks, strides,
// dilations, SAME and VALID, and the IEEE edge values.
#include <string>
#include <vector>

#include "tests/kernels/nn/window_reference.h"

namespace tfd::testing::nn {
namespace {

struct DwCase {
  int64_t rows, cols, k_rows, k_cols, stride_rows, stride_cols, dilation_rows, dilation_cols;
  bool same;
};

const DwCase kCases[] = {
    {5, 7, 3, 3, 1, 1, 1, 1, true}, {7, 5, 3, 2, 2, 1, 1, 1, false},
    {7, 9, 2, 4, 2, 3, 1, 1, true}, {5, 7, 2, 3, 1, 1, 2, 1, true},
    {1, 1, 3, 3, 1, 1, 1, 1, true},
};

// The three references at once: y, dx and df, with the padding's zeros
// multiplied in y and df (as Conv2D's) and skipped in dx.
struct DwRefs {
  RefValues y, dx, df;
};

DwRefs RefDepthwise(const RefGeometry& g, int64_t mult, const std::vector<double>& x,
                    const std::vector<double>& f, const std::vector<double>& dy) {
  const int64_t out_depth = g.depth * mult;
  DwRefs r{RefValues(g.n * g.rows.out * g.cols.out * out_depth),
           RefValues(g.n * g.rows.in * g.cols.in * g.depth),
           RefValues(g.rows.k * g.cols.k * out_depth)};
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t orow = 0; orow < g.rows.out; ++orow)
      for (int64_t ocol = 0; ocol < g.cols.out; ++ocol)
        for (int64_t d = 0; d < g.depth; ++d)
          for (int64_t m = 0; m < mult; ++m) {
            const int64_t o = ((b * g.rows.out + orow) * g.cols.out + ocol) * out_depth +
                              d * mult + m;
            for (int64_t kr = 0; kr < g.rows.k; ++kr)
              for (int64_t kc = 0; kc < g.cols.k; ++kc) {
                const int64_t ir = g.rows.At(orow, kr), ic = g.cols.At(ocol, kc);
                const bool inside = g.rows.Inside(ir) && g.cols.Inside(ic);
                const int64_t fi = (kr * g.cols.k + kc) * out_depth + d * mult + m;
                const double xv = inside ? x[g.InIndex(b, ir, ic, d)] : 0.0;
                r.y.Add(o, xv * f[fi]);
                r.df.Add(fi, xv * dy[o]);
                if (inside) r.dx.Add(g.InIndex(b, ir, ic, d), dy[o] * f[fi]);
              }
          }
  return r;
}

Tensor Sizes(const TensorShape& s) {
  std::vector<int32_t> v(s.dims().begin(), s.dims().end());
  return Tensor::FromVector<int32_t>(v);
}

void CheckDepthwise(DType t, const DwCase& c, int64_t depth, int64_t mult, bool edges) {
  const RefGeometry g{2, depth, RefDim(c.rows, c.k_rows, c.stride_rows, c.dilation_rows, c.same),
                      RefDim(c.cols, c.k_cols, c.stride_cols, c.dilation_cols, c.same)};
  const int64_t out_depth = depth * mult, image = c.rows * c.cols * depth;
  const TensorShape in_shape = g.InShape(), out_shape = g.OutShape(out_depth);
  const TensorShape f_shape({c.k_rows, c.k_cols, depth, mult});
  std::vector<double> xs = Spread(in_shape.num_elements(), -1, 1, 7);
  std::vector<double> fs = Spread(f_shape.num_elements(), -1, 1, 8);
  std::vector<double> dys = Spread(out_shape.num_elements(), -1, 1, 9);
  if (edges) {
    const std::vector<double> e = EdgeValues();
    for (int64_t i = image, k = 0; i < 2 * image; i += 5, ++k) xs[i] = e[k % e.size()];
    for (size_t i = 2, k = 0; i < dys.size(); i += 9, ++k) dys[i] = e[k % e.size()];
    fs[0] = e[0];  // an infinite weight: NaN where its tap is on the padding
  }
  const Tensor x = Make(t, xs, in_shape), f = Make(t, fs, f_shape), dy = Make(t, dys, out_shape);
  const DwRefs want = RefDepthwise(g, mult, Values(x), Values(f), Values(dy));
  AttrMap attrs = {{"T", t},
                   {"strides", std::vector<int64_t>{1, c.stride_rows, c.stride_cols, 1}},
                   {"dilations", std::vector<int64_t>{1, c.dilation_rows, c.dilation_cols, 1}},
                   {"padding", std::string(c.same ? "SAME" : "VALID")}};
  auto y = MustRun("DepthwiseConv2dNative", attrs, {x, f});
  {
    INFO("DepthwiseConv2dNative");
    CheckAgainst(y[0], out_shape, want.y);
  }
  auto dx = MustRun("DepthwiseConv2dNativeBackpropInput", attrs, {Sizes(in_shape), f, dy});
  {
    INFO("DepthwiseConv2dNativeBackpropInput");
    CheckAgainst(dx[0], in_shape, want.dx);
  }
  auto df = MustRun("DepthwiseConv2dNativeBackpropFilter", attrs, {x, Sizes(f_shape), dy});
  {
    INFO("DepthwiseConv2dNativeBackpropFilter");
    CheckAgainst(df[0], f_shape, want.df);
  }
}

TEST_CASE("DepthwiseConv2dNative and its gradients match float64 references") {
  const std::vector<int64_t>& depths = BlockCrossingDepths();
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    for (size_t i = 0; i < depths.size(); ++i) {
      for (int64_t mult : {int64_t{1}, int64_t{3}}) {
        const DwCase& c = kCases[(i + mult) % std::size(kCases)];
        for (bool edges : {false, true}) {
          INFO(DTypeName(t) << ", case " << (i + mult) % std::size(kCases) << ", depth "
                            << depths[i] << ", multiplier " << mult
                            << (edges ? ", edge values" : ""));
          CheckDepthwise(t, c, depths[i], mult, edges);
        }
      }
    }
  }
}

TEST_CASE("DepthwiseConv2dNative refuses a filter of another depth") {
  AttrMap attrs = {{"T", DType::kFloat64},
                   {"strides", std::vector<int64_t>{1, 1, 1, 1}},
                   {"padding", std::string("SAME")}};
  auto out = RunOp(Registry(), "DepthwiseConv2dNative", attrs,
                   {Doubles(std::vector<double>(12, 1.0), {1, 2, 2, 3}),
                    Doubles(std::vector<double>(8, 1.0), {2, 2, 2, 1})});
  CHECK(out.status().code() == Code::kInvalidArgument);
  CHECK(out.status().message().find("depth") != std::string::npos);
}

}  // namespace
}  // namespace tfd::testing::nn
