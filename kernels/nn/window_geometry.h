// The geometry of the 2-D windowed ops (Conv2D, DepthwiseConv2dNative,
// MaxPool, AvgPool and their gradients): their attrs read and checked, and
// the output size and padding of each spatial dimension computed exactly as
// TensorFlow does (GetWindowedOutputSize):
//
//   VALID: out = (in - window) / stride + 1, window = (k - 1) * dilation + 1;
//          an error when the window is larger than the input (TF's graph-
//          time rule; see ComputeWindowDim).
//   SAME:  out = ceil(in / stride); the padding needed,
//          max(0, (out - 1) * stride + window - in), is split with the odd
//          element at the bottom / right: before = needed / 2.
//
// Only data_format NHWC is implemented; NCHW is refused by name.
//
//   TFD_ASSIGN_OR_RETURN(WindowAttrs a, ConvAttrsFrom(attrs));
//   TFD_ASSIGN_OR_RETURN(ConvGeometry g, MakeConvGeometry(a, input_dims, filter_dims));
//
// Thread-safety: values and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/attr_value.h"
#include "common/shape_inference.h"
#include "common/status.h"

namespace tfd::kernels::nn {

enum class Padding { kSame, kValid };

// A windowed op's attrs, for the two spatial dimensions (rows = H, cols = W).
struct WindowAttrs {
  int64_t window_rows = 1, window_cols = 1;  // pooling's ksize; conv: from the filter
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t dilation_rows = 1, dilation_cols = 1;
  Padding padding = Padding::kValid;
};

// Conv2D's and DepthwiseConv2dNative's attrs: strides, dilations (both of
// length 4, 1 in the batch and depth dimensions), padding (SAME or VALID;
// EXPLICIT is refused), data_format (NHWC). The window comes from the filter.
StatusOr<WindowAttrs> ConvAttrsFrom(const AttrMap& attrs);
// MaxPool's and AvgPool's: ksize and strides (length 4, 1 in the batch and
// depth dimensions), padding, data_format.
StatusOr<WindowAttrs> PoolAttrsFrom(const AttrMap& attrs);

// One spatial dimension of a windowed op.
struct WindowDim {
  int64_t in = 0, window = 1, stride = 1, dilation = 1;
  int64_t out = 0;
  int64_t pad_before = 0;  // the padding after is whatever the last window needs
};

// `what` names the dimension in errors ("rows"). INVALID_ARGUMENT for a
// window of size < 1 and for VALID padding with a window (dilated) larger
// than the input: TensorFlow's shape inference refuses that ("negative
// dimension size"); its kernel, reached only with shapes unknown at graph
// time, returns an empty output for some such sizes, and tfd refuses them
// there too, so a graph fails the same way whatever was known when it was
// built.
StatusOr<WindowDim> ComputeWindowDim(int64_t in, int64_t window, int64_t stride,
                                     int64_t dilation, Padding padding, const char* what);

// Everything an NHWC 2-D windowed kernel needs, checked.
struct ConvGeometry {
  int64_t batch = 0, in_rows = 0, in_cols = 0, in_depth = 0;
  int64_t out_depth = 0;  // conv: filter's last dim; depthwise: in_depth * multiplier
  WindowDim rows, cols;

  int64_t out_rows() const { return rows.out; }
  int64_t out_cols() const { return cols.out; }
  int64_t out_pixels() const { return batch * rows.out * cols.out; }
  // Elements of one patch: window_rows * window_cols * in_depth.
  int64_t patch_size() const { return rows.window * cols.window * in_depth; }
  std::array<int64_t, 4> output_dims() const { return {batch, rows.out, cols.out, out_depth}; }
};

// Conv2D: input [batch, rows, cols, depth] and filter [window_rows,
// window_cols, depth, out_depth]; the filter's depth must equal the input's.
StatusOr<ConvGeometry> MakeConvGeometry(const WindowAttrs& attrs, const std::vector<int64_t>& input,
                                        const std::vector<int64_t>& filter);
// DepthwiseConv2dNative: filter [window_rows, window_cols, depth, multiplier].
StatusOr<ConvGeometry> MakeDepthwiseGeometry(const WindowAttrs& attrs,
                                             const std::vector<int64_t>& input,
                                             const std::vector<int64_t>& filter);
// Pooling: the window is attrs' ksize; out_depth = in_depth.
StatusOr<ConvGeometry> MakePoolGeometry(const WindowAttrs& attrs,
                                        const std::vector<int64_t>& input);

// Shape-function pieces. The output shape of a windowed op from the (partial)
// input shape and the window (-1 where unknown); out_depth -1 when unknown.
StatusOr<PartialShape> WindowedOutputShape(const WindowAttrs& attrs, const PartialShape& input,
                                           int64_t window_rows, int64_t window_cols,
                                           int64_t out_depth);
// A shape input (input_sizes, filter_sizes, orig_input_shape): the shape it
// holds when known at graph time, else rank 4 with unknown dims; INVALID_ARGUMENT
// when it holds something other than 4 non-negative sizes.
StatusOr<PartialShape> ShapeFromSizesInput(const InferenceContext& c, int input);
// A rank-4 shape from a sizes tensor (int32/int64 vector of 4 non-negative
// values), at kernel time; `what` names the input.
StatusOr<std::vector<int64_t>> SizesFromTensor(const Tensor& t, const char* what);

}  // namespace tfd::kernels::nn
