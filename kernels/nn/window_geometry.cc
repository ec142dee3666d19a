#include "kernels/nn/window_geometry.h"

#include <algorithm>

namespace tfd::kernels::nn {
namespace {

// Attr values (strides, ksize, dilations) are kept below 2^31, so that the
// window arithmetic below cannot overflow int64.
constexpr int64_t kMaxAttrValue = (int64_t{1} << 31) - 1;

std::string ListString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The attr `name` as a string; `fallback` when it is absent.
StatusOr<std::string> StringAttr(const AttrMap& attrs, const char* name, const char* fallback) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return std::string(fallback);
  if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
  return errors::InvalidArgument("attr '", name, "' must be a string, got ",
                                 AttrTypeName(it->second));
}

// The attr `name` as a list of ints; `fallback` when it is absent.
StatusOr<std::vector<int64_t>> IntListAttr(const AttrMap& attrs, const char* name,
                                           std::vector<int64_t> fallback) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return fallback;
  if (const auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  if (std::holds_alternative<EmptyList>(it->second)) return std::vector<int64_t>{};
  return errors::InvalidArgument("attr '", name, "' must be a list(int), got ",
                                 AttrTypeName(it->second));
}

Status CheckDataFormat(const AttrMap& attrs) {
  TFD_ASSIGN_OR_RETURN(std::string format, StringAttr(attrs, "data_format", "NHWC"));
  if (format == "NHWC") return OkStatus();
  if (format == "NCHW") {
    return errors::InvalidArgument(
        "data_format NCHW is unsupported: only NHWC (channels last, TensorFlow's CPU layout) is "
        "implemented");
  }
  return errors::InvalidArgument("unknown data_format '", format, "'; expected NHWC");
}

StatusOr<Padding> PaddingAttr(const AttrMap& attrs) {
  TFD_ASSIGN_OR_RETURN(std::string padding, StringAttr(attrs, "padding", ""));
  if (padding == "SAME") return Padding::kSame;
  if (padding == "VALID") return Padding::kValid;
  if (padding == "EXPLICIT") {
    return errors::InvalidArgument(
        "padding EXPLICIT is unsupported: only SAME and VALID are implemented");
  }
  return errors::InvalidArgument("attr 'padding' must be SAME or VALID, got '", padding, "'");
}

// A 4-element NHWC attr (strides, ksize, dilations): 1 in the batch and
// depth dimensions, [1, 2^31) in the spatial ones. Returns {rows, cols}.
StatusOr<std::pair<int64_t, int64_t>> SpatialPair(const AttrMap& attrs, const char* name,
                                                  std::vector<int64_t> fallback) {
  TFD_ASSIGN_OR_RETURN(std::vector<int64_t> v, IntListAttr(attrs, name, std::move(fallback)));
  if (v.size() != 4) {
    return errors::InvalidArgument("attr '", name,
                                   "' must have 4 elements (one per NHWC dimension), got ",
                                   ListString(v));
  }
  if (v[0] != 1 || v[3] != 1) {
    return errors::InvalidArgument("attr '", name,
                                   "' must be 1 in the batch and depth dimensions, got ",
                                   ListString(v));
  }
  if (v[1] < 1 || v[2] < 1 || v[1] > kMaxAttrValue || v[2] > kMaxAttrValue) {
    return errors::InvalidArgument("attr '", name, "' must be between 1 and ", kMaxAttrValue,
                                   " in the spatial dimensions, got ", ListString(v));
  }
  return std::make_pair(v[1], v[2]);
}

// explicit_paddings is TensorFlow's attr for padding EXPLICIT, which is
// refused; with SAME or VALID it must be empty, as in TensorFlow.
Status CheckNoExplicitPaddings(const AttrMap& attrs) {
  TFD_ASSIGN_OR_RETURN(std::vector<int64_t> paddings, IntListAttr(attrs, "explicit_paddings", {}));
  if (paddings.empty()) return OkStatus();
  return errors::InvalidArgument(
      "attr 'explicit_paddings' must be empty unless padding is EXPLICIT (unsupported), got ",
      ListString(paddings));
}

Status CheckRank4(const std::vector<int64_t>& dims, const char* what) {
  if (dims.size() == 4) return OkStatus();
  return errors::InvalidArgument(what, " must have rank 4 but has shape ",
                                 PartialShape(dims).ToString());
}

// The geometry's spatial dimensions for the window of `attrs`.
Status FillWindows(const WindowAttrs& a, ConvGeometry& g) {
  TFD_ASSIGN_OR_RETURN(g.rows, ComputeWindowDim(g.in_rows, a.window_rows, a.stride_rows,
                                                a.dilation_rows, a.padding, "rows"));
  TFD_ASSIGN_OR_RETURN(g.cols, ComputeWindowDim(g.in_cols, a.window_cols, a.stride_cols,
                                                a.dilation_cols, a.padding, "cols"));
  return OkStatus();
}

}  // namespace

StatusOr<WindowAttrs> ConvAttrsFrom(const AttrMap& attrs) {
  TFD_RETURN_IF_ERROR(CheckDataFormat(attrs));
  WindowAttrs a;
  TFD_ASSIGN_OR_RETURN(a.padding, PaddingAttr(attrs));
  TFD_ASSIGN_OR_RETURN(auto strides, SpatialPair(attrs, "strides", {}));
  TFD_ASSIGN_OR_RETURN(auto dilations, SpatialPair(attrs, "dilations", {1, 1, 1, 1}));
  std::tie(a.stride_rows, a.stride_cols) = strides;
  std::tie(a.dilation_rows, a.dilation_cols) = dilations;
  TFD_RETURN_IF_ERROR(CheckNoExplicitPaddings(attrs));
  return a;
}

StatusOr<WindowAttrs> PoolAttrsFrom(const AttrMap& attrs) {
  TFD_RETURN_IF_ERROR(CheckDataFormat(attrs));
  WindowAttrs a;
  TFD_ASSIGN_OR_RETURN(a.padding, PaddingAttr(attrs));
  TFD_ASSIGN_OR_RETURN(auto ksize, SpatialPair(attrs, "ksize", {}));
  TFD_ASSIGN_OR_RETURN(auto strides, SpatialPair(attrs, "strides", {}));
  std::tie(a.window_rows, a.window_cols) = ksize;
  std::tie(a.stride_rows, a.stride_cols) = strides;
  TFD_RETURN_IF_ERROR(CheckNoExplicitPaddings(attrs));
  return a;
}

StatusOr<WindowDim> ComputeWindowDim(int64_t in, int64_t window, int64_t stride,
                                     int64_t dilation, Padding padding, const char* what) {
  if (window < 1 || window > kMaxAttrValue) {
    return errors::InvalidArgument("the window's ", what, " must be between 1 and ",
                                   kMaxAttrValue, ", got ", window);
  }
  WindowDim d{in, window, stride, dilation, 0, 0};
  const int64_t effective = (window - 1) * dilation + 1;  // < 2^62: both factors < 2^31
  if (padding == Padding::kValid) {
    if (in < effective) {
      return errors::InvalidArgument(
          "VALID padding leaves no output: the input has ", in, " ", what, " but the window",
          dilation > 1 ? " (dilated)" : "", " spans ", effective);
    }
    d.out = (in - effective) / stride + 1;
    return d;
  }
  d.out = in == 0 ? 0 : (in - 1) / stride + 1;  // ceil(in / stride)
  const int64_t needed = std::max<int64_t>(0, (d.out - 1) * stride + effective - in);
  d.pad_before = needed / 2;
  return d;
}

StatusOr<ConvGeometry> MakeConvGeometry(const WindowAttrs& attrs, const std::vector<int64_t>& input,
                                        const std::vector<int64_t>& filter) {
  TFD_RETURN_IF_ERROR(CheckRank4(input, "input"));
  TFD_RETURN_IF_ERROR(CheckRank4(filter, "filter"));
  if (filter[2] != input[3]) {
    return errors::InvalidArgument("the filter's depth (dimension 2 of ",
                                   PartialShape(filter).ToString(),
                                   ") must equal the input's (dimension 3 of ",
                                   PartialShape(input).ToString(), ")");
  }
  ConvGeometry g{input[0], input[1], input[2], input[3], filter[3], {}, {}};
  WindowAttrs a = attrs;
  a.window_rows = filter[0];
  a.window_cols = filter[1];
  TFD_RETURN_IF_ERROR(FillWindows(a, g));
  return g;
}

StatusOr<ConvGeometry> MakeDepthwiseGeometry(const WindowAttrs& attrs,
                                             const std::vector<int64_t>& input,
                                             const std::vector<int64_t>& filter) {
  TFD_ASSIGN_OR_RETURN(ConvGeometry g, MakeConvGeometry(attrs, input, filter));
  g.out_depth = input[3] * filter[3];
  return g;
}

StatusOr<ConvGeometry> MakePoolGeometry(const WindowAttrs& attrs,
                                        const std::vector<int64_t>& input) {
  TFD_RETURN_IF_ERROR(CheckRank4(input, "input"));
  ConvGeometry g{input[0], input[1], input[2], input[3], input[3], {}, {}};
  TFD_RETURN_IF_ERROR(FillWindows(attrs, g));
  return g;
}

StatusOr<PartialShape> WindowedOutputShape(const WindowAttrs& attrs, const PartialShape& input,
                                           int64_t window_rows, int64_t window_cols,
                                           int64_t out_depth) {
  if (!input.rank_known()) return PartialShape({-1, -1, -1, out_depth});
  TFD_RETURN_IF_ERROR(CheckRank4(input.dims(), "input"));
  auto spatial = [&](int64_t in, int64_t window, int64_t stride, int64_t dilation,
                     const char* what) -> StatusOr<int64_t> {
    if (in < 0) return int64_t{-1};
    if (window < 0) {
      // SAME's output size does not depend on the window.
      return attrs.padding == Padding::kSame ? (in == 0 ? 0 : (in - 1) / stride + 1) : -1;
    }
    TFD_ASSIGN_OR_RETURN(WindowDim d,
                         ComputeWindowDim(in, window, stride, dilation, attrs.padding, what));
    return d.out;
  };
  TFD_ASSIGN_OR_RETURN(int64_t rows, spatial(input.dim(1), window_rows, attrs.stride_rows,
                                             attrs.dilation_rows, "rows"));
  TFD_ASSIGN_OR_RETURN(int64_t cols, spatial(input.dim(2), window_cols, attrs.stride_cols,
                                             attrs.dilation_cols, "cols"));
  return PartialShape({input.dim(0), rows, cols, out_depth});
}

StatusOr<PartialShape> ShapeFromSizesInput(const InferenceContext& c, int input) {
  TFD_RETURN_IF_ERROR(c.WithRank(input, 1));
  if (auto sizes = c.InputAsInts(input)) {
    if (sizes->size() != 4 || std::any_of(sizes->begin(), sizes->end(),
                                          [](int64_t v) { return v < 0; })) {
      return errors::InvalidArgument("input ", input,
                                     " must hold 4 non-negative sizes (NHWC), got ",
                                     ListString(*sizes));
    }
    return PartialShape(*sizes);
  }
  const PartialShape& s = c.input(input);
  if (s.rank_known() && s.dim(0) >= 0 && s.dim(0) != 4) {
    return errors::InvalidArgument("input ", input,
                                   " must be a vector of 4 sizes (NHWC), got shape ",
                                   s.ToString());
  }
  return PartialShape::UnknownOfRank(4);
}

StatusOr<std::vector<int64_t>> SizesFromTensor(const Tensor& t, const char* what) {
  if (t.rank() != 1 || t.num_elements() != 4 ||
      (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)) {
    return errors::InvalidArgument(what,
                                   " must be an int32 or int64 vector of 4 sizes (NHWC), got ",
                                   t.Describe());
  }
  std::vector<int64_t> dims(4);
  for (int i = 0; i < 4; ++i) {
    dims[i] = t.dtype() == DType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
    if (dims[i] < 0) {
      return errors::InvalidArgument(what, " must hold non-negative sizes, got ", t.DebugString(4));
    }
  }
  return dims;
}

}  // namespace tfd::kernels::nn
