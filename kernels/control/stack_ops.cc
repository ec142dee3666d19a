// StackV2, StackPushV2, StackPopV2 (and their reference forms) and RefEnter:
// what the gradient of a while loop is built from (kernels/control/
// while_grad.h), as in TensorFlow 1.x.
// The forward loop pushes, in each iteration, the values its gradient needs;
// the gradient loop runs as many iterations in reverse and pops them.
//
// A stack belongs to one step: each run of StackV2 makes a new, empty one
// and hands it on as a reference, so it lives exactly as long as the values
// that carry it (the step's), and two steps, or two instances of a nested
// loop, never share one. RefEnter brings such a reference into a loop.
// _StackPushRef and _StackPopRef keep references instead of values: what a
// loop's gradient needs of a TensorArray made in each iteration of the
// loop (TF1's arrays are values; tfd's are references).
#include <deque>

#include "common/mutex.h"
#include "common/op_kernel.h"
#include "common/shape_inference.h"
#include "kernels/control/control_ops.h"

namespace tfd::kernels {
namespace {

// Thread-safety: Push and Pop may be called from any thread.
class TensorStack : public ResourceBase {
 public:
  TensorStack(DType type, int64_t max_size) : type_(type), max_size_(max_size) {}
  std::string_view Kind() const override { return "stack"; }
  std::string DebugString() const override {
    MutexLock lock(mu_);
    return std::string(DTypeName(type_)) + " stack of " + std::to_string(items_.size());
  }

  // `v`: a tensor of the stack's type, or a reference of it (declared so by
  // the pushing node: `ref_type`).
  Status Push(const Value& v, DType ref_type, const std::string& node) {
    const DType type = v.is_ref() ? ref_type : v.tensor.dtype();
    if (type != type_) {
      return errors::InvalidArgument("node '", node, "' pushes a ", DTypeName(type),
                                     v.is_ref() ? " reference" : " tensor", " onto a stack of ",
                                     DTypeName(type_));
    }
    MutexLock lock(mu_);
    if (max_size_ >= 0 && static_cast<int64_t>(items_.size()) >= max_size_) {
      return errors::OutOfRange("node '", node, "' pushes onto a full stack (max_size ", max_size_,
                                ")");
    }
    items_.push_back(v);
    return OkStatus();
  }

  // What was pushed last: a reference when `ref` (the popping node's
  // output is one), else a tensor.
  StatusOr<Value> Pop(bool ref, const std::string& node) {
    MutexLock lock(mu_);
    if (items_.empty()) {
      return errors::OutOfRange("node '", node, "' pops an empty stack: more pops than pushes");
    }
    if (items_.back().is_ref() != ref) {
      return errors::InvalidArgument("node '", node, "' pops a ", ref ? "reference" : "tensor",
                                     " from a stack whose top is not one");
    }
    Value v = std::move(items_.back());
    items_.pop_back();
    return v;
  }

 private:
  const DType type_;
  const int64_t max_size_;  // < 0: unbounded
  mutable Mutex mu_;
  std::deque<Value> items_ GUARDED_BY(mu_);
};

class StackOp : public OpKernel {
 public:
  explicit StackOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("elem_type", &type_));
  }
  void Compute(OpKernelContext& ctx) override {
    const Tensor& max = ctx.input(0);
    TFD_OP_REQUIRES(ctx, max.num_elements() == 1,
                    errors::InvalidArgument("max_size must be a scalar, got ", max.Describe()));
    ctx.set_output_ref(0, std::make_shared<TensorStack>(type_, max.data<int32_t>()[0]));
  }
  bool is_cheap() const override { return true; }

 private:
  DType type_ = DType::kInvalid;
};

// StackPushV2, and _StackPushRef when `kRef`: pushes input 1 and forwards it.
template <bool kRef>
class StackPushOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    auto stack = ctx.input_ref<TensorStack>(0);
    TFD_OP_REQUIRES_OK(ctx, stack.status());
    Value v{ctx.input(1), nullptr};
    if constexpr (kRef) {
      auto r = ctx.input_ref<ResourceBase>(1);
      TFD_OP_REQUIRES_OK(ctx, r.status());
      v.ref = *r;
    }
    TFD_OP_REQUIRES_OK(ctx, (*stack)->Push(v, ctx.output_type(0), ctx.node().name));
    if constexpr (kRef) {
      ctx.set_output_ref(0, v.ref);
    } else {
      ctx.set_output(0, v.tensor);
    }
  }
  bool is_cheap() const override { return true; }
};

// StackPopV2, and _StackPopRef when `kRef`.
template <bool kRef>
class StackPopOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    auto stack = ctx.input_ref<TensorStack>(0);
    TFD_OP_REQUIRES_OK(ctx, stack.status());
    auto v = (*stack)->Pop(kRef, ctx.node().name);
    TFD_OP_REQUIRES_OK(ctx, v.status());
    if constexpr (kRef) {
      ctx.set_output_ref(0, std::move(v->ref));
      return;
    }
    TFD_OP_REQUIRES(ctx, v->tensor.dtype() == ctx.output_type(0),
                    errors::InvalidArgument("node '", ctx.node().name, "' pops a ",
                                            DTypeName(v->tensor.dtype()), " tensor, declared ",
                                            DTypeName(ctx.output_type(0))));
    ctx.set_output(0, std::move(v->tensor));
  }
  bool is_cheap() const override { return true; }
};

// Enter for a reference: the executor delivers it into the child frame as
// it does an Enter's value (daemon/runtime/loop_frames.h).
class RefEnterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    auto r = ctx.input_ref<ResourceBase>(0);
    TFD_OP_REQUIRES_OK(ctx, r.status());
    ctx.set_output_ref(0, *r);
  }
  bool is_cheap() const override { return true; }
};

}  // namespace

Status RegisterStackOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<StackOp>(
      OpDefBuilder("StackV2")
          .Input("max_size: int32")
          .Output("handle: Ref(string)")
          .Attr("elem_type: type")
          .Attr("stack_name: string = \"\"")
          .SetIsStateful()
          .Doc("A new, empty stack of elem_type tensors for this step, at most max_size "
               "deep (< 0: unbounded); what a while loop's gradient keeps the forward "
               "loop's values on. Shape: a reference, no value shape."),
      shape_fns::Unknown));
  TFD_RETURN_IF_ERROR(r.Add<StackPushOp<false>>(
      OpDefBuilder("StackPushV2")
          .Input("handle: Ref(string)")
          .Input("elem: T")
          .Output("output: T")
          .Attr("T: type")
          .Attr("swap_memory: bool = false")
          .SetIsStateful()
          .Doc("Pushes elem onto the stack and forwards it; OUT_OF_RANGE on a full stack. "
               "swap_memory is accepted and ignored. Shape: elem's."),
      [](InferenceContext& c) {
        c.set_output(0, c.input(1));
        return OkStatus();
      }));
  TFD_RETURN_IF_ERROR(r.Add<StackPopOp<false>>(
      OpDefBuilder("StackPopV2")
          .Input("handle: Ref(string)")
          .Output("elem: elem_type")
          .Attr("elem_type: type")
          .SetIsStateful()
          .Doc("Pops the tensor last pushed; OUT_OF_RANGE on an empty stack. Shape: unknown."),
      shape_fns::Unknown));
  TFD_RETURN_IF_ERROR(r.Add<StackPushOp<true>>(
      OpDefBuilder("_StackPushRef")
          .Input("handle: Ref(string)")
          .Input("elem: Ref(T)")
          .Output("output: Ref(T)")
          .Attr("T: type")
          .SetIsStateful()
          .Doc("StackPushV2 of a reference (a TensorArray made in a loop's iteration), for "
               "the loop's gradient; forwards it. Shape: a reference."),
      shape_fns::Unknown));
  TFD_RETURN_IF_ERROR(r.Add<StackPopOp<true>>(
      OpDefBuilder("_StackPopRef")
          .Input("handle: Ref(string)")
          .Output("elem: Ref(elem_type)")
          .Attr("elem_type: type")
          .SetIsStateful()
          .Doc("Pops the reference _StackPushRef pushed last; OUT_OF_RANGE on an empty "
               "stack. Shape: a reference."),
      shape_fns::Unknown));
  return r.Add<RefEnterOp>(
      OpDefBuilder("RefEnter")
          .Input("data: Ref(T)")
          .Output("output: Ref(T)")
          .Attr("T: type")
          .Attr("frame_name: string")
          .Attr("is_constant: bool = false")
          .Attr("parallel_iterations: int = 10")
          .Doc("Enter for a reference (a stack, a variable): forwards it into the loop "
               "named frame_name, into every iteration when is_constant. Shape: data's."),
      shape_fns::UnchangedShape);
}

}  // namespace tfd::kernels
