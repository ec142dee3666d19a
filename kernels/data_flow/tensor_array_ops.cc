// The TensorArray ops of TensorFlow 1.x (TensorArrayV3 and its Write, Read,
// Gather, Scatter, Concat, Split, Size, Close and Grad): kernels over the
// resource of tensor_array.h, whose reference the ops pass as handle. Every
// op but Close takes a flow scalar and the writing ones give one back, so
// the graph orders reads after the writes they see. Gradients:
// tensor_array_grad.cc.
#include "common/op_kernel.h"
#include "common/shape_inference.h"
#include "kernels/data_flow/data_flow_ops_internal.h"
#include "kernels/data_flow/tensor_array.h"

namespace tfd::kernels::data_flow {
namespace {

// The int32 or int64 vector input `i` (indices, lengths); INVALID_ARGUMENT
// naming `what` when it is not a vector.
StatusOr<std::vector<int64_t>> IndicesInput(const OpKernelContext& ctx, int i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (t.rank() != 1)
    return errors::InvalidArgument(what, " must be a vector but is ", t.Describe());
  std::vector<int64_t> out(t.num_elements());
  for (int64_t k = 0; k < t.num_elements(); ++k) {
    out[k] = t.dtype() == DType::kInt64 ? t.data<int64_t>()[k] : t.data<int32_t>()[k];
  }
  return out;
}

// Base of the ops on an array: its reference is input 0, which Run gets;
// the flow out (when the op has one) is the flow in, passed on once the op
// is done.
class ArrayOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) final {
    auto ta = ctx.input_ref<TensorArray>(0);
    TFD_OP_REQUIRES_OK(ctx, ta.status());
    TFD_OP_REQUIRES_OK(ctx, Run(ctx, **ta));
  }
  bool is_cheap() const override { return true; }

 protected:
  virtual Status Run(OpKernelContext& ctx, TensorArray& ta) = 0;
  static void PassFlow(OpKernelContext& ctx, int flow_input) {
    ctx.set_output(0, ctx.input(flow_input));
  }
  // The array's dtype is the dtype the node declares for output 0.
  static Status CheckDType(const OpKernelContext& ctx, const TensorArray& ta) {
    if (ta.dtype() == ctx.output_type(0)) return OkStatus();
    return errors::InvalidArgument("node '", ctx.node().name, "' reads ",
                                   DTypeName(ctx.output_type(0)), " from an array of ",
                                   DTypeName(ta.dtype()));
  }
};

class TensorArrayOp : public OpKernel {
 public:
  explicit TensorArrayOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("dtype", &options_.dtype));
    c.SetStatus(c.GetAttr("element_shape", &options_.element_shape));
    c.SetStatus(c.GetAttr("dynamic_size", &options_.dynamic_size));
    c.SetStatus(c.GetAttr("clear_after_read", &options_.clear_after_read));
    c.SetStatus(c.GetAttr("identical_element_shapes", &options_.identical_element_shapes));
    std::string name;
    c.SetStatus(c.GetAttr("tensor_array_name", &name));
    options_.name = name.empty() ? c.node().name : name;
  }
  void Compute(OpKernelContext& ctx) override {
    auto size = ScalarInput<int32_t>(ctx, 0, "size");
    TFD_OP_REQUIRES_OK(ctx, size.status());
    TFD_OP_REQUIRES(ctx, *size >= 0,
                    errors::InvalidArgument("size must be non-negative, got ", *size));
    ctx.set_output_ref(0, std::make_shared<TensorArray>(options_, *size));
    ctx.set_output(1, Tensor::Scalar<float>(0.0f));
  }
  bool is_cheap() const override { return true; }

 private:
  TensorArray::Options options_;
};

class WriteOp : public ArrayOp {
 public:
  using ArrayOp::ArrayOp;
  Status Run(OpKernelContext& ctx, TensorArray& ta) override {
    TFD_ASSIGN_OR_RETURN(int32_t index, ScalarInput<int32_t>(ctx, 1, "index"));
    TFD_RETURN_IF_ERROR(ta.Write(index, ctx.input(2), ctx.node().name));
    PassFlow(ctx, 3);
    return OkStatus();
  }
};

class ReadOp : public ArrayOp {
 public:
  using ArrayOp::ArrayOp;
  Status Run(OpKernelContext& ctx, TensorArray& ta) override {
    TFD_RETURN_IF_ERROR(CheckDType(ctx, ta));
    TFD_ASSIGN_OR_RETURN(int32_t index, ScalarInput<int32_t>(ctx, 1, "index"));
    TFD_ASSIGN_OR_RETURN(Tensor value, ta.Read(index, ctx.node().name));
    ctx.set_output(0, std::move(value));
    return OkStatus();
  }
};

class GatherOp : public ArrayOp {
 public:
  using ArrayOp::ArrayOp;
  Status Run(OpKernelContext& ctx, TensorArray& ta) override {
    TFD_RETURN_IF_ERROR(CheckDType(ctx, ta));
    TFD_ASSIGN_OR_RETURN(auto indices, IndicesInput(ctx, 1, "indices"));
    TFD_ASSIGN_OR_RETURN(Tensor value, ta.Gather(indices, ctx.node().name));
    ctx.set_output(0, std::move(value));
    return OkStatus();
  }
};

class ScatterOp : public ArrayOp {
 public:
  using ArrayOp::ArrayOp;
  Status Run(OpKernelContext& ctx, TensorArray& ta) override {
    TFD_ASSIGN_OR_RETURN(auto indices, IndicesInput(ctx, 1, "indices"));
    TFD_RETURN_IF_ERROR(ta.Scatter(indices, ctx.input(2), ctx.node().name));
    PassFlow(ctx, 3);
    return OkStatus();
  }
};

class ConcatOp : public ArrayOp {
 public:
  using ArrayOp::ArrayOp;
  Status Run(OpKernelContext& ctx, TensorArray& ta) override {
    TFD_RETURN_IF_ERROR(CheckDType(ctx, ta));
    TFD_ASSIGN_OR_RETURN(auto joined, ta.Concat(ctx.node().name));
    ctx.set_output(0, std::move(joined.first));
    ctx.set_output(1, std::move(joined.second));
    return OkStatus();
  }
};

class SplitOp : public ArrayOp {
 public:
  using ArrayOp::ArrayOp;
  Status Run(OpKernelContext& ctx, TensorArray& ta) override {
    TFD_ASSIGN_OR_RETURN(auto lengths, IndicesInput(ctx, 2, "lengths"));
    TFD_RETURN_IF_ERROR(ta.Split(ctx.input(1), lengths, ctx.node().name));
    PassFlow(ctx, 3);
    return OkStatus();
  }
};

class SizeOp : public ArrayOp {
 public:
  using ArrayOp::ArrayOp;
  Status Run(OpKernelContext& ctx, TensorArray& ta) override {
    ctx.set_output(0, Tensor::Scalar<int32_t>(static_cast<int32_t>(ta.Size())));
    return OkStatus();
  }
};

class CloseOp : public ArrayOp {
 public:
  using ArrayOp::ArrayOp;
  Status Run(OpKernelContext&, TensorArray& ta) override {
    ta.Close();
    return OkStatus();
  }
};

class GradOp : public ArrayOp {
 public:
  explicit GradOp(OpKernelConstruction& c) : ArrayOp(c) {
    c.SetStatus(c.GetAttr("source", &source_));
  }
  Status Run(OpKernelContext& ctx, TensorArray& ta) override {
    TFD_ASSIGN_OR_RETURN(auto grad, ta.Grad(source_, ctx.node().name));
    ctx.set_output_ref(0, std::move(grad));
    ctx.set_output(1, ctx.input(1));
    return OkStatus();
  }

 private:
  std::string source_;
};

// Shape functions. The flow is a scalar float everywhere.
Status ArrayShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(0, 0));
  c.set_output(0, PartialShape::Unknown());
  c.set_output(1, PartialShape({}));
  return OkStatus();
}

Status ElementShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  TFD_ASSIGN_OR_RETURN(PartialShape shape, c.GetAttr<PartialShape>("element_shape"));
  c.set_output(0, shape);
  return OkStatus();
}

Status GatheredShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 1));
  TFD_ASSIGN_OR_RETURN(PartialShape element, c.GetAttr<PartialShape>("element_shape"));
  const int64_t n = c.input(1).rank_known() ? c.input(1).dim(0) : -1;
  if (!element.rank_known()) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  std::vector<int64_t> dims{n};
  dims.insert(dims.end(), element.dims().begin(), element.dims().end());
  c.set_output(0, PartialShape(dims));
  return OkStatus();
}

Status ConcatShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(PartialShape rest, c.GetAttr<PartialShape>("element_shape_except0"));
  if (rest.rank_known()) {
    std::vector<int64_t> dims{-1};
    dims.insert(dims.end(), rest.dims().begin(), rest.dims().end());
    c.set_output(0, PartialShape(dims));
  } else {
    c.set_output(0, PartialShape::Unknown());
  }
  c.set_output(1, PartialShape({-1}));
  return OkStatus();
}

Status FlowShape(InferenceContext& c) {
  c.set_output(0, PartialShape({}));
  return OkStatus();
}

Status RegisterMakeAndGrad(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<TensorArrayOp>(
      OpDefBuilder("TensorArrayV3")
          .Input("size: int32")
          .Output("handle: Ref(string)")
          .Output("flow: float32")
          .Attr("dtype: type")
          .Attr("element_shape: shape = <unknown>")
          .Attr("dynamic_size: bool = false")
          .Attr("clear_after_read: bool = true")
          .Attr("identical_element_shapes: bool = false")
          .Attr("tensor_array_name: string = \"\"")
          .SetIsStateful()
          .Doc("A new array of `size` dtype tensors for this step, none written yet "
               "(TF1's TensorArray): each element is written once, read once when "
               "clear_after_read, must fit element_shape, and reads as zeros when never "
               "written and element_shape is fully known; dynamic_size lets writes past the "
               "end grow it. Its ops take and give the flow, which orders them. Shape: a "
               "reference, and the flow []; size must be a scalar."),
      ArrayShape));
  return r.Add<GradOp>(
      OpDefBuilder("TensorArrayGradV3")
          .Input("handle: Ref(string)")
          .Input("flow_in: float32")
          .Output("grad_handle: Ref(string)")
          .Output("flow_out: float32")
          .Attr("source: string")
          .SetIsStateful()
          .Doc("The gradient array of the array for the gradients named source: made on "
               "first use with the array's size and element shape, where writes to one index "
               "add up; the same array later. What the TensorArray ops' gradients write and "
               "read. Shape: a reference, and the flow []."),
      [](InferenceContext& c) {
        c.set_output(0, PartialShape::Unknown());
        c.set_output(1, PartialShape({}));
        return OkStatus();
      });
}

Status RegisterElementOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<WriteOp>(
      OpDefBuilder("TensorArrayWriteV3")
          .Input("handle: Ref(string)")
          .Input("index: int32")
          .Input("value: T")
          .Input("flow_in: float32")
          .Output("flow_out: float32")
          .Attr("T: type")
          .SetIsStateful()
          .Doc("Writes value at index. INVALID_ARGUMENT on a second write, an index past a "
               "fixed size, a dtype or shape the array does not hold. Shape: [], the flow."),
      FlowShape));
  TFD_RETURN_IF_ERROR(r.Add<ReadOp>(
      OpDefBuilder("TensorArrayReadV3")
          .Input("handle: Ref(string)")
          .Input("index: int32")
          .Input("flow_in: float32")
          .Output("value: dtype")
          .Attr("dtype: type")
          .Attr("element_shape: shape = <unknown>")
          .SetIsStateful()
          .Doc("The element at index (zeros when never written and the element shape is "
               "known), cleared when the array clears after read. Shape: element_shape."),
      ElementShape));
  TFD_RETURN_IF_ERROR(r.Add<GatherOp>(
      OpDefBuilder("TensorArrayGatherV3")
          .Input("handle: Ref(string)")
          .Input("indices: int32")
          .Input("flow_in: float32")
          .Output("value: dtype")
          .Attr("dtype: type")
          .Attr("element_shape: shape = <unknown>")
          .SetIsStateful()
          .Doc("The elements at indices stacked along a new dimension 0 (TensorArray.stack "
               "gathers 0..size-1); they must share a shape. Shape: [len(indices)] + "
               "element_shape."),
      GatheredShape));
  return r.Add<ScatterOp>(
      OpDefBuilder("TensorArrayScatterV3")
          .Input("handle: Ref(string)")
          .Input("indices: int32")
          .Input("value: T")
          .Input("flow_in: float32")
          .Output("flow_out: float32")
          .Attr("T: type")
          .SetIsStateful()
          .Doc("Writes value[i] at indices[i] (TensorArray.unstack scatters to 0..n-1); "
               "value's first dimension must be len(indices). Shape: [], the flow."),
      FlowShape);
}

Status RegisterWholeOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<ConcatOp>(
      OpDefBuilder("TensorArrayConcatV3")
          .Input("handle: Ref(string)")
          .Input("flow_in: float32")
          .Output("value: dtype")
          .Output("lengths: int64")
          .Attr("dtype: type")
          .Attr("element_shape_except0: shape = <unknown>")
          .SetIsStateful()
          .Doc("Elements 0..size-1 concatenated along dimension 0 (they agree in the "
               "others), and each one's length there. Shape: [?] + element_shape_except0, "
               "and [?]."),
      ConcatShape));
  TFD_RETURN_IF_ERROR(r.Add<SplitOp>(
      OpDefBuilder("TensorArraySplitV3")
          .Input("handle: Ref(string)")
          .Input("value: T")
          .Input("lengths: int64")
          .Input("flow_in: float32")
          .Output("flow_out: float32")
          .Attr("T: type")
          .SetIsStateful()
          .Doc("Writes value's consecutive pieces along dimension 0, of lengths (summing to "
               "its first dimension), at 0..len(lengths)-1; a fixed-size array must have "
               "len(lengths) elements. Shape: [], the flow."),
      FlowShape));
  TFD_RETURN_IF_ERROR(
      r.Add<SizeOp>(OpDefBuilder("TensorArraySizeV3")
                        .Input("handle: Ref(string)")
                        .Input("flow_in: float32")
                        .Output("size: int32")
                        .SetIsStateful()
                        .Doc("The array's size: a dynamic one's grows with its writes. Shape: []."),
                    FlowShape));
  return r.Add<CloseOp>(
      OpDefBuilder("TensorArrayCloseV3")
          .Input("handle: Ref(string)")
          .SetIsStateful()
          .Doc("Frees the array's elements; any later use is INVALID_ARGUMENT. Shape: no "
               "outputs."),
      shape_fns::NoOutputs);
}

}  // namespace

Status RegisterTensorArrayOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(RegisterMakeAndGrad(r));
  TFD_RETURN_IF_ERROR(RegisterElementOps(r));
  TFD_RETURN_IF_ERROR(RegisterWholeOps(r));
  return RegisterTensorArrayGradients(r);
}

}  // namespace tfd::kernels::data_flow
