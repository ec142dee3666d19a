// MaxPool, AvgPool, MaxPoolGrad and AvgPoolGrad against float64 references:
// SAME and VALID, strides above and below the window, channel counts across
// the vector blocks, odd sizes, and the IEEE edge values (a NaN in a window
// pools to NaN, as in numpy and TensorFlow).
#include <string>
#include <vector>

#include "tests/kernels/nn/window_reference.h"

namespace tfd::testing::nn {
namespace {

struct PoolCase {
  int64_t rows, cols, k_rows, k_cols, stride_rows, stride_cols;
  bool same;
  std::string Describe() const {
    return std::to_string(rows) + "x" + std::to_string(cols) + " image, " +
           std::to_string(k_rows) + "x" + std::to_string(k_cols) + " window, strides " +
           std::to_string(stride_rows) + "," + std::to_string(stride_cols) +
           (same ? ", SAME" : ", VALID");
  }
};

const PoolCase kCases[] = {
    {5, 7, 3, 3, 2, 2, true},  {7, 5, 2, 2, 2, 2, false}, {5, 5, 3, 2, 1, 1, true},
    {7, 7, 1, 1, 2, 2, false}, {7, 9, 2, 3, 3, 1, false}, {5, 7, 4, 4, 1, 1, true},
    {1, 1, 3, 3, 2, 2, true},  // a 1x1 image: every window is mostly padding
};

AttrMap PoolAttrs(DType t, const PoolCase& c) {
  return {{"T", t},
          {"ksize", std::vector<int64_t>{1, c.k_rows, c.k_cols, 1}},
          {"strides", std::vector<int64_t>{1, c.stride_rows, c.stride_cols, 1}},
          {"padding", std::string(c.same ? "SAME" : "VALID")}};
}

// fn(out_index, in_index) for each output element and each of its window's
// elements inside the input, in row-major window order.
template <typename F>
void ForEachWindow(const RefGeometry& g, F&& fn) {
  int64_t o = 0;
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t r = 0; r < g.rows.out; ++r)
      for (int64_t c = 0; c < g.cols.out; ++c)
        for (int64_t d = 0; d < g.depth; ++d, ++o)
          for (int64_t kr = 0; kr < g.rows.k; ++kr)
            for (int64_t kc = 0; kc < g.cols.k; ++kc) {
              const int64_t ir = g.rows.At(r, kr), ic = g.cols.At(c, kc);
              if (g.rows.Inside(ir) && g.cols.Inside(ic)) fn(o, g.InIndex(b, ir, ic, d));
            }
}

int64_t OutSize(const RefGeometry& g) { return g.n * g.rows.out * g.cols.out * g.depth; }
int64_t InSize(const RefGeometry& g) { return g.n * g.rows.in * g.cols.in * g.depth; }

// Per output: the index of the element MaxPool takes (the first NaN, else
// the first maximum), -1 for none.
std::vector<int64_t> RefArgMax(const RefGeometry& g, const std::vector<double>& x) {
  std::vector<int64_t> arg(OutSize(g), -1);
  ForEachWindow(g, [&](int64_t o, int64_t i) {
    const int64_t a = arg[o];
    if (a >= 0 && std::isnan(x[a])) return;
    if (a < 0 || std::isnan(x[i]) || x[i] > x[a]) arg[o] = i;
  });
  return arg;
}

RefValues RefMaxPool(const RefGeometry& g, const std::vector<double>& x) {
  const std::vector<int64_t> arg = RefArgMax(g, x);
  RefValues y(OutSize(g));
  for (size_t o = 0; o < arg.size(); ++o) y.Add(o, x[arg[o]]);
  return y;
}

std::vector<int64_t> TapCounts(const RefGeometry& g) {
  std::vector<int64_t> n(OutSize(g), 0);
  ForEachWindow(g, [&](int64_t o, int64_t) { ++n[o]; });
  return n;
}

RefValues RefAvgPool(const RefGeometry& g, const std::vector<double>& x) {
  const std::vector<int64_t> n = TapCounts(g);
  RefValues y(OutSize(g));
  ForEachWindow(g, [&](int64_t o, int64_t i) { y.Add(o, x[i] / n[o]); });
  return y;
}

RefValues RefMaxPoolGrad(const RefGeometry& g, const std::vector<double>& x,
                         const std::vector<double>& dy) {
  const std::vector<int64_t> arg = RefArgMax(g, x);
  RefValues dx(InSize(g));
  for (size_t o = 0; o < arg.size(); ++o) dx.Add(arg[o], dy[o]);
  return dx;
}

RefValues RefAvgPoolGrad(const RefGeometry& g, const std::vector<double>& dy) {
  const std::vector<int64_t> n = TapCounts(g);
  RefValues dx(InSize(g));
  ForEachWindow(g, [&](int64_t o, int64_t i) { dx.Add(i, dy[o] / n[o]); });
  return dx;
}

Tensor Sizes(const TensorShape& s) {
  std::vector<int32_t> v(s.dims().begin(), s.dims().end());
  return Tensor::FromVector<int32_t>(v);
}

void CheckPoolCase(DType t, const PoolCase& c, int64_t depth, bool edges) {
  const RefGeometry g{2, depth, RefDim(c.rows, c.k_rows, c.stride_rows, 1, c.same),
                      RefDim(c.cols, c.k_cols, c.stride_cols, 1, c.same)};
  const int64_t image = c.rows * c.cols * depth;
  std::vector<double> xs = Spread(InSize(g), -1, 1, static_cast<uint32_t>(depth));
  std::vector<double> dys = Spread(OutSize(g), -1, 1, static_cast<uint32_t>(depth + 50));
  if (edges) {  // the second image only, so the first checks ordinary values
    const std::vector<double> e = EdgeValues();
    for (int64_t i = image, k = 0; i < 2 * image; i += 4, ++k) xs[i] = e[k % e.size()];
    for (size_t i = 1, k = 0; i < dys.size(); i += 6, ++k) dys[i] = e[k % e.size()];
  }
  const Tensor x = Make(t, xs, g.InShape()), dy = Make(t, dys, g.OutShape(depth));
  const std::vector<double> xv = Values(x), dyv = Values(dy);
  const AttrMap attrs = PoolAttrs(t, c);

  auto max = MustRun("MaxPool", attrs, {x});
  {
    INFO("MaxPool");
    CheckAgainst(max[0], g.OutShape(depth), RefMaxPool(g, xv));
  }
  auto avg = MustRun("AvgPool", attrs, {x});
  {
    INFO("AvgPool");
    CheckAgainst(avg[0], g.OutShape(depth), RefAvgPool(g, xv));
  }
  auto max_grad = MustRun("MaxPoolGrad", attrs, {x, max[0], dy});
  {
    INFO("MaxPoolGrad");
    CheckAgainst(max_grad[0], g.InShape(), RefMaxPoolGrad(g, xv, dyv));
  }
  auto avg_grad = MustRun("AvgPoolGrad", attrs, {Sizes(g.InShape()), dy});
  {
    INFO("AvgPoolGrad");
    CheckAgainst(avg_grad[0], g.InShape(), RefAvgPoolGrad(g, dyv));
  }
}

TEST_CASE("pooling and its gradients match float64 references across shapes and edge values") {
  const std::vector<int64_t>& depths = BlockCrossingDepths();
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    for (size_t i = 0; i < depths.size(); ++i) {
      for (size_t k = 0; k < std::size(kCases); k += 2) {
        const PoolCase& c = kCases[(i + k) % std::size(kCases)];
        for (bool edges : {false, true}) {
          INFO(DTypeName(t) << ", " << c.Describe() << ", depth " << depths[i]
                            << (edges ? ", edge values" : ""));
          CheckPoolCase(t, c, depths[i], edges);
        }
      }
    }
  }
}

TEST_CASE("MaxPool: NaN wins wherever it is in the window; infinities pool as numbers") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const PoolCase whole{2, 2, 2, 2, 2, 2, false};  // one window over the whole image
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    INFO(DTypeName(t));
    // Channels: NaN first, NaN last, +inf, all -inf, -0 and +0.
    const std::vector<double> x = {nan, 1, 1, -inf, 0.0,  //
                                   1,   2, inf, -inf, -0.0,  //
                                   3,   3, 1,   -inf, -0.0,  //
                                   2,   nan, 2, -inf, 0.0};
    auto y = MustRun("MaxPool", PoolAttrs(t, whole), {Make(t, x, {1, 2, 2, 5})});
    const std::vector<double> v = Values(y[0]);
    CHECK(std::isnan(v[0]));
    CHECK(std::isnan(v[1]));
    CHECK(v[2] == inf);
    CHECK(v[3] == -inf);
    CHECK(v[4] == 0.0);
    // The gradient goes to the element the value came from: the first NaN,
    // or the first of tied maxima.
    auto dx = MustRun("MaxPoolGrad", PoolAttrs(t, whole),
                      {Make(t, x, {1, 2, 2, 5}), y[0], Make(t, {1, 2, 3, 4, 5}, {1, 1, 1, 5})});
    CheckClose(dx[0], TensorShape({1, 2, 2, 5}),
               {1, 0, 0, 4, 5,  //
                0, 0, 3, 0, 0,  //
                0, 0, 0, 0, 0,  //
                0, 2, 0, 0, 0},
               0);
  }
}

TEST_CASE("pooling refuses what it does not implement and windows that leave nothing") {
  const AttrMap attrs = PoolAttrs(DType::kFloat32, kCases[1]);
  const Tensor x = Make(DType::kFloat32, std::vector<double>(2 * 2 * 1, 1.0), {1, 2, 2, 1});
  const std::pair<const char*, AttrValue> bad[] = {
      {"data_format", std::string("NCHW")},
      {"padding", std::string("EXPLICIT")},
      {"ksize", std::vector<int64_t>{2, 2, 2, 1}},
      {"ksize", std::vector<int64_t>{1, 2, 2}},
      {"strides", std::vector<int64_t>{1, 1, 0, 1}},
  };
  for (const char* op : {"MaxPool", "AvgPool"}) {
    for (const auto& [name, value] : bad) {
      AttrMap a = attrs;
      a[name] = value;
      Status s = RunOp(Registry(), op, a, {x}).status();
      INFO(op << " " << name << ": " << s.ToString());
      CHECK(s.code() == Code::kInvalidArgument);
      CHECK(s.message().find(name) != std::string::npos);
    }
    AttrMap big = attrs;
    big["ksize"] = std::vector<int64_t>{1, 3, 2, 1};
    Status s = RunOp(Registry(), op, big, {x}).status();
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find("VALID") != std::string::npos);
  }
  auto grad = RunOp(Registry(), "AvgPoolGrad", attrs,
                    {Sizes(TensorShape({1, 4, 4, 1})),
                     Make(DType::kFloat32, std::vector<double>(9, 1.0), {1, 3, 3, 1})});
  CHECK(grad.status().code() == Code::kInvalidArgument);
  CHECK(grad.status().message().find("out_backprop") != std::string::npos);

  const OpRegistration* pool = Registry().Find("MaxPool");
  const AttrMap same = PoolAttrs(DType::kFloat32, kCases[0]);  // the context keeps a reference
  InferenceContext c(same, {PartialShape({-1, 5, 7, 3})},
                     {DType::kFloat32}, {nullptr}, 1);
  REQUIRE(pool->shape_fn(c).ok());
  CHECK(c.output(0) == PartialShape({-1, 3, 4, 3}));
}

}  // namespace
}  // namespace tfd::testing::nn
