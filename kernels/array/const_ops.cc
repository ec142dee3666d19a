// Sources and forwarding: Const, Placeholder, PlaceholderWithDefault, Identity.
// None of them copies: outputs share the buffer of the attr or the input.
#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"

namespace tfd::kernels::array {
namespace {

class ConstOp : public OpKernel {
 public:
  explicit ConstOp(OpKernelConstruction& c) : OpKernel(c) {
    DType dtype = DType::kInvalid;
    c.SetStatus(c.GetAttr("value", &value_));
    c.SetStatus(c.GetAttr("dtype", &dtype));
    if (c.status().ok() && value_.dtype() != dtype) {
      c.SetStatus(errors::InvalidArgument("Const value is ", value_.Describe(),
                                          " but attr dtype is ", DTypeName(dtype)));
    }
  }
  // The value is immutable after construction, so every step can share it.
  void Compute(OpKernelContext& ctx) override { ctx.set_output(0, value_); }
  bool is_cheap() const override { return true; }

 private:
  Tensor value_;
};

Status ConstShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(Tensor value, c.GetAttr<Tensor>("value"));
  TFD_ASSIGN_OR_RETURN(DType dtype, c.GetAttr<DType>("dtype"));
  if (value.dtype() != dtype) {
    return errors::InvalidArgument("value is ", value.Describe(), " but attr dtype is ",
                                   DTypeName(dtype));
  }
  c.set_output(0, value.shape());
  // Consumers' shape functions (Reshape, Fill, Tile, ...) can use the value.
  c.set_output_value(0, value);
  return OkStatus();
}

// Runs only when the executor found no feed for the node: that is the error.
class PlaceholderOp : public OpKernel {
 public:
  explicit PlaceholderOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("dtype", &dtype_));
    c.SetStatus(c.GetAttr("shape", &shape_));
  }
  void Compute(OpKernelContext& ctx) override {
    ctx.SetStatus(errors::InvalidArgument("you must feed a value for placeholder tensor '",
                                          name(), "' with dtype ", DTypeName(dtype_),
                                          " and shape ", shape_.ToString()));
  }
  bool is_cheap() const override { return true; }

 private:
  DType dtype_ = DType::kInvalid;
  PartialShape shape_;
};

Status PlaceholderShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(PartialShape shape, c.GetAttr<PartialShape>("shape"));
  c.set_output(0, std::move(shape));
  return OkStatus();
}

// Unfed, the default flows through; it must still fit the declared shape so
// that a graph never sees a value its shape functions ruled out.
class PlaceholderWithDefaultOp : public OpKernel {
 public:
  explicit PlaceholderWithDefaultOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("shape", &shape_));
  }
  void Compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    TFD_OP_REQUIRES(ctx, shape_.IsCompatibleWith(in.shape()),
                    errors::InvalidArgument("default value ", in.Describe(),
                                            " does not match the placeholder's shape ",
                                            shape_.ToString()));
    ctx.set_output(0, in);
  }
  bool is_cheap() const override { return true; }

 private:
  PartialShape shape_;
};

Status PlaceholderWithDefaultShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(PartialShape shape, c.GetAttr<PartialShape>("shape"));
  if (!shape.IsCompatibleWith(c.input(0))) {
    return errors::InvalidArgument("input 0 (the default) has shape ", c.input(0).ToString(),
                                   ", incompatible with attr shape ", shape.ToString());
  }
  // The declared shape, not the default's: a feed may be any value of it.
  c.set_output(0, std::move(shape));
  return OkStatus();
}

class IdentityOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override { ctx.set_output(0, ctx.input(0)); }
  bool is_cheap() const override { return true; }
};

}  // namespace

Status RegisterConstOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<ConstOp>(
      OpDefBuilder("Const")
          .Output("output: dtype")
          .Attr("value: tensor")
          .Attr("dtype: type")
          .Doc("A constant: outputs the tensor held in attr value, whose dtype must equal "
               "attr dtype. Shape: the value's shape."),
      ConstShape));
  TFD_RETURN_IF_ERROR(r.Add<PlaceholderOp>(
      OpDefBuilder("Placeholder")
          .Output("output: dtype")
          .Attr("dtype: type")
          .Attr("shape: shape = <unknown>")
          .SetIsStateful()  // two placeholders are two feeds: never merge or fold them
          .Doc("A value that must be fed at run time; running it unfed is INVALID_ARGUMENT "
               "(use PlaceholderWithDefault for an optional feed). Shape: attr shape."),
      PlaceholderShape));
  TFD_RETURN_IF_ERROR(r.Add<PlaceholderWithDefaultOp>(
      OpDefBuilder("PlaceholderWithDefault")
          .Input("input: dtype")
          .Output("output: dtype")
          .Attr("dtype: type")
          .Attr("shape: shape = <unknown>")
          .SetIsStateful()  // a feed may replace it: never fold the default in
          .Doc("A placeholder that outputs input when it is not fed; input must be "
               "compatible with attr shape. Shape: attr shape."),
      PlaceholderWithDefaultShape));
  TFD_RETURN_IF_ERROR(r.Add<IdentityOp>(
      OpDefBuilder("Identity")
          .Input("input: T")
          .Output("output: T")
          .Attr("T: type")
          .Doc("Outputs input unchanged, sharing its buffer. Shape: input's shape."),
      shape_fns::UnchangedShape));
  return OkStatus();
}

}  // namespace tfd::kernels::array
