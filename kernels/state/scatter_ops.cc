// ScatterUpdate, ScatterAdd, ScatterSub: TensorFlow 1's row updates of a
// variable in place, ref[indices[i], ...] (=, +=, -=) updates[i, ...]. They
// are what TF's sparse gradient descent (ScatterSub) and its LazyAdam (built
// in Python from ScatterUpdate / ScatterAdd / ScatterSub) run on the ps.
//
// Rows are applied one after another in index order, so a duplicate index
// accumulates for add and sub and the last one wins for update (TensorFlow
// leaves that order unspecified; this is the order its CPU kernel uses).
// Every index and the shape of updates are checked before the first write.
#include <string>
#include <vector>

#include "kernels/state/sparse_rows.h"
#include "kernels/state/state_ops_internal.h"

namespace tfd::kernels::state {
namespace {

enum class Scatter { kUpdate, kAdd, kSub };

const char* OpName(Scatter kind) {
  switch (kind) {
    case Scatter::kUpdate: return "ScatterUpdate";
    case Scatter::kAdd: return "ScatterAdd";
    case Scatter::kSub: return "ScatterSub";
  }
  return "";
}

// value[rows[i], :] (op)= updates[i, :], or the scalar updates for every row.
template <Scatter kKind, typename T>
void ApplyRows(const std::vector<int64_t>& rows, const Tensor& updates, Tensor& value) {
  const int64_t inner = value.dim(0) == 0 ? 0 : value.num_elements() / value.dim(0);
  const bool scalar = updates.rank() == 0;
  const T* src = updates.data<T>();
  T* dst = value.data<T>();
  for (size_t i = 0; i < rows.size(); ++i) {
    T* row = dst + rows[i] * inner;
    const T* from = scalar ? src : src + static_cast<int64_t>(i) * inner;
    for (int64_t k = 0; k < inner; ++k) {
      const T& u = scalar ? from[0] : from[k];
      if constexpr (kKind == Scatter::kUpdate) {
        row[k] = u;
      } else if constexpr (kKind == Scatter::kAdd) {
        row[k] += u;
      } else {
        row[k] -= u;
      }
    }
  }
}

// The checks and the update, on the variable's writable value.
template <Scatter kKind>
Status ScatterInto(const Variable& var, const Tensor& indices, const Tensor& updates,
                   Tensor& value) {
  TFD_RETURN_IF_ERROR(CheckHasRows(value, var, OpName(kKind)));
  if (updates.dtype() != value.dtype()) {
    return errors::InvalidArgument("updates is ", updates.Describe(), " but variable '",
                                   var.FullName(), "' is ", DTypeName(value.dtype()));
  }
  if (updates.rank() != 0) {
    TFD_RETURN_IF_ERROR(CheckRowData(updates, "updates", indices, value, var));
  }
  std::vector<int64_t> rows;
  TFD_RETURN_IF_ERROR(RowIndices(indices, value.dim(0), var, &rows));
  if constexpr (kKind == Scatter::kUpdate) {
    TFD_SWITCH_ALL(value.dtype(), T, (ApplyRows<kKind, T>(rows, updates, value)),
                   return errors::InvalidArgument(DTypeName(value.dtype()), " is not a type"));
  } else {
    TFD_SWITCH_NUMERIC(value.dtype(), T, (ApplyRows<kKind, T>(rows, updates, value)),
                       return errors::InvalidArgument(DTypeName(value.dtype()), " is not numeric"));
  }
  return OkStatus();
}

template <Scatter kKind>
class ScatterOp : public OpKernel {
 public:
  explicit ScatterOp(OpKernelConstruction& c) : OpKernel(c), dtype_(c.input_type(0)) {
    c.SetStatus(c.GetAttr("use_locking", &use_locking_));
  }

  void Compute(OpKernelContext& ctx) override {
    auto var = VariableInput(ctx, 0, dtype_);
    TFD_OP_REQUIRES_OK(ctx, var.status());
    Tensor updated;
    Variable* vars[] = {var->get()};
    // Inputs and result behind one pointer, so std::function does not allocate.
    struct Args {
      const OpKernelContext& ctx;
      const Variable& var;
      Tensor& updated;
    } args{ctx, **var, updated};
    Status s = UpdateVariables(vars, use_locking_, [&args](std::span<Tensor> v) -> Status {
      TFD_RETURN_IF_ERROR(
          ScatterInto<kKind>(args.var, args.ctx.input(1), args.ctx.input(2), v[0]));
      args.updated = v[0];
      return OkStatus();
    });
    TFD_OP_REQUIRES_OK(ctx, s);
    ctx.set_output_ref(0, *var);
    // A value consumer sees this update's result (as AssignAdd's do).
    ctx.set_output(0, updated);
  }

 private:
  const DType dtype_;
  bool use_locking_ = false;
};

Status ScatterShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(CheckRowDataShape(c, 0, 1, 2, "updates", /*allow_scalar=*/true));
  c.set_output(0, c.input(0));
  return OkStatus();
}

OpDefBuilder ScatterDef(Scatter kind, const char* type_attr, const char* locking, const char* doc) {
  return OpDefBuilder(OpName(kind))
      .Input("ref: Ref(T)")
      .Input("indices: Tindices")
      .Input("updates: T")
      .Output("output_ref: Ref(T)")
      .Attr(type_attr)
      .Attr("Tindices: {int32, int64}")
      .Attr(locking)
      .SetIsStateful()
      .Doc(doc);
}

}  // namespace

Status RegisterScatterOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<ScatterOp<Scatter::kUpdate>>(
      ScatterDef(Scatter::kUpdate, "T: type", "use_locking: bool = true",
                 "ref[indices[i], ...] = updates[i, ...] for each index in order (a duplicate "
                 "index: the last one wins); updates is indices' shape + ref's shape[1:], or a "
                 "scalar written to every indexed row. Every index must lie in [0, rows of "
                 "ref). Shape: ref's."),
      ScatterShape));
  TFD_RETURN_IF_ERROR(r.Add<ScatterOp<Scatter::kAdd>>(
      ScatterDef(Scatter::kAdd, "T: {float32, float64, int32, int64, uint8}",
                 "use_locking: bool = false",
                 "ref[indices[i], ...] += updates[i, ...] for each index in order (duplicate "
                 "indices accumulate); updates is indices' shape + ref's shape[1:], or a "
                 "scalar. Every index must lie in [0, rows of ref). Shape: ref's."),
      ScatterShape));
  return r.Add<ScatterOp<Scatter::kSub>>(
      ScatterDef(Scatter::kSub, "T: {float32, float64, int32, int64, uint8}",
                 "use_locking: bool = false",
                 "ref[indices[i], ...] -= updates[i, ...] for each index in order (duplicate "
                 "indices accumulate); updates is indices' shape + ref's shape[1:], or a "
                 "scalar. Every index must lie in [0, rows of ref). Shape: ref's."),
      ScatterShape);
}

}  // namespace tfd::kernels::state
