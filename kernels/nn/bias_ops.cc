// BiasAdd and its gradient BiasAddGrad. Only the NHWC layout (bias along
// the last dimension) is implemented; NCHW is refused when the graph is
// checked and again when the kernel is built, naming the layout.
#include "common/op_kernel.h"
#include "common/tensor_eigen.h"
#include "kernels/math/pairwise_sum.h"
#include "kernels/nn/nn_internal.h"

namespace tfd::kernels::nn {
namespace {

Status CheckDataFormat(const std::string& format) {
  if (format == "NHWC") return OkStatus();
  if (format == "NCHW") {
    return errors::InvalidArgument(
        "data_format NCHW is unsupported: only NHWC (bias along the last dimension) is "
        "implemented");
  }
  return errors::InvalidArgument("unknown data_format '", format, "'; expected NHWC");
}

Status DataFormatFromAttrs(const AttrMap& attrs) {
  auto it = attrs.find("data_format");
  if (it == attrs.end()) return OkStatus();  // the default, NHWC
  const std::string* format = std::get_if<std::string>(&it->second);
  if (format == nullptr) {
    return errors::InvalidArgument("attr 'data_format' has type ", AttrTypeName(it->second));
  }
  return CheckDataFormat(*format);
}

// Everything but the last dimension, flattened: the rows a bias is added to.
int64_t OuterSize(const TensorShape& s) {
  int64_t rows = 1;
  for (int i = 0; i + 1 < s.rank(); ++i) rows *= s.dim(i);
  return rows;
}

template <typename T>
void AddBias(const Tensor& value, const Tensor& bias, Tensor& out) {
  const int64_t cols = bias.num_elements();
  const int64_t rows = OuterSize(value.shape());
  MatrixMap<T> out_map = EigenMatrix<T>(out, rows, cols);
  MatrixMap<T> bias_row = EigenMatrix<T>(bias, 1, cols);
  out_map = EigenMatrix<T>(value, rows, cols).rowwise() + bias_row.row(0);
}

// Pairwise: a large batch (or image) would otherwise lose the bias
// gradient's precision to one long running sum per column.
template <typename T>
void SumRows(const Tensor& grad, Tensor& out) {
  const int64_t cols = out.num_elements();
  const int64_t rows = OuterSize(grad.shape());
  PairwiseColumnSums(grad.data<T>(), rows, cols, out.data<T>());
}

class BiasAddOp : public OpKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(DataFormatFromAttrs(c.attrs()));
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& value = ctx.input(0);
    const Tensor& bias = ctx.input(1);
    TFD_OP_REQUIRES(ctx, value.rank() >= 2,
                    errors::InvalidArgument("value must have rank >= 2 but has shape ",
                                            value.shape().ToString()));
    TFD_OP_REQUIRES(
        ctx, bias.rank() == 1,
        errors::InvalidArgument("bias must be a vector but has shape ", bias.shape().ToString()));
    const int64_t channels = value.dim(value.rank() - 1);
    TFD_OP_REQUIRES(ctx, bias.dim(0) == channels,
                    errors::InvalidArgument("bias has ", bias.dim(0),
                                            " elements but the last dimension of value ",
                                            value.shape().ToString(), " is ", channels));
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, value.shape(), &out));
    if (value.num_elements() == 0) return;
    TFD_SWITCH_FLOAT(value.dtype(), T, (AddBias<T>(value, bias, *out)),
                     ctx.SetStatus(UnsupportedDType(value));
                     return;)
  }
};

class BiasAddGradOp : public OpKernel {
 public:
  explicit BiasAddGradOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(DataFormatFromAttrs(c.attrs()));
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& grad = ctx.input(0);
    TFD_OP_REQUIRES(ctx, grad.rank() >= 2,
                    errors::InvalidArgument("out_backprop must have rank >= 2 but has shape ",
                                            grad.shape().ToString()));
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape({grad.dim(grad.rank() - 1)}), &out));
    // With no rows the sum is the zeros allocate_output already wrote.
    if (grad.num_elements() == 0) return;
    TFD_SWITCH_FLOAT(
        grad.dtype(), T, (SumRows<T>(grad, *out)), ctx.SetStatus(UnsupportedDType(grad)); return;)
  }
};

Status BiasAddShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(DataFormatFromAttrs(c.attrs()));
  const PartialShape& value = c.input(0);
  TFD_RETURN_IF_ERROR(c.WithRank(1, 1));
  if (!value.rank_known()) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  if (value.rank() < 2) {
    return errors::InvalidArgument("input 0 (value) must have rank >= 2 but has shape ",
                                   value.ToString());
  }
  std::vector<int64_t> dims = value.dims();
  const int64_t bias = c.input(1).rank_known() ? c.input(1).dim(0) : -1;
  int64_t& channels = dims.back();
  if (channels >= 0 && bias >= 0 && channels != bias) {
    return errors::InvalidArgument("input 1 (bias) has ", bias,
                                   " elements but the last dimension of value ", value.ToString(),
                                   " is ", channels);
  }
  if (channels < 0) channels = bias;
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

Status BiasAddGradShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(DataFormatFromAttrs(c.attrs()));
  const PartialShape& grad = c.input(0);
  if (!grad.rank_known()) {
    c.set_output(0, PartialShape::UnknownOfRank(1));
    return OkStatus();
  }
  if (grad.rank() < 2) {
    return errors::InvalidArgument("input 0 (out_backprop) must have rank >= 2 but has shape ",
                                   grad.ToString());
  }
  c.set_output(0, PartialShape({grad.dims().back()}));
  return OkStatus();
}

}  // namespace

Status RegisterBiasOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<BiasAddOp>(
      OpDefBuilder("BiasAdd")
          .Input("value: T")
          .Input("bias: T")
          .Output("output: T")
          .Attr(kFloatTypeAttr)
          .Attr("data_format: string = \"NHWC\"")
          .Doc("Adds the vector bias to every row of value along its last dimension (only "
               "data_format NHWC is supported). Shape: that of value, rank >= 2, whose last "
               "dimension equals the length of bias."),
      BiasAddShape));
  TFD_RETURN_IF_ERROR(r.Add<BiasAddGradOp>(
      OpDefBuilder("BiasAddGrad")
          .Input("out_backprop: T")
          .Output("output: T")
          .Attr(kFloatTypeAttr)
          .Attr("data_format: string = \"NHWC\"")
          .Doc("Gradient of BiasAdd with respect to bias: out_backprop summed over all but its "
               "last dimension. Shape: [last dimension of out_backprop]."),
      BiasAddGradShape));
  return OkStatus();
}

}  // namespace tfd::kernels::nn
