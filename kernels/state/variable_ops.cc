// Variable ops: VariableV2 (creates or finds the resource), Assign,
// AssignAdd, AssignSub, CountUpTo, IsVariableInitialized,
// ReportUninitializedVariables.
#include <limits>
#include <string>
#include <type_traits>

#include "common/tensor_eigen.h"
#include "kernels/state/state_ops_internal.h"

namespace tfd::kernels::state {

StatusOr<std::shared_ptr<Variable>> VariableInput(const OpKernelContext& ctx, int i, DType dtype) {
  TFD_ASSIGN_OR_RETURN(std::shared_ptr<Variable> v, ctx.input_ref<Variable>(i));
  if (v->dtype() != dtype) {
    return errors::InvalidArgument("variable '", v->FullName(), "' is ", DTypeName(v->dtype()),
                                   " but ", ctx.node().op, " expects ", DTypeName(dtype));
  }
  return v;
}

Status ScalarInput(InferenceContext& c, int i, const char* what) {
  if (c.input(i).rank_known() && c.input(i).rank() != 0) {
    return errors::InvalidArgument(what, " (input ", i, ") must be a scalar but has shape ",
                                   c.input(i).ToString());
  }
  return OkStatus();
}

StatusOr<PartialShape> MergeInputs(InferenceContext& c, std::initializer_list<int> idx) {
  PartialShape out = PartialShape::Unknown();
  for (int i : idx) {
    auto merged = out.Merge(c.input(i));
    if (!merged.ok()) {
      return errors::InvalidArgument("input ", i, " has shape ", c.input(i).ToString(),
                                     " but the variable's shape is ", out.ToString());
    }
    out = std::move(merged).value();
  }
  return out;
}

namespace {

class VariableV2Op : public OpKernel {
 public:
  explicit VariableV2Op(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("shape", &shape_));
    c.SetStatus(c.GetAttr("dtype", &dtype_));
    c.SetStatus(c.GetAttr("container", &container_));
    c.SetStatus(c.GetAttr("shared_name", &shared_name_));
    std::string slice;
    c.SetStatus(c.GetAttr(kSaveSliceInfoAttr, &slice));
    if (!slice.empty()) SetSlice(c, slice);
  }
  bool is_cheap() const override { return true; }

  void Compute(OpKernelContext& ctx) override {
    const std::string& name = shared_name_.empty() ? ctx.node().name : shared_name_;
    auto var = ctx.resources().LookupOrCreate<Variable>(
        container_, name, [&]() -> StatusOr<std::shared_ptr<Variable>> {
          return std::make_shared<Variable>(container_, name, dtype_, shape_);
        });
    TFD_OP_REQUIRES_OK(ctx, var.status());
    if (slice_ && (*var)->created_by_restore() && (*var)->CheckpointSlice() != slice_) {
      // A shard a restore on start made from another sharding of the job:
      // this one starts afresh, and the cluster's restore that follows
      // gives it its rows (daemon/checkpoint/sliced_restore.h).
      (void)ctx.resources().Delete(container_, name);
      var = ctx.resources().LookupOrCreate<Variable>(
          container_, name, [&]() -> StatusOr<std::shared_ptr<Variable>> {
            return std::make_shared<Variable>(container_, name, dtype_, shape_);
          });
      TFD_OP_REQUIRES_OK(ctx, var.status());
    }
    const Variable& v = **var;
    TFD_OP_REQUIRES(ctx, v.AcceptsDeclaration(dtype_, shape_),
                    errors::InvalidArgument("variable '", v.FullName(), "' already exists as ",
                                            DTypeName(v.dtype()), v.declared_shape().ToString(),
                                            " but this node declares it ", DTypeName(dtype_),
                                            shape_.ToString()));
    if (slice_) (*var)->SetSlice(*slice_);
    ctx.set_output_ref(0, *var);
  }

 private:
  // The slice must describe a shard of the declared shape.
  void SetSlice(OpKernelConstruction& c, const std::string& text) {
    auto parsed = SaveSliceInfo::Parse(text);
    if (!parsed.ok()) return c.SetStatus(parsed.status());
    if (!shape_.IsCompatibleWith(PartialShape(parsed->ShardShape()))) {
      return c.SetStatus(errors::InvalidArgument(
          "variable shape ", shape_.ToString(), " is not that of its slice '", text,
          "' (", parsed->ShardShape().ToString(), ")"));
    }
    slice_ = std::move(parsed).value();
  }

  std::optional<SaveSliceInfo> slice_;
  PartialShape shape_;
  DType dtype_ = DType::kInvalid;
  std::string container_, shared_name_;
};

class AssignOp : public OpKernel {
 public:
  explicit AssignOp(OpKernelConstruction& c) : OpKernel(c), dtype_(c.input_type(0)) {
    c.SetStatus(c.GetAttr("validate_shape", &validate_shape_));
  }
  bool is_cheap() const override { return true; }

  void Compute(OpKernelContext& ctx) override {
    auto var = VariableInput(ctx, 0, dtype_);
    TFD_OP_REQUIRES_OK(ctx, var.status());
    // Replacing the value is a pointer swap under the variable's lock, so
    // use_locking changes nothing here.
    TFD_OP_REQUIRES_OK(ctx, (*var)->Assign(ctx.input(1), validate_shape_));
    ctx.set_output_ref(0, *var);
    ctx.set_output(0, ctx.input(1));  // what a value consumer sees: the value assigned
  }

 private:
  const DType dtype_;
  bool validate_shape_ = true;
};

// AssignAdd (kSign = +1) and AssignSub (kSign = -1).
template <int kSign>
class AssignUpdateOp : public OpKernel {
 public:
  explicit AssignUpdateOp(OpKernelConstruction& c) : OpKernel(c), dtype_(c.input_type(0)) {
    c.SetStatus(c.GetAttr("use_locking", &use_locking_));
  }
  // A small update costs less than its hand-off to the pool.
  int64_t cheap_up_to_elements() const override { return kCheapAssignUpdateElements; }

  void Compute(OpKernelContext& ctx) override {
    auto var = VariableInput(ctx, 0, dtype_);
    TFD_OP_REQUIRES_OK(ctx, var.status());
    const Tensor& delta = ctx.input(1);
    Tensor updated;
    Variable* vars[] = {var->get()};
    // What the update reads and writes, behind one pointer: std::function
    // holds a capture of two pointers without allocating.
    struct Args {
      const Variable& var;
      const Tensor& delta;
      Tensor& updated;
    } args{**var, delta, updated};
    Status s = UpdateVariables(vars, use_locking_, [this, &args](std::span<Tensor> v) -> Status {
      if (!(v[0].shape() == args.delta.shape())) {
        return errors::InvalidArgument("variable '", args.var.FullName(), "' holds ",
                                       v[0].Describe(), " but the value to ",
                                       kSign > 0 ? "add" : "subtract", " is ",
                                       args.delta.Describe());
      }
      TFD_SWITCH_NUMERIC(
          dtype_, T,
          {
            if constexpr (kSign > 0) {
              EigenFlat<T>(v[0]) += EigenFlat<T>(args.delta);
            } else {
              EigenFlat<T>(v[0]) -= EigenFlat<T>(args.delta);
            }
          },
          return errors::InvalidArgument(DTypeName(dtype_), " is not numeric"));
      args.updated = v[0];
      return OkStatus();
    });
    TFD_OP_REQUIRES_OK(ctx, s);
    ctx.set_output_ref(0, *var);
    // A value consumer sees the result of this update, not whatever a later
    // update made of the variable (a counter enqueued by two workers must
    // give distinct values). Sharing the buffer costs a copy only if the
    // variable is updated again while the consumer still holds it.
    ctx.set_output(0, updated);
  }

 private:
  const DType dtype_;
  bool use_locking_ = false;
};

// TF1's counter with a limit (count_up_to; what limit_epochs counts epochs
// with): the scalar's value before it is incremented, or OUT_OF_RANGE once
// it has reached `limit`, leaving it there. Locked: concurrent counts never
// hand out one value twice nor pass the limit.
class CountUpToOp : public OpKernel {
 public:
  explicit CountUpToOp(OpKernelConstruction& c) : OpKernel(c), dtype_(c.input_type(0)) {
    c.SetStatus(c.GetAttr("limit", &limit_));
  }
  bool is_cheap() const override { return true; }

  void Compute(OpKernelContext& ctx) override {
    auto var = VariableInput(ctx, 0, dtype_);
    TFD_OP_REQUIRES_OK(ctx, var.status());
    Tensor before;
    Variable* vars[] = {var->get()};
    struct Args {
      const CountUpToOp& op;
      Tensor& before;
    } args{*this, before};
    TFD_OP_REQUIRES_OK(
        ctx, UpdateVariables(vars, /*use_locking=*/true, [&args, &var](std::span<Tensor> v) {
          return args.op.Count(**var, v[0], args.before);
        }));
    ctx.set_output(0, before);
  }

 private:
  Status Count(const Variable& var, Tensor& value, Tensor& before) const {
    if (value.shape().rank() != 0) {
      return errors::InvalidArgument("CountUpTo needs a scalar variable; '", var.FullName(),
                                     "' holds ", value.Describe());
    }
    auto count = [&](auto* x) -> Status {
      using T = std::remove_pointer_t<decltype(x)>;
      // An int32 counter given a limit past its range stops at its largest
      // value rather than overflow.
      if (*x >= limit_ || *x == std::numeric_limits<T>::max()) {
        return errors::OutOfRange("Reached limit of ", limit_, " (variable '", var.FullName(),
                                  "' holds ", *x, ")");
      }
      before = Tensor::Scalar(*x);
      ++*x;
      return OkStatus();
    };
    return dtype_ == DType::kInt32 ? count(value.data<int32_t>()) : count(value.data<int64_t>());
  }

  const DType dtype_;
  int64_t limit_ = 0;
};

class IsVariableInitializedOp : public OpKernel {
 public:
  explicit IsVariableInitializedOp(OpKernelConstruction& c)
      : OpKernel(c), dtype_(c.input_type(0)) {}
  bool is_cheap() const override { return true; }

  void Compute(OpKernelContext& ctx) override {
    auto var = VariableInput(ctx, 0, dtype_);
    TFD_OP_REQUIRES_OK(ctx, var.status());
    Tensor* out;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape(), &out));
    out->scalar<bool>() = (*var)->initialized();
  }

 private:
  const DType dtype_;
};

class ReportUninitializedVariablesOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    std::vector<std::string> names;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      auto var = ctx.input_ref<Variable>(i);
      TFD_OP_REQUIRES_OK(ctx, var.status());
      if (!(*var)->initialized()) names.push_back((*var)->FullName());
    }
    Tensor* out;
    TFD_OP_REQUIRES_OK(
        ctx, ctx.allocate_output(0, TensorShape({static_cast<int64_t>(names.size())}), &out));
    for (size_t i = 0; i < names.size(); ++i) out->data<std::string>()[i] = std::move(names[i]);
  }
};

Status VariableShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(PartialShape s, c.GetAttr<PartialShape>("shape"));
  c.set_output(0, std::move(s));
  return OkStatus();
}

Status AssignShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(bool validate, c.GetAttr<bool>("validate_shape"));
  if (!validate) {
    c.set_output(0, c.input(1));
    return OkStatus();
  }
  TFD_ASSIGN_OR_RETURN(PartialShape s, MergeInputs(c, {0, 1}));
  c.set_output(0, std::move(s));
  return OkStatus();
}

Status AssignUpdateShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(PartialShape s, MergeInputs(c, {0, 1}));
  c.set_output(0, std::move(s));
  return OkStatus();
}

Status VectorOutput(InferenceContext& c) {
  c.set_output(0, PartialShape({-1}));
  return OkStatus();
}

const char* kNumeric = "T: {float32, float64, int32, int64, uint8}";

}  // namespace

Status RegisterVariableOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<VariableV2Op>(
      OpDefBuilder("VariableV2")
          .Output("ref: Ref(dtype)")
          .Attr("shape: shape")
          .Attr("dtype: type")
          .Attr("container: string = \"\"")
          .Attr("shared_name: string = \"\"")
          .Attr("_save_slice_info: string = \"\"")
          .SetIsStateful()
          .Doc("A mutable tensor kept by the task across steps, found by container and "
               "shared_name (the node name when empty), so graphs naming it share it; "
               "uninitialized until assigned. Shape: the shape attr. _save_slice_info: for "
               "a shard of a partitioned variable, FULL_NAME;D0,D1,...;FIRST_ROW,ROWS, "
               "its rows of the whole, which checkpoints save beside its value."),
      VariableShape));
  TFD_RETURN_IF_ERROR(r.Add<AssignOp>(
      OpDefBuilder("Assign")
          .Input("ref: Ref(T)")
          .Input("value: T")
          .Output("output_ref: Ref(T)")
          .Attr("T: type")
          .Attr("validate_shape: bool = true")
          .Attr("use_locking: bool = true")
          .SetIsStateful()
          .Doc("Sets the variable to value; with validate_shape the value must fit the "
               "variable's declared (and, once set, current) shape. Shape: value's."),
      AssignShape));
  TFD_RETURN_IF_ERROR(r.Add<AssignUpdateOp<+1>>(
      OpDefBuilder("AssignAdd")
          .Input("ref: Ref(T)")
          .Input("value: T")
          .Output("output_ref: Ref(T)")
          .Attr(kNumeric)
          .Attr("use_locking: bool = false")
          .SetIsStateful()
          .Doc("ref += value, element-wise; the variable must be initialized. "
               "Shape: ref's, which value must equal."),
      AssignUpdateShape));
  TFD_RETURN_IF_ERROR(r.Add<AssignUpdateOp<-1>>(
      OpDefBuilder("AssignSub")
          .Input("ref: Ref(T)")
          .Input("value: T")
          .Output("output_ref: Ref(T)")
          .Attr(kNumeric)
          .Attr("use_locking: bool = false")
          .SetIsStateful()
          .Doc("ref -= value, element-wise; the variable must be initialized. "
               "Shape: ref's, which value must equal."),
      AssignUpdateShape));
  TFD_RETURN_IF_ERROR(r.Add<CountUpToOp>(
      OpDefBuilder("CountUpTo")
          .Input("ref: Ref(T)")
          .Output("output: T")
          .Attr("limit: int")
          .Attr("T: {int32, int64}")
          .SetIsStateful()
          .Doc("Increments the scalar variable ref and outputs its value before the "
               "increment, until it reaches limit: then OUT_OF_RANGE, the variable "
               "unchanged (the end of limit_epochs' input). Shape: []."),
      shape_fns::Scalar));
  TFD_RETURN_IF_ERROR(r.Add<IsVariableInitializedOp>(
      OpDefBuilder("IsVariableInitialized")
          .Input("ref: Ref(dtype)")
          .Output("is_initialized: bool")
          .Attr("dtype: type")
          .SetIsStateful()
          .Doc("Whether the variable has been assigned a value. Shape: []."),
      shape_fns::Scalar));
  TFD_RETURN_IF_ERROR(r.Add<ReportUninitializedVariablesOp>(
      OpDefBuilder("ReportUninitializedVariables")
          .Input("vars: Ref(T)")
          .Output("names: string")
          .Attr("T: list(type) >= 0")
          .SetIsStateful()
          .Doc("The names of the variables among vars that are not initialized, in input "
               "order. Shape: [?]."),
      VectorOutput));
  return OkStatus();
}

}  // namespace tfd::kernels::state
