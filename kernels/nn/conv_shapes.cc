#include "kernels/nn/conv_shapes.h"

namespace tfd::kernels::nn {
namespace {

enum class FilterKind { kConv, kDepthwise };

int64_t DimOr(const PartialShape& s, int i) { return s.rank_known() ? s.dim(i) : -1; }

// The forward output of a convolution of `input` with `filter` (both
// partial, rank 4 or unknown).
StatusOr<PartialShape> ConvOutput(FilterKind kind, const WindowAttrs& a, const PartialShape& input,
                                  const PartialShape& filter) {
  const int64_t in_depth = DimOr(input, 3), filter_depth = DimOr(filter, 2);
  if (in_depth >= 0 && filter_depth >= 0 && in_depth != filter_depth) {
    return errors::InvalidArgument("the filter's depth (dimension 2 of ", filter.ToString(),
                                   ") must equal the input's (dimension 3 of ", input.ToString(),
                                   ")");
  }
  const int64_t depth = in_depth >= 0 ? in_depth : filter_depth;
  const int64_t last = DimOr(filter, 3);
  int64_t out_depth = last;
  if (kind == FilterKind::kDepthwise) out_depth = depth >= 0 && last >= 0 ? depth * last : -1;
  return WindowedOutputShape(a, input, DimOr(filter, 0), DimOr(filter, 1), out_depth);
}

Status CheckGrad(const InferenceContext& c, int grad, const PartialShape& expected) {
  if (c.input(grad).IsCompatibleWith(expected)) return OkStatus();
  return errors::InvalidArgument("input ", grad, " (out_backprop) has shape ",
                                 c.input(grad).ToString(), " but the forward op's output is ",
                                 expected.ToString());
}

Status ForwardShape(InferenceContext& c, FilterKind kind) {
  TFD_ASSIGN_OR_RETURN(WindowAttrs a, ConvAttrsFrom(c.attrs()));
  TFD_RETURN_IF_ERROR(c.WithRank(0, 4));
  TFD_RETURN_IF_ERROR(c.WithRank(1, 4));
  TFD_ASSIGN_OR_RETURN(PartialShape out, ConvOutput(kind, a, c.input(0), c.input(1)));
  c.set_output(0, std::move(out));
  return OkStatus();
}

Status InputGradShape(InferenceContext& c, FilterKind kind) {
  TFD_ASSIGN_OR_RETURN(WindowAttrs a, ConvAttrsFrom(c.attrs()));
  TFD_ASSIGN_OR_RETURN(PartialShape sizes, ShapeFromSizesInput(c, 0));
  TFD_RETURN_IF_ERROR(c.WithRank(1, 4));
  TFD_RETURN_IF_ERROR(c.WithRank(2, 4));
  TFD_ASSIGN_OR_RETURN(PartialShape expected, ConvOutput(kind, a, sizes, c.input(1)));
  TFD_RETURN_IF_ERROR(CheckGrad(c, 2, expected));
  c.set_output(0, std::move(sizes));
  return OkStatus();
}

Status FilterGradShape(InferenceContext& c, FilterKind kind) {
  TFD_ASSIGN_OR_RETURN(WindowAttrs a, ConvAttrsFrom(c.attrs()));
  TFD_RETURN_IF_ERROR(c.WithRank(0, 4));
  TFD_ASSIGN_OR_RETURN(PartialShape sizes, ShapeFromSizesInput(c, 1));
  TFD_RETURN_IF_ERROR(c.WithRank(2, 4));
  TFD_ASSIGN_OR_RETURN(PartialShape expected, ConvOutput(kind, a, c.input(0), sizes));
  TFD_RETURN_IF_ERROR(CheckGrad(c, 2, expected));
  c.set_output(0, std::move(sizes));
  return OkStatus();
}

StatusOr<PartialShape> PoolOutput(const WindowAttrs& a, const PartialShape& input) {
  return WindowedOutputShape(a, input, a.window_rows, a.window_cols, DimOr(input, 3));
}

}  // namespace

Status ConvShape(InferenceContext& c) { return ForwardShape(c, FilterKind::kConv); }
Status BackpropInputShape(InferenceContext& c) { return InputGradShape(c, FilterKind::kConv); }
Status BackpropFilterShape(InferenceContext& c) { return FilterGradShape(c, FilterKind::kConv); }
Status DepthwiseShape(InferenceContext& c) { return ForwardShape(c, FilterKind::kDepthwise); }
Status DepthwiseBackpropInputShape(InferenceContext& c) {
  return InputGradShape(c, FilterKind::kDepthwise);
}
Status DepthwiseBackpropFilterShape(InferenceContext& c) {
  return FilterGradShape(c, FilterKind::kDepthwise);
}

Status PoolShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(WindowAttrs a, PoolAttrsFrom(c.attrs()));
  TFD_RETURN_IF_ERROR(c.WithRank(0, 4));
  TFD_ASSIGN_OR_RETURN(PartialShape out, PoolOutput(a, c.input(0)));
  c.set_output(0, std::move(out));
  return OkStatus();
}

Status MaxPoolGradShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(WindowAttrs a, PoolAttrsFrom(c.attrs()));
  for (int i = 0; i < 3; ++i) TFD_RETURN_IF_ERROR(c.WithRank(i, 4));
  TFD_ASSIGN_OR_RETURN(PartialShape expected, PoolOutput(a, c.input(0)));
  if (!c.input(1).IsCompatibleWith(expected)) {
    return errors::InvalidArgument("input 1 (orig_output) has shape ", c.input(1).ToString(),
                                   " but pooling orig_input gives ", expected.ToString());
  }
  TFD_RETURN_IF_ERROR(CheckGrad(c, 2, expected));
  c.set_output(0, c.input(0).rank_known() ? c.input(0) : PartialShape::UnknownOfRank(4));
  return OkStatus();
}

Status AvgPoolGradShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(WindowAttrs a, PoolAttrsFrom(c.attrs()));
  TFD_ASSIGN_OR_RETURN(PartialShape sizes, ShapeFromSizesInput(c, 0));
  TFD_RETURN_IF_ERROR(c.WithRank(1, 4));
  TFD_ASSIGN_OR_RETURN(PartialShape expected, PoolOutput(a, sizes));
  TFD_RETURN_IF_ERROR(CheckGrad(c, 1, expected));
  c.set_output(0, std::move(sizes));
  return OkStatus();
}

StatusOr<TensorShape> ToShape(const std::array<int64_t, 4>& dims) {
  return TensorShape::Make(std::vector<int64_t>(dims.begin(), dims.end()));
}

Status CheckOutBackprop(const Tensor& grad, const ConvGeometry& g) {
  const auto want = g.output_dims();
  if (grad.shape().dims() == std::vector<int64_t>(want.begin(), want.end())) return OkStatus();
  return errors::InvalidArgument("out_backprop has shape ", grad.shape().ToString(),
                                 " but the forward op's output is ",
                                 PartialShape(std::vector<int64_t>(want.begin(), want.end()))
                                     .ToString());
}

}  // namespace tfd::kernels::nn
