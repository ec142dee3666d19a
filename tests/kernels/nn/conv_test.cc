// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter against float64
// references (window_reference.h): every padding, strides, dilations, the
// pointwise fast path, channel counts across the vector blocks, the IEEE edge
// values, the split over intra-op threads, and the errors.
#include <string>
#include <vector>

#include "kernels/nn/window_geometry.h"
#include "tests/kernels/nn/window_reference.h"

namespace tfd::testing::nn {
namespace {

struct ConvCase {
  int64_t rows, cols, k_rows, k_cols, stride_rows, stride_cols, dilation_rows, dilation_cols;
  bool same;
  std::string Describe() const {
    return std::to_string(rows) + "x" + std::to_string(cols) + " image, " +
           std::to_string(k_rows) + "x" + std::to_string(k_cols) + " filter, strides " +
           std::to_string(stride_rows) + "," + std::to_string(stride_cols) + ", dilations " +
           std::to_string(dilation_rows) + "," + std::to_string(dilation_cols) +
           (same ? ", SAME" : ", VALID");
  }
};

// Odd sizes; SAME and VALID; strides above, below and equal to the window;
// dilations; 1x1 windows with and without stride (the pointwise path);
// SAME padding of an odd total.
const ConvCase kCases[] = {
    {5, 7, 3, 3, 1, 1, 1, 1, true},  {7, 5, 3, 2, 2, 1, 1, 1, false},
    {7, 9, 3, 3, 2, 3, 1, 1, true},  {5, 5, 2, 3, 1, 1, 2, 1, true},
    {5, 3, 1, 1, 1, 1, 1, 1, false}, {5, 7, 1, 1, 2, 2, 1, 1, true},
    {7, 7, 2, 2, 3, 3, 1, 1, false}, {9, 7, 3, 3, 1, 2, 2, 3, false},
    {7, 5, 2, 4, 1, 2, 1, 1, true},  // SAME with odd padding: the extra row and col after
};

AttrMap ConvAttrs(DType t, const ConvCase& c) {
  return {{"T", t},
          {"strides", std::vector<int64_t>{1, c.stride_rows, c.stride_cols, 1}},
          {"dilations", std::vector<int64_t>{1, c.dilation_rows, c.dilation_cols, 1}},
          {"padding", std::string(c.same ? "SAME" : "VALID")}};
}

RefGeometry Geometry(const ConvCase& c, int64_t batch, int64_t depth) {
  return {batch, depth, RefDim(c.rows, c.k_rows, c.stride_rows, c.dilation_rows, c.same),
          RefDim(c.cols, c.k_cols, c.stride_cols, c.dilation_cols, c.same)};
}

Tensor Sizes(const TensorShape& s) {
  std::vector<int32_t> v(s.dims().begin(), s.dims().end());
  return Tensor::FromVector<int32_t>(v);
}

// Which operands carry the IEEE edge values.
enum class Edges { kNone, kInputAndGrad, kFilter };

struct ConvOperands {
  std::vector<double> x, f, dy;
};

ConvOperands MakeOperands(const RefGeometry& g, int64_t out_depth, Edges edges, uint32_t salt) {
  const int64_t image = g.rows.in * g.cols.in * g.depth;
  const int64_t taps = g.rows.k * g.cols.k * g.depth;
  ConvOperands o{Spread(g.n * image, -1, 1, salt), Spread(taps * out_depth, -1, 1, salt + 1),
                 Spread(g.n * g.rows.out * g.cols.out * out_depth, -1, 1, salt + 2)};
  const std::vector<double> e = EdgeValues();
  if (edges == Edges::kInputAndGrad) {
    // In the second image only, so the first checks finite arithmetic.
    for (int64_t i = image, k = 0; i < 2 * image; i += 5, ++k) o.x[i] = e[k % e.size()];
    for (size_t i = 3, k = 0; i < o.dy.size(); i += 11, ++k) o.dy[i] = e[k % e.size()];
  } else if (edges == Edges::kFilter) {
    // In output channel 0 only, so the others stay finite.
    for (int64_t t = 0, k = 0; t < taps; t += 2, ++k) o.f[t * out_depth] = e[k % e.size()];
  }
  return o;
}

// All three kernels on one case, against the references.
void CheckConvCase(DType t, const ConvCase& c, int64_t depth, int64_t out_depth, Edges edges,
                   const RunOpOptions& options = {}) {
  const RefGeometry g = Geometry(c, 2, depth);
  const ConvOperands o = MakeOperands(g, out_depth, edges, static_cast<uint32_t>(depth * 31));
  const TensorShape in_shape = g.InShape(), out_shape = g.OutShape(out_depth);
  const TensorShape f_shape({c.k_rows, c.k_cols, depth, out_depth});
  const Tensor x = Make(t, o.x, in_shape), f = Make(t, o.f, f_shape), dy = Make(t, o.dy, out_shape);
  // The references see exactly the values the kernels do (float32-rounded).
  const std::vector<double> xv = Values(x), fv = Values(f), dyv = Values(dy);
  const AttrMap attrs = ConvAttrs(t, c);

  auto y = RunOp(Registry(), "Conv2D", attrs, {x, f}, options);
  REQUIRE(y.ok());
  {
    INFO("Conv2D");
    CheckAgainst((*y)[0], out_shape, RefConv(g, xv, fv, out_depth));
  }
  auto dx = RunOp(Registry(), "Conv2DBackpropInput", attrs, {Sizes(in_shape), f, dy}, options);
  REQUIRE(dx.ok());
  {
    INFO("Conv2DBackpropInput");
    CheckAgainst((*dx)[0], in_shape, RefConvInputGrad(g, fv, dyv, out_depth));
  }
  auto df = RunOp(Registry(), "Conv2DBackpropFilter", attrs, {x, Sizes(f_shape), dy}, options);
  REQUIRE(df.ok());
  {
    INFO("Conv2DBackpropFilter");
    CheckAgainst((*df)[0], f_shape, RefConvFilterGrad(g, xv, dyv, out_depth));
  }
}

TEST_CASE("Conv2D and its gradients match float64 references across shapes and edge values") {
  const std::vector<int64_t>& depths = BlockCrossingDepths();
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    for (size_t i = 0; i < depths.size(); ++i) {
      // Each case meets several depths; the output depths are rotated so
      // that every pair of block positions comes up.
      for (size_t k = 0; k < std::size(kCases); k += 3) {
        const ConvCase& c = kCases[(i + k) % std::size(kCases)];
        const int64_t out_depth = depths[(i + 3 + k) % depths.size()];
        for (Edges e : {Edges::kNone, Edges::kInputAndGrad, Edges::kFilter}) {
          INFO(DTypeName(t) << ", " << c.Describe() << ", depth " << depths[i] << " -> "
                            << out_depth << ", edge values " << static_cast<int>(e));
          CheckConvCase(t, c, depths[i], out_depth, e);
        }
      }
    }
  }
}

TEST_CASE("Conv2D keeps denormals and lets NaN through the GEMM") {
  const float denorm = std::numeric_limits<float>::denorm_min() * 3;
  const AttrMap attrs = {{"T", DType::kFloat32},
                         {"strides", std::vector<int64_t>{1, 1, 1, 1}},
                         {"padding", std::string("VALID")}};
  // A 1x1 filter of ones passes the input through: nothing flushed to zero.
  auto y = MustRun("Conv2D", attrs,
                   {Tensor::FromVector<float>({denorm, -denorm, 0.0f}, TensorShape({1, 1, 3, 1})),
                    Tensor::FromVector<float>({1.0f}, TensorShape({1, 1, 1, 1}))});
  CHECK(y[0].data<float>()[0] == denorm);
  CHECK(y[0].data<float>()[1] == -denorm);
  CHECK(y[0].data<float>()[2] == 0.0f);
}

TEST_CASE("Conv2D split over intra-op threads matches the references") {
  // Large enough (some 5M multiply-adds) to be split over four threads.
  ResourceMgr resources;
  KernelEnv env;
  env.resources = &resources;
  env.compute_threads = 4;
  RunOpOptions options;
  options.env = &env;
  const ConvCase c{17, 17, 3, 3, 1, 1, 1, 1, true};
  CheckConvCase(DType::kFloat32, c, 16, 33, Edges::kNone, options);
  CheckConvCase(DType::kFloat32, {17, 17, 1, 1, 1, 1, 1, 1, false}, 64, 80, Edges::kNone, options);
}

TEST_CASE("Conv2D at edge shapes: a 1x1 image; no batch; no channels") {
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    INFO(DTypeName(t));
    // A 3x3 SAME window over a 1x1 image sees only its centre tap.
    const ConvCase one{1, 1, 3, 3, 2, 2, 1, 1, true};
    CheckConvCase(t, one, 3, 2, Edges::kNone);
    const AttrMap attrs = ConvAttrs(t, {1, 1, 3, 3, 1, 1, 1, 1, true});
    auto empty = MustRun("Conv2D", attrs, {Make(t, {}, {0, 4, 4, 2}), Make(t, {}, {3, 3, 2, 5})});
    CHECK(empty[0].shape() == TensorShape({0, 4, 4, 5}));
    auto no_depth =
        MustRun("Conv2D", attrs, {Make(t, {}, {1, 2, 2, 0}), Make(t, {}, {3, 3, 0, 2})});
    CheckClose(no_depth[0], TensorShape({1, 2, 2, 2}), std::vector<double>(8, 0.0), 0);
    auto dx = MustRun("Conv2DBackpropInput", attrs,
                      {Sizes(TensorShape({1, 2, 2, 0})), Make(t, {}, {3, 3, 0, 2}),
                       Make(t, std::vector<double>(8, 1.0), {1, 2, 2, 2})});
    CHECK(dx[0].shape() == TensorShape({1, 2, 2, 0}));
    auto df = MustRun("Conv2DBackpropFilter", attrs,
                      {Make(t, {}, {0, 4, 4, 2}), Sizes(TensorShape({3, 3, 2, 5})),
                       Make(t, {}, {0, 4, 4, 5})});
    CheckClose(df[0], TensorShape({3, 3, 2, 5}), std::vector<double>(90, 0.0), 0);
  }
}

Status RunConv(AttrMap attrs, const TensorShape& in, const TensorShape& filter) {
  return RunOp(Registry(), "Conv2D", std::move(attrs),
               {Make(DType::kFloat32, std::vector<double>(in.num_elements(), 1.0), in),
                Make(DType::kFloat32, std::vector<double>(filter.num_elements(), 1.0), filter)})
      .status();
}

TEST_CASE("Conv2D refuses what it does not implement and shapes that do not fit by name") {
  AttrMap attrs = ConvAttrs(DType::kFloat32, kCases[1]);
  // VALID with a window larger than the input: no output (TF's graph-time error).
  Status too_big = RunConv(attrs, TensorShape({1, 2, 5, 1}), TensorShape({3, 2, 1, 1}));
  CHECK(too_big.code() == Code::kInvalidArgument);
  CHECK(too_big.message().find("VALID") != std::string::npos);
  Status depth = RunConv(attrs, TensorShape({1, 7, 5, 2}), TensorShape({3, 2, 3, 1}));
  CHECK(depth.code() == Code::kInvalidArgument);
  CHECK(depth.message().find("depth") != std::string::npos);
  Status rank = RunConv(attrs, TensorShape({7, 5, 2}), TensorShape({3, 2, 2, 1}));
  CHECK(rank.code() == Code::kInvalidArgument);

  const std::pair<const char*, AttrValue> bad[] = {
      {"data_format", std::string("NCHW")},
      {"padding", std::string("EXPLICIT")},
      {"padding", std::string("FULL")},
      {"strides", std::vector<int64_t>{1, 1, 1}},
      {"strides", std::vector<int64_t>{2, 1, 1, 1}},
      {"strides", std::vector<int64_t>{1, 0, 1, 1}},
      {"dilations", std::vector<int64_t>{1, 1, 1, 2}},
  };
  for (const auto& [name, value] : bad) {
    AttrMap a = attrs;
    a[name] = value;
    Status s = RunConv(a, TensorShape({1, 7, 5, 1}), TensorShape({3, 2, 1, 1}));
    INFO(name << ": " << s.ToString());
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find(name) != std::string::npos);
  }

  // A gradient whose out_backprop is not the forward's output shape.
  auto wrong = RunOp(Registry(), "Conv2DBackpropInput", attrs,
                     {Sizes(TensorShape({1, 7, 5, 1})), Make(DType::kFloat32, {1, 1, 1, 1, 1, 1},
                                                             {3, 2, 1, 1}),
                      Make(DType::kFloat32, std::vector<double>(12, 1.0), {1, 4, 3, 1})});
  CHECK(wrong.status().code() == Code::kInvalidArgument);
  CHECK(wrong.status().message().find("out_backprop") != std::string::npos);
  auto sizes = RunOp(Registry(), "Conv2DBackpropFilter", attrs,
                     {Make(DType::kFloat32, std::vector<double>(35, 1.0), {1, 7, 5, 1}),
                      Tensor::FromVector<int32_t>({3, -2, 1, 1}),
                      Make(DType::kFloat32, std::vector<double>(12, 1.0), {1, 3, 4, 1})});
  CHECK(sizes.status().code() == Code::kInvalidArgument);
  CHECK(sizes.status().message().find("filter_sizes") != std::string::npos);
}

TEST_CASE("Conv2D's shape functions infer what is known and refuse what cannot fit") {
  const OpRegistration* conv = Registry().Find("Conv2D");
  REQUIRE(conv != nullptr);
  const AttrMap attrs = ConvAttrs(DType::kFloat32, kCases[2]);  // 3x3 SAME, strides 2, 3
  auto infer = [&](PartialShape in, PartialShape filter) {
    InferenceContext c(attrs, {std::move(in), std::move(filter)},
                       {DType::kFloat32, DType::kFloat32}, {nullptr, nullptr}, 1);
    Status s = conv->shape_fn(c);
    return std::make_pair(s, s.ok() ? c.output(0) : PartialShape::Unknown());
  };
  CHECK(infer(PartialShape({4, 7, 9, 3}), PartialShape({3, 3, 3, 8})).second ==
        PartialShape({4, 4, 3, 8}));
  // SAME's size needs no filter; the batch and unknown sizes stay unknown.
  CHECK(infer(PartialShape({-1, 7, -1, 3}), PartialShape::Unknown()).second ==
        PartialShape({-1, 4, -1, -1}));
  CHECK(infer(PartialShape::Unknown(), PartialShape({3, 3, 3, 8})).second ==
        PartialShape({-1, -1, -1, 8}));
  CHECK(infer(PartialShape({4, 7, 9, 3}), PartialShape({3, 3, 2, 8})).first.code() ==
        Code::kInvalidArgument);
  CHECK(infer(PartialShape({7, 9, 3}), PartialShape({3, 3, 3, 8})).first.code() ==
        Code::kInvalidArgument);

  // The input gradient's shape is input_sizes, when it is a constant.
  const OpRegistration* input_grad = Registry().Find("Conv2DBackpropInput");
  const Tensor sizes = Sizes(TensorShape({4, 7, 9, 3}));
  InferenceContext c(attrs, {PartialShape({4}), PartialShape({3, 3, 3, 8}),
                             PartialShape({4, 4, 3, 8})},
                     {DType::kInt32, DType::kFloat32, DType::kFloat32},
                     {&sizes, nullptr, nullptr}, 1);
  REQUIRE(input_grad->shape_fn(c).ok());
  CHECK(c.output(0) == PartialShape({4, 7, 9, 3}));
  InferenceContext clash(attrs, {PartialShape({4}), PartialShape({3, 3, 3, 8}),
                                 PartialShape({4, 5, 3, 8})},
                         {DType::kInt32, DType::kFloat32, DType::kFloat32},
                         {&sizes, nullptr, nullptr}, 1);
  CHECK(input_grad->shape_fn(clash).code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd::testing::nn
