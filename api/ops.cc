#include "api/ops.h"

#include "api/random_seed.h"
#include "api/variables.h"

namespace tfd::ops {
namespace {

template <typename T>
Tensor VectorOf(std::initializer_list<T> v) {
  return Tensor::FromVector<T>(std::vector<T>(v));
}

template <typename T>
Tensor MatrixOf(std::initializer_list<std::initializer_list<T>> rows) {
  std::vector<T> values;
  int64_t cols = rows.size() ? static_cast<int64_t>(rows.begin()->size()) : 0;
  for (const auto& row : rows) {
    // Ragged rows make no matrix: pad or cut to the first row's width.
    std::vector<T> r(row);
    r.resize(cols);
    values.insert(values.end(), r.begin(), r.end());
  }
  return Tensor::FromVector<T>(values, TensorShape({static_cast<int64_t>(rows.size()), cols}));
}

// A numeric literal converted to `to` (value by value).
Tensor ConvertLiteral(const Tensor& t, DType to) {
  auto out = Tensor::Allocate(to, t.shape());
  if (!out.ok()) return t;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    double v = 0;
    TFD_SWITCH_NUMERIC(t.dtype(), S, { v = static_cast<double>(t.data<S>()[i]); }, { return t; });
    TFD_SWITCH_NUMERIC(to, D, { out->data<D>()[i] = static_cast<D>(v); }, { return t; });
  }
  return *out;
}

Output Single(const Scope& scope, const std::string& op, const std::vector<Output>& inputs,
              AttrMap attrs = {}) {
  return scope.AddOperation(op, inputs, std::move(attrs)).output(0);
}

Output Unary(const Scope& scope, const char* op, const Input& x) {
  return Single(scope, op, {AsOutput(scope, x)});
}

// A binary op; a literal operand takes the dtype of a tensor operand.
Output Binary(const Scope& scope, const char* op, const Input& x, const Input& y) {
  const DType hx = y.is_literal() ? DType::kInvalid : y.output().dtype;
  const DType hy = x.is_literal() ? DType::kInvalid : x.output().dtype;
  return Single(scope, op, {AsOutput(scope, x, hx), AsOutput(scope, y, hy)});
}

Output Reduce(const Scope& scope, const char* op, const Input& x, const Input& axis,
              ReduceAttrs attrs) {
  return Single(scope, op, {AsOutput(scope, x), AsOutput(scope, axis)},
                {{"keep_dims", attrs.keep_dims}});
}

// A random op's seed attrs, taken after its inputs are in the graph (as
// TF1 takes the graph's last op id then).
AttrMap SeedAttrs(const Scope& scope, std::optional<int64_t> seed) {
  const OpSeeds s = GetSeed(scope, seed);
  return {{"seed", s.seed}, {"seed2", s.seed2}};
}

Output Random(const Scope& scope, const char* op, const Input& shape, DType dtype,
              std::optional<int64_t> seed) {
  const Output shape_out = AsOutput(scope, shape);
  AttrMap attrs = SeedAttrs(scope, seed);
  attrs.emplace("dtype", dtype);
  return Single(scope, op, {shape_out}, std::move(attrs));
}

}  // namespace

Input::Input(const Variable& v) : output_(v.value()) {}
Input::Input(std::initializer_list<int> v) {
  std::vector<int32_t> v32(v.begin(), v.end());
  literal_ = Tensor::FromVector<int32_t>(v32);
}
Input::Input(std::initializer_list<int64_t> v) : literal_(VectorOf(v)) {}
Input::Input(std::initializer_list<float> v) : literal_(VectorOf(v)) {}
Input::Input(std::initializer_list<double> v) : literal_(VectorOf(v)) {}
Tensor Input::MatrixLiteral(std::initializer_list<std::initializer_list<int>> rows) {
  std::vector<std::vector<int32_t>> r32;
  for (const auto& row : rows) r32.emplace_back(row.begin(), row.end());
  const int64_t cols = r32.empty() ? 0 : static_cast<int64_t>(r32[0].size());
  std::vector<int32_t> values;
  for (auto& row : r32) {
    row.resize(cols);
    values.insert(values.end(), row.begin(), row.end());
  }
  return Tensor::FromVector<int32_t>(values,
                                     TensorShape({static_cast<int64_t>(r32.size()), cols}));
}
Tensor Input::MatrixLiteral(std::initializer_list<std::initializer_list<float>> rows) {
  return MatrixOf(rows);
}
Tensor Input::MatrixLiteral(std::initializer_list<std::initializer_list<double>> rows) {
  return MatrixOf(rows);
}

Output AsOutput(const Scope& scope, const Input& in, DType dtype_hint) {
  if (!in.is_literal()) return in.output();
  Tensor value = in.literal();
  if (dtype_hint != DType::kInvalid && value.dtype() != dtype_hint && IsNumeric(dtype_hint) &&
      IsNumeric(value.dtype())) {
    value = ConvertLiteral(value, dtype_hint);
  }
  const DType dtype = value.dtype();
  return Single(scope.WithOpName(""), "Const", {},
                {{"value", std::move(value)}, {"dtype", dtype}});
}

Output Const(const Scope& scope, const Input& value) {
  if (!value.is_literal()) return Identity(scope, value);
  const Tensor& t = value.literal();
  return Single(scope, "Const", {}, {{"value", t}, {"dtype", t.dtype()}});
}

Output Placeholder(const Scope& scope, DType dtype, PartialShape shape) {
  return Single(scope, "Placeholder", {}, {{"dtype", dtype}, {"shape", std::move(shape)}});
}

Output PlaceholderWithDefault(const Scope& scope, const Input& value, PartialShape shape) {
  const Output v = AsOutput(scope, value);
  return Single(scope, "PlaceholderWithDefault", {v},
                {{"dtype", v.dtype}, {"shape", std::move(shape)}});
}

Output Identity(const Scope& scope, const Input& x) { return Unary(scope, "Identity", x); }
Output StopGradient(const Scope& s, const Input& x) { return Unary(s, "StopGradient", x); }
Output PreventGradient(const Scope& s, const Input& x, const std::string& message) {
  return Single(s, "PreventGradient", {AsOutput(s, x)}, {{"message", message}});
}

Operation NoOp(const Scope& scope) { return scope.AddOperation("NoOp", {}); }

Operation AsOperation(const Output& o) {
  if (!o.valid()) return Operation();
  return Operation{o.node, {o}};
}

Operation Group(const Scope& scope, const std::vector<Operation>& ops) {
  return NoOp(scope.WithControlDependencies(ops));
}

Output Add(const Scope& s, const Input& x, const Input& y) { return Binary(s, "Add", x, y); }
Output Sub(const Scope& s, const Input& x, const Input& y) { return Binary(s, "Sub", x, y); }
Output Mul(const Scope& s, const Input& x, const Input& y) { return Binary(s, "Mul", x, y); }
Output Div(const Scope& s, const Input& x, const Input& y) { return Binary(s, "Div", x, y); }
Output Maximum(const Scope& s, const Input& x, const Input& y) {
  return Binary(s, "Maximum", x, y);
}
Output Minimum(const Scope& s, const Input& x, const Input& y) {
  return Binary(s, "Minimum", x, y);
}
Output Pow(const Scope& s, const Input& x, const Input& y) { return Binary(s, "Pow", x, y); }
Output SquaredDifference(const Scope& s, const Input& x, const Input& y) {
  return Binary(s, "SquaredDifference", x, y);
}
Output Equal(const Scope& s, const Input& x, const Input& y) { return Binary(s, "Equal", x, y); }
Output NotEqual(const Scope& s, const Input& x, const Input& y) {
  return Binary(s, "NotEqual", x, y);
}
Output Less(const Scope& s, const Input& x, const Input& y) { return Binary(s, "Less", x, y); }
Output LessEqual(const Scope& s, const Input& x, const Input& y) {
  return Binary(s, "LessEqual", x, y);
}
Output Greater(const Scope& s, const Input& x, const Input& y) {
  return Binary(s, "Greater", x, y);
}
Output GreaterEqual(const Scope& s, const Input& x, const Input& y) {
  return Binary(s, "GreaterEqual", x, y);
}

Output Neg(const Scope& s, const Input& x) { return Unary(s, "Neg", x); }
Output Square(const Scope& s, const Input& x) { return Unary(s, "Square", x); }
Output Sqrt(const Scope& s, const Input& x) { return Unary(s, "Sqrt", x); }
Output Rsqrt(const Scope& s, const Input& x) { return Unary(s, "Rsqrt", x); }
Output Reciprocal(const Scope& s, const Input& x) { return Unary(s, "Reciprocal", x); }
Output Exp(const Scope& s, const Input& x) { return Unary(s, "Exp", x); }
Output Log(const Scope& s, const Input& x) { return Unary(s, "Log", x); }
Output Abs(const Scope& s, const Input& x) { return Unary(s, "Abs", x); }
Output Sign(const Scope& s, const Input& x) { return Unary(s, "Sign", x); }
Output Floor(const Scope& s, const Input& x) { return Unary(s, "Floor", x); }
Output Ceil(const Scope& s, const Input& x) { return Unary(s, "Ceil", x); }
Output Round(const Scope& s, const Input& x) { return Unary(s, "Round", x); }
Output Erf(const Scope& s, const Input& x) { return Unary(s, "Erf", x); }
Output IsInf(const Scope& s, const Input& x) { return Unary(s, "IsInf", x); }
Output IsNan(const Scope& s, const Input& x) { return Unary(s, "IsNan", x); }
Output IsFinite(const Scope& s, const Input& x) { return Unary(s, "IsFinite", x); }
Output Sin(const Scope& s, const Input& x) { return Unary(s, "Sin", x); }
Output Cos(const Scope& s, const Input& x) { return Unary(s, "Cos", x); }
Output Tan(const Scope& s, const Input& x) { return Unary(s, "Tan", x); }
Output Asin(const Scope& s, const Input& x) { return Unary(s, "Asin", x); }
Output Acos(const Scope& s, const Input& x) { return Unary(s, "Acos", x); }
Output Atan(const Scope& s, const Input& x) { return Unary(s, "Atan", x); }
Output Sinh(const Scope& s, const Input& x) { return Unary(s, "Sinh", x); }
Output Cosh(const Scope& s, const Input& x) { return Unary(s, "Cosh", x); }
Output Asinh(const Scope& s, const Input& x) { return Unary(s, "Asinh", x); }
Output Acosh(const Scope& s, const Input& x) { return Unary(s, "Acosh", x); }
Output Atanh(const Scope& s, const Input& x) { return Unary(s, "Atanh", x); }
Output Mod(const Scope& s, const Input& x, const Input& y) { return Binary(s, "Mod", x, y); }
Output FloorMod(const Scope& s, const Input& x, const Input& y) {
  return Binary(s, "FloorMod", x, y);
}
Output FloorDiv(const Scope& s, const Input& x, const Input& y) {
  return Binary(s, "FloorDiv", x, y);
}

Output AddN(const Scope& s, const std::vector<Output>& inputs) {
  return Single(s, "AddN", inputs);
}

Output Select(const Scope& s, const Input& condition, const Input& t, const Input& e) {
  const Output tv = AsOutput(s, t, e.is_literal() ? DType::kInvalid : e.output().dtype);
  return Single(s, "Select", {AsOutput(s, condition), tv, AsOutput(s, e, tv.dtype)});
}

Output Cast(const Scope& s, const Input& x, DType dtype) {
  return Single(s, "Cast", {AsOutput(s, x)}, {{"DstT", dtype}});
}

Output Range(const Scope& s, const Input& start, const Input& limit, const Input& delta) {
  const Output first = AsOutput(s, start);
  return Single(s, "Range",
                {first, AsOutput(s, limit, first.dtype), AsOutput(s, delta, first.dtype)});
}
Output Cumsum(const Scope& s, const Input& x, const Input& axis, CumsumAttrs a) {
  return Single(s, "Cumsum", {AsOutput(s, x), AsOutput(s, axis)},
                {{"exclusive", a.exclusive}, {"reverse", a.reverse}});
}

Output MatMul(const Scope& s, const Input& a, const Input& b, MatMulAttrs attrs) {
  return Single(s, "MatMul", {AsOutput(s, a), AsOutput(s, b)},
                {{"transpose_a", attrs.transpose_a}, {"transpose_b", attrs.transpose_b}});
}

Output CollectiveReduce(const Scope& s, const Input& x, CollectiveReduceAttrs a) {
  return Single(s, "CollectiveReduce", {AsOutput(s, x)},
                {{"group_size", a.group_size},
                 {"group_key", a.group_key},
                 {"instance_key", a.instance_key},
                 {"merge_op", a.merge_op},
                 {"final_op", a.final_op}});
}

Output BatchMatMul(const Scope& s, const Input& x, const Input& y, BatchMatMulAttrs a) {
  return Single(s, "BatchMatMul", {AsOutput(s, x), AsOutput(s, y)},
                {{"adj_x", a.adj_x}, {"adj_y", a.adj_y}});
}
Output BatchMatMulV2(const Scope& s, const Input& x, const Input& y, BatchMatMulAttrs a) {
  return Single(s, "BatchMatMulV2", {AsOutput(s, x), AsOutput(s, y)},
                {{"adj_x", a.adj_x}, {"adj_y", a.adj_y}});
}

Output Sum(const Scope& s, const Input& x, const Input& axis, ReduceAttrs a) {
  return Reduce(s, "Sum", x, axis, a);
}
Output Mean(const Scope& s, const Input& x, const Input& axis, ReduceAttrs a) {
  return Reduce(s, "Mean", x, axis, a);
}
Output Max(const Scope& s, const Input& x, const Input& axis, ReduceAttrs a) {
  return Reduce(s, "Max", x, axis, a);
}
Output Min(const Scope& s, const Input& x, const Input& axis, ReduceAttrs a) {
  return Reduce(s, "Min", x, axis, a);
}
Output Prod(const Scope& s, const Input& x, const Input& axis, ReduceAttrs a) {
  return Reduce(s, "Prod", x, axis, a);
}
Output ArgMax(const Scope& s, const Input& x, const Input& axis) {
  return Single(s, "ArgMax", {AsOutput(s, x), AsOutput(s, axis)});
}

TopKOutputs TopKV2(const Scope& s, const Input& x, const Input& k, bool sorted) {
  const Operation op = s.AddOperation("TopKV2", {AsOutput(s, x), AsOutput(s, k, DType::kInt32)},
                                      {{"sorted", sorted}});
  return {op.output(0), op.output(1)};
}

Output Sigmoid(const Scope& s, const Input& x) { return Unary(s, "Sigmoid", x); }
Output Tanh(const Scope& s, const Input& x) { return Unary(s, "Tanh", x); }
Output Relu(const Scope& s, const Input& x) { return Unary(s, "Relu", x); }
Output Relu6(const Scope& s, const Input& x) { return Unary(s, "Relu6", x); }
Output Elu(const Scope& s, const Input& x) { return Unary(s, "Elu", x); }
Output Softplus(const Scope& s, const Input& x) { return Unary(s, "Softplus", x); }
Output LeakyRelu(const Scope& s, const Input& x, double alpha) {
  return Single(s, "LeakyRelu", {AsOutput(s, x)}, {{"alpha", alpha}});
}
Output Selu(const Scope& s, const Input& x) { return Unary(s, "Selu", x); }
Output Softmax(const Scope& s, const Input& x) { return Unary(s, "Softmax", x); }
Output LogSoftmax(const Scope& s, const Input& x) { return Unary(s, "LogSoftmax", x); }
Output BiasAdd(const Scope& s, const Input& value, const Input& bias) {
  return Binary(s, "BiasAdd", value, bias);
}
Output L2Loss(const Scope& s, const Input& t) { return Unary(s, "L2Loss", t); }

XentOutputs SoftmaxCrossEntropyWithLogits(const Scope& s, const Input& features,
                                          const Input& labels) {
  const Operation op = s.AddOperation("SoftmaxCrossEntropyWithLogits",
                                      {AsOutput(s, features), AsOutput(s, labels)});
  return {op.output(0), op.output(1)};
}

XentOutputs SparseSoftmaxCrossEntropyWithLogits(const Scope& s, const Input& features,
                                                const Input& labels) {
  const Operation op = s.AddOperation("SparseSoftmaxCrossEntropyWithLogits",
                                      {AsOutput(s, features), AsOutput(s, labels)});
  return {op.output(0), op.output(1)};
}

Output InTopK(const Scope& s, const Input& predictions, const Input& targets, int64_t k) {
  return Single(s, "InTopK", {AsOutput(s, predictions), AsOutput(s, targets)}, {{"k", k}});
}

namespace {

AttrMap ConvAttrMap(const std::vector<int64_t>& strides, const std::string& padding,
                    const Conv2DAttrs& a) {
  return {{"strides", strides},
          {"padding", padding},
          {"dilations", a.dilations},
          {"data_format", a.data_format}};
}

AttrMap PoolAttrMap(const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                    const std::string& padding) {
  return {{"ksize", ksize}, {"strides", strides}, {"padding", padding}};
}

}  // namespace

Output Conv2D(const Scope& s, const Input& input, const Input& filter,
              const std::vector<int64_t>& strides, const std::string& padding,
              const Conv2DAttrs& attrs) {
  const Output x = AsOutput(s, input);
  return Single(s, "Conv2D", {x, AsOutput(s, filter, x.dtype)},
                ConvAttrMap(strides, padding, attrs));
}

Output Conv2DBackpropInput(const Scope& s, const Input& input_sizes, const Input& filter,
                           const Input& out_backprop, const std::vector<int64_t>& strides,
                           const std::string& padding, const Conv2DAttrs& attrs) {
  const Output f = AsOutput(s, filter);
  return Single(s, "Conv2DBackpropInput",
                {AsOutput(s, input_sizes, DType::kInt32), f, AsOutput(s, out_backprop, f.dtype)},
                ConvAttrMap(strides, padding, attrs));
}

Output Conv2DBackpropFilter(const Scope& s, const Input& input, const Input& filter_sizes,
                            const Input& out_backprop, const std::vector<int64_t>& strides,
                            const std::string& padding, const Conv2DAttrs& attrs) {
  const Output x = AsOutput(s, input);
  return Single(s, "Conv2DBackpropFilter",
                {x, AsOutput(s, filter_sizes, DType::kInt32), AsOutput(s, out_backprop, x.dtype)},
                ConvAttrMap(strides, padding, attrs));
}

Output DepthwiseConv2dNative(const Scope& s, const Input& input, const Input& filter,
                             const std::vector<int64_t>& strides, const std::string& padding,
                             const Conv2DAttrs& attrs) {
  const Output x = AsOutput(s, input);
  return Single(s, "DepthwiseConv2dNative", {x, AsOutput(s, filter, x.dtype)},
                ConvAttrMap(strides, padding, attrs));
}

Output MaxPool(const Scope& s, const Input& input, const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, const std::string& padding) {
  return Single(s, "MaxPool", {AsOutput(s, input)}, PoolAttrMap(ksize, strides, padding));
}

Output AvgPool(const Scope& s, const Input& input, const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, const std::string& padding) {
  return Single(s, "AvgPool", {AsOutput(s, input)}, PoolAttrMap(ksize, strides, padding));
}

FusedBatchNormOutputs FusedBatchNorm(const Scope& s, const Input& x, const Input& scale,
                                     const Input& offset, const Input& mean,
                                     const Input& variance, const FusedBatchNormAttrs& attrs) {
  const Output xv = AsOutput(s, x);
  const Operation op = s.AddOperation(
      "FusedBatchNorm",
      {xv, AsOutput(s, scale, xv.dtype), AsOutput(s, offset, xv.dtype),
       AsOutput(s, mean, xv.dtype), AsOutput(s, variance, xv.dtype)},
      {{"epsilon", attrs.epsilon},
       {"exponential_avg_factor", attrs.exponential_avg_factor},
       {"is_training", attrs.is_training}});
  return {op.output(0), op.output(1), op.output(2), op.output(3), op.output(4)};
}

Output LRN(const Scope& s, const Input& input, const LRNAttrs& attrs) {
  return Single(s, "LRN", {AsOutput(s, input)},
                {{"depth_radius", attrs.depth_radius},
                 {"bias", attrs.bias},
                 {"alpha", attrs.alpha},
                 {"beta", attrs.beta}});
}

Output Dropout(const Scope& s, const Input& x, double rate, std::optional<int64_t> seed) {
  const Output xv = AsOutput(s, x);
  if (!(rate >= 0 && rate < 1)) {
    s.UpdateStatus(errors::InvalidArgument("Dropout's rate must be in [0, 1), got ", rate));
    return Output();
  }
  if (rate == 0 || !xv.valid()) return xv;
  // As tf.nn.dropout(name=...): the helpers go under "<name>/"; the output
  // itself takes the name WithOpName gave, so it can be fetched by it.
  const std::string& name = s.op_name();
  const Scope d = s.WithOpName("").WithName(name.empty() ? "dropout" : name);
  const double keep = 1 - rate;
  // floor(keep + u) is 1 for u in [rate, 1), with probability keep, else 0.
  const Output u = RandomUniform(d, Shape(d, xv), xv.dtype, seed);
  const Output mask = Floor(d, Add(d, u, keep));
  return Mul(name.empty() ? d : s, Div(d, xv, keep), mask);
}

Output Shape(const Scope& s, const Input& x) { return Unary(s, "Shape", x); }
Output Size(const Scope& s, const Input& x) { return Unary(s, "Size", x); }
Output Rank(const Scope& s, const Input& x) { return Unary(s, "Rank", x); }
Output Reshape(const Scope& s, const Input& x, const Input& shape) {
  return Single(s, "Reshape", {AsOutput(s, x), AsOutput(s, shape)});
}
Output ExpandDims(const Scope& s, const Input& x, const Input& axis) {
  return Single(s, "ExpandDims", {AsOutput(s, x), AsOutput(s, axis)});
}
Output Squeeze(const Scope& s, const Input& x, std::vector<int64_t> axes) {
  return Single(s, "Squeeze", {AsOutput(s, x)}, {{"squeeze_dims", std::move(axes)}});
}
Output Transpose(const Scope& s, const Input& x, const Input& perm) {
  return Single(s, "Transpose", {AsOutput(s, x), AsOutput(s, perm)});
}
Output Tile(const Scope& s, const Input& x, const Input& multiples) {
  return Single(s, "Tile", {AsOutput(s, x), AsOutput(s, multiples)});
}

Output Concat(const Scope& s, const std::vector<Output>& values, const Input& axis) {
  std::vector<Output> inputs = values;
  inputs.push_back(AsOutput(s, axis));
  return Single(s, "ConcatV2", inputs);
}

Output Stack(const Scope& s, const std::vector<Output>& values, int64_t axis) {
  return Single(s, "Pack", values, {{"axis", axis}});
}

std::vector<Output> Unstack(const Scope& s, const Input& value, int64_t num, int64_t axis) {
  return s.AddOp("Unpack", {AsOutput(s, value)}, {{"num", num}, {"axis", axis}});
}

std::vector<Output> Split(const Scope& s, const Input& axis, const Input& value,
                          int64_t num_split) {
  return s.AddOp("Split", {AsOutput(s, axis), AsOutput(s, value)}, {{"num_split", num_split}});
}

Output Slice(const Scope& s, const Input& x, const Input& begin, const Input& size) {
  return Single(s, "Slice", {AsOutput(s, x), AsOutput(s, begin), AsOutput(s, size)});
}
Output GatherNd(const Scope& s, const Input& params, const Input& indices) {
  return Single(s, "GatherNd", {AsOutput(s, params), AsOutput(s, indices)});
}
Output ScatterNd(const Scope& s, const Input& indices, const Input& updates, const Input& shape) {
  const Output i = AsOutput(s, indices);
  return Single(s, "ScatterNd", {i, AsOutput(s, updates), AsOutput(s, shape, i.dtype)});
}
Output StridedSlice(const Scope& s, const Input& x, const Input& begin, const Input& end,
                    const Input& strides, StridedSliceAttrs a) {
  const Output b = AsOutput(s, begin);
  return Single(s, "StridedSlice",
                {AsOutput(s, x), b, AsOutput(s, end, b.dtype), AsOutput(s, strides, b.dtype)},
                {{"begin_mask", a.begin_mask}, {"end_mask", a.end_mask},
                 {"ellipsis_mask", a.ellipsis_mask}, {"new_axis_mask", a.new_axis_mask},
                 {"shrink_axis_mask", a.shrink_axis_mask}});
}
Output Pad(const Scope& s, const Input& x, const Input& paddings) {
  return Single(s, "Pad", {AsOutput(s, x), AsOutput(s, paddings)});
}
Output Gather(const Scope& s, const Input& params, const Input& indices) {
  return Single(s, "Gather", {AsOutput(s, params), AsOutput(s, indices)});
}
Output GatherV2(const Scope& s, const Input& params, const Input& indices, const Input& axis) {
  return Single(s, "GatherV2", {AsOutput(s, params), AsOutput(s, indices), AsOutput(s, axis)});
}
Output UnsortedSegmentSum(const Scope& s, const Input& data, const Input& segment_ids,
                          const Input& num_segments) {
  return Single(s, "UnsortedSegmentSum",
                {AsOutput(s, data), AsOutput(s, segment_ids), AsOutput(s, num_segments)});
}
Output Fill(const Scope& s, const Input& dims, const Input& value) {
  return Single(s, "Fill", {AsOutput(s, dims), AsOutput(s, value)});
}
Output ZerosLike(const Scope& s, const Input& x) { return Unary(s, "ZerosLike", x); }
Output OnesLike(const Scope& s, const Input& x) { return Unary(s, "OnesLike", x); }
Output OneHot(const Scope& s, const Input& indices, const Input& depth, const Input& on_value,
              const Input& off_value) {
  const Output on = AsOutput(s, on_value);
  return Single(s, "OneHot", {AsOutput(s, indices), AsOutput(s, depth), on,
                              AsOutput(s, off_value, on.dtype)});
}

Output RandomNormal(const Scope& s, const Input& shape, DType dtype,
                    std::optional<int64_t> seed) {
  return Random(s, "RandomStandardNormal", shape, dtype, seed);
}
Output TruncatedNormal(const Scope& s, const Input& shape, DType dtype,
                       std::optional<int64_t> seed) {
  return Random(s, "TruncatedNormal", shape, dtype, seed);
}
Output RandomUniform(const Scope& s, const Input& shape, DType dtype,
                     std::optional<int64_t> seed) {
  return Random(s, "RandomUniform", shape, dtype, seed);
}
Output RandomUniformInt(const Scope& s, const Input& shape, const Input& minval,
                        const Input& maxval, std::optional<int64_t> seed) {
  const Output shape_out = AsOutput(s, shape);
  const Output lo = AsOutput(s, minval);
  const Output hi = AsOutput(s, maxval, lo.dtype);
  return Single(s, "RandomUniformInt", {shape_out, lo, hi}, SeedAttrs(s, seed));
}
Output RandomShuffle(const Scope& s, const Input& value, std::optional<int64_t> seed) {
  const Output v = AsOutput(s, value);
  return Single(s, "RandomShuffle", {v}, SeedAttrs(s, seed));
}

Output Assign(const Scope& s, const Output& ref, const Input& value) {
  return Single(s, "Assign", {ref, AsOutput(s, value, ref.dtype)});
}
Output AssignAdd(const Scope& s, const Output& ref, const Input& value) {
  return Single(s, "AssignAdd", {ref, AsOutput(s, value, ref.dtype)});
}
Output AssignSub(const Scope& s, const Output& ref, const Input& value) {
  return Single(s, "AssignSub", {ref, AsOutput(s, value, ref.dtype)});
}

Output FIFOQueue(const Scope& s, std::vector<DType> component_types,
                 std::vector<PartialShape> shapes, int64_t capacity,
                 const std::string& shared_name) {
  AttrMap attrs{{"component_types", std::move(component_types)},
                {"capacity", capacity},
                {"shared_name", shared_name}};
  if (!shapes.empty()) attrs["shapes"] = std::move(shapes);
  return Single(s, "FIFOQueue", {}, std::move(attrs));
}

Operation QueueEnqueue(const Scope& s, const Output& queue, const std::vector<Output>& components) {
  std::vector<Output> inputs{queue};
  inputs.insert(inputs.end(), components.begin(), components.end());
  return s.AddOperation("QueueEnqueue", inputs);
}

Operation QueueEnqueueMany(const Scope& s, const Output& queue,
                           const std::vector<Output>& components) {
  std::vector<Output> inputs{queue};
  inputs.insert(inputs.end(), components.begin(), components.end());
  return s.AddOperation("QueueEnqueueMany", inputs);
}

std::vector<Output> QueueDequeue(const Scope& s, const Output& queue,
                                 std::vector<DType> component_types) {
  return s.AddOp("QueueDequeue", {queue}, {{"component_types", std::move(component_types)}});
}

Output ConditionalAccumulator(const Scope& s, DType dtype, PartialShape shape,
                              const std::string& shared_name) {
  return Single(s, "ConditionalAccumulator", {},
                {{"dtype", dtype}, {"shape", std::move(shape)}, {"shared_name", shared_name}});
}

Operation AccumulatorApplyGradient(const Scope& s, const Output& handle, const Input& local_step,
                                   const Input& gradient) {
  return s.AddOperation("AccumulatorApplyGradient",
                        {handle, AsOutput(s, local_step, DType::kInt64), AsOutput(s, gradient)});
}

namespace {

// A take's attrs: its dtype and, when the handle comes straight from an
// `accumulator_op` node, that node's shape. The shape is an attr of the
// accumulator, which the take cannot see at graph time; passed on, it lets
// what consumes the take (an optimizer's apply) be shape-checked.
AttrMap TakeAttrs(const Scope& s, const Output& handle, const std::string& accumulator_op,
                  DType dtype) {
  AttrMap attrs{{"dtype", dtype}};
  const int id = handle.valid() ? s.FindNode(handle.node) : -1;
  if (id >= 0 && s.node(id).op == accumulator_op) {
    auto shape = s.node(id).attrs.find("shape");
    if (shape != s.node(id).attrs.end()) attrs["shape"] = shape->second;
  }
  return attrs;
}

}  // namespace

Output AccumulatorTakeGradient(const Scope& s, const Output& handle, const Input& num_required,
                               DType dtype) {
  return Single(s, "AccumulatorTakeGradient", {handle, AsOutput(s, num_required, DType::kInt32)},
                TakeAttrs(s, handle, "ConditionalAccumulator", dtype));
}

Output AccumulatorNumAccumulated(const Scope& s, const Output& handle) {
  return Single(s, "AccumulatorNumAccumulated", {handle});
}

Operation AccumulatorSetGlobalStep(const Scope& s, const Output& handle,
                                   const Input& new_global_step) {
  return s.AddOperation("AccumulatorSetGlobalStep",
                        {handle, AsOutput(s, new_global_step, DType::kInt64)});
}

Output SyncRound(const Scope& s, const std::string& shared_name) {
  return Single(s, "SyncRound", {}, {{"shared_name", shared_name}});
}

Output SyncRoundWait(const Scope& s, const Output& round, const Input& pushed_at) {
  return Single(s, "SyncRoundWait", {round, AsOutput(s, pushed_at, DType::kInt64)});
}

Operation SyncRoundAdvance(const Scope& s, const Output& round, const Input& step) {
  return s.AddOperation("SyncRoundAdvance", {round, AsOutput(s, step, DType::kInt64)});
}

Operation SyncRoundReset(const Scope& s, const Output& round, const Input& step) {
  return s.AddOperation("SyncRoundReset", {round, AsOutput(s, step, DType::kInt64)});
}

Operation SyncRoundRelease(const Scope& s, const Output& round, const Input& step,
                           const Input& passes) {
  return s.AddOperation("SyncRoundRelease", {round, AsOutput(s, step, DType::kInt64),
                                             AsOutput(s, passes, DType::kInt64)});
}

Output SparseConditionalAccumulator(const Scope& s, DType dtype, PartialShape shape,
                                    const std::string& shared_name,
                                    const std::string& reduction_type) {
  return Single(s, "SparseConditionalAccumulator", {},
                {{"dtype", dtype},
                 {"shape", std::move(shape)},
                 {"shared_name", shared_name},
                 {"reduction_type", reduction_type}});
}

Operation SparseAccumulatorApplyGradient(const Scope& s, const Output& handle,
                                         const Input& local_step, const Input& indices,
                                         const Input& values, const Input& dense_shape) {
  const Output rows = AsOutput(s, values);
  return s.AddOperation("SparseAccumulatorApplyGradient",
                        {handle, AsOutput(s, local_step, DType::kInt64),
                         AsOutput(s, indices, DType::kInt64), rows,
                         AsOutput(s, dense_shape, DType::kInt64)},
                        {{"dtype", rows.dtype}, {"has_known_shape", true}});
}

SparseAccumulated SparseAccumulatorTakeGradient(const Scope& s, const Output& handle,
                                                const Input& num_required, DType dtype) {
  const std::vector<Output> out =
      s.AddOp("SparseAccumulatorTakeGradient", {handle, AsOutput(s, num_required, DType::kInt32)},
              TakeAttrs(s, handle, "SparseConditionalAccumulator", dtype));
  if (out.size() != 3) return {};  // the error is in the scope
  return {out[0], out[1], out[2]};
}

Output Auc(const Scope& s, const Input& labels, const Input& predictions) {
  const Output scores = AsOutput(s, predictions);
  return Single(s, "Auc", {AsOutput(s, labels, DType::kFloat32), scores}, {{"T", scores.dtype}});
}

namespace {

// The node "<prefix>/<tag>" a trainer reads, and the summary op `op` of it.
Output SummaryOp(const Scope& s, const char* prefix, const char* op, const std::string& tag,
                 const Input& value) {
  const Output read = Identity(s.WithName(prefix).WithOpName(tag), value);
  const Scope scope = s.WithName(tag);
  return Single(scope.WithOpName(op), op, {AsOutput(scope, Tensor::Scalar(tag)), read});
}

}  // namespace

Output ScalarSummary(const Scope& s, const std::string& tag, const Input& value) {
  return SummaryOp(s, "summaries", "ScalarSummary", tag, value);
}

Output HistogramSummary(const Scope& s, const std::string& tag, const Input& values) {
  return SummaryOp(s, "histogram_summaries", "HistogramSummary", tag, values);
}

Output MergeSummary(const Scope& s, const std::vector<Output>& summaries) {
  return Single(s, "MergeSummary", summaries);
}

}  // namespace tfd::ops
