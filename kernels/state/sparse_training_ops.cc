// Optimizer updates for embedding tables: SparseApplyAdagrad, SparseApplyFtrl
// (and V2), SparseApplyMomentum, SparseApplyRMSProp, SparseApplyLazyAdam,
// which update only the rows a gradient names, and the dense ApplyAdagrad,
// ApplyFtrl (and V2) and ApplyRMSProp beside them. The arithmetic is in
// row_rules.h; this file reads the inputs, checks them, and runs a rule once
// (dense) or once per index in index order (sparse: a duplicate index
// updates its row twice, as in TF).
//
// A sparse update is refused with INVALID_ARGUMENT, before anything is
// written, when an index is outside the variable's rows, when indices is not
// a vector, when grad has not one row per index, or when grad's rows do not
// have the variable's row shape.
#include <array>
#include <string>
#include <vector>

#include "kernels/state/row_rules.h"
#include "kernels/state/sparse_rows.h"
#include "kernels/state/state_ops_internal.h"

namespace tfd::kernels::state {
namespace {

// Where a rule's inputs sit: variables first (var, then its slots), then
// grad, indices (sparse only) and the scalars, in the order TF declares them.
template <typename Rule, bool kSparse>
struct Layout {
  static constexpr int kNumScalars = static_cast<int>(Rule::kScalars.size());
  // Input index of scalar j, given where grad (and indices) sit.
  static constexpr int Scalar(int grad, int j) {
    int pos = Rule::kVars;
    for (int seen = -1;; ++pos) {
      if (pos == grad || (kSparse && pos == grad + 1)) continue;
      if (++seen == j) return pos;
    }
  }
};

Status ShapeMismatch(const Variable& var, const Tensor& value, const char* what,
                     const Tensor& other) {
  return errors::InvalidArgument(what, " is ", other.Describe(), " but variable '",
                                 var.FullName(), "' holds ", value.Describe());
}

// The sparse checks: indices a vector, one grad row per index, rows shaped
// like the variable's, every index in range (into *rows).
Status CheckSparse(const Variable& var, const Tensor& value, const Tensor& grad,
                   const Tensor& indices, std::string_view op, std::vector<int64_t>* rows) {
  TFD_RETURN_IF_ERROR(CheckHasRows(value, var, op));
  if (indices.rank() != 1) {
    return errors::InvalidArgument("indices must be a vector but is ", indices.Describe());
  }
  if (grad.rank() == 0 || grad.dim(0) != indices.dim(0)) {
    return errors::InvalidArgument("grad must have one row per index: indices is ",
                                   indices.Describe(), " but grad is ", grad.Describe());
  }
  TFD_RETURN_IF_ERROR(CheckRowData(grad, "grad", indices, value, var));
  return RowIndices(indices, value.dim(0), var, rows);
}

template <typename Rule, bool kSparse, int kGrad>
class RowApplyOp : public OpKernel {
  using L = Layout<Rule, kSparse>;
  static constexpr int kVars = Rule::kVars;

 public:
  explicit RowApplyOp(OpKernelConstruction& c) : OpKernel(c), dtype_(c.input_type(0)) {
    c.SetStatus(c.GetAttr("use_locking", &use_locking_));
    if constexpr (Rule::kFlag != nullptr) c.SetStatus(c.GetAttr(Rule::kFlag, &flag_));
  }

  void Compute(OpKernelContext& ctx) override {
    std::array<std::shared_ptr<Variable>, kVars> vars;
    std::array<Variable*, kVars> raw;
    for (int i = 0; i < kVars; ++i) {
      auto v = VariableInput(ctx, i, dtype_);
      TFD_OP_REQUIRES_OK(ctx, v.status());
      vars[i] = *std::move(v);
      raw[i] = vars[i].get();
    }
    // The op, the context and the variable behind one pointer, so that
    // std::function does not allocate.
    struct Args {
      const RowApplyOp& op;
      const OpKernelContext& ctx;
      const Variable& var;
    } args{*this, ctx, *vars[0]};
    Status s = UpdateVariables(raw, use_locking_, [&args](std::span<Tensor> v) -> Status {
      TFD_SWITCH_FLOAT(args.op.dtype_, T, return args.op.template Update<T>(args.ctx, args.var, v),
                       break);
      return errors::InvalidArgument(DTypeName(args.op.dtype_), " is not a float type");
    });
    TFD_OP_REQUIRES_OK(ctx, s);
    ctx.set_output_ref(0, vars[0]);
  }

 private:
  template <typename T>
  Status Update(const OpKernelContext& ctx, const Variable& var, std::span<Tensor> v) const {
    for (int i = 1; i < kVars; ++i) {
      if (!(v[i].shape() == v[0].shape())) {
        return ShapeMismatch(var, v[0], Rule::kVarNames[i], v[i]);
      }
    }
    RuleArgs<T, L::kNumScalars> a;
    a.flag = flag_;
    for (int j = 0; j < L::kNumScalars; ++j) {
      const Tensor& t = ctx.input(L::Scalar(kGrad, j));
      if (t.rank() != 0) {
        return errors::InvalidArgument(Rule::kScalars[j], " must be a scalar but is ",
                                       t.Describe());
      }
      a.s[j] = t.scalar<T>();
    }
    const Tensor& grad = ctx.input(kGrad);
    std::array<T*, kVars> rows;
    if constexpr (!kSparse) {
      if (!(grad.shape() == v[0].shape())) return ShapeMismatch(var, v[0], "grad", grad);
      for (int i = 0; i < kVars; ++i) rows[i] = v[i].data<T>();
      Rule::Apply(a, rows.data(), grad.data<T>(), grad.num_elements());
    } else {
      std::vector<int64_t> index;
      TFD_RETURN_IF_ERROR(CheckSparse(var, v[0], grad, ctx.input(kGrad + 1), ctx.node().op, &index));
      const int64_t width = v[0].dim(0) == 0 ? 0 : v[0].num_elements() / v[0].dim(0);
      for (size_t i = 0; i < index.size(); ++i) {
        for (int k = 0; k < kVars; ++k) rows[k] = v[k].data<T>() + index[i] * width;
        Rule::Apply(a, rows.data(), grad.data<T>() + static_cast<int64_t>(i) * width, width);
      }
    }
    return OkStatus();
  }

  const DType dtype_;
  bool use_locking_ = false;
  bool flag_ = false;
};

template <typename Rule, bool kSparse, int kGrad>
Status RowApplyShape(InferenceContext& c) {
  using L = Layout<Rule, kSparse>;
  for (int j = 0; j < L::kNumScalars; ++j) {
    TFD_RETURN_IF_ERROR(ScalarInput(c, L::Scalar(kGrad, j), Rule::kScalars[j]));
  }
  std::vector<int> same;
  for (int i = 0; i < Rule::kVars; ++i) same.push_back(i);
  if constexpr (!kSparse) same.push_back(kGrad);
  PartialShape merged = PartialShape::Unknown();
  for (int i : same) {
    auto m = merged.Merge(c.input(i));
    if (!m.ok()) {
      return errors::InvalidArgument("input ", i, " has shape ", c.input(i).ToString(),
                                     " but the variable's shape is ", merged.ToString());
    }
    merged = *std::move(m);
  }
  if constexpr (kSparse) {
    TFD_RETURN_IF_ERROR(c.WithRank(kGrad + 1, 1));
    TFD_RETURN_IF_ERROR(CheckRowDataShape(c, 0, kGrad + 1, kGrad, "grad", /*allow_scalar=*/false));
  }
  c.set_output(0, std::move(merged));
  return OkStatus();
}

// The op's definition: inputs named as TF names them, in TF's order.
template <typename Rule, bool kSparse, int kGrad>
OpDefBuilder RowApplyDef(const std::string& name, const char* flag_attr, const std::string& doc) {
  using L = Layout<Rule, kSparse>;
  OpDefBuilder b(name);
  const int num_inputs = Rule::kVars + 1 + (kSparse ? 1 : 0) + L::kNumScalars;
  std::vector<std::string> inputs(num_inputs);
  int i = 0;
  for (const char* v : Rule::kVarNames) inputs[i++] = std::string(v) + ": Ref(T)";
  inputs[kGrad] = "grad: T";
  if (kSparse) inputs[kGrad + 1] = "indices: Tindices";
  for (int j = 0; j < L::kNumScalars; ++j) {
    inputs[L::Scalar(kGrad, j)] = std::string(Rule::kScalars[j]) + ": T";
  }
  for (const std::string& in : inputs) b.Input(in);
  b.Output("out: Ref(T)").Attr("T: {float32, float64}");
  if (kSparse) b.Attr("Tindices: {int32, int64}");
  b.Attr("use_locking: bool = false");
  if (flag_attr != nullptr) b.Attr(flag_attr);
  return std::move(b.SetIsStateful().Doc(doc));
}

template <typename Rule, bool kSparse, int kGrad>
Status AddRowApply(OpRegistry& r, const std::string& name, const char* flag_attr,
                   const std::string& doc) {
  return r.Add<RowApplyOp<Rule, kSparse, kGrad>>(
      RowApplyDef<Rule, kSparse, kGrad>(name, flag_attr, doc),
      RowApplyShape<Rule, kSparse, kGrad>);
}

const char* kSparseDoc =
    " Sparse: only the rows indices names are updated, one index after another (a duplicate "
    "index updates its row again); indices is a vector of rows in [0, rows of var), grad has "
    "one row per index shaped like var's rows. Shape: var's.";

}  // namespace

Status RegisterSparseTrainingOps(OpRegistry& r) {
  const std::string adagrad = "accum += grad^2 (unless update_slots is false); var -= lr * grad / sqrt(accum).";
  TFD_RETURN_IF_ERROR((AddRowApply<AdagradRule, false, 3>(
      r, "ApplyAdagrad", "update_slots: bool = true",
      adagrad + " Shape: var's; accum and grad must equal it, lr is a scalar.")));
  TFD_RETURN_IF_ERROR((AddRowApply<AdagradRule, true, 3>(
      r, "SparseApplyAdagrad", "update_slots: bool = true", adagrad + kSparseDoc)));

  const std::string ftrl =
      "FTRL-Proximal as TF computes it: new_accum = accum + grad^2; linear += grad - "
      "(new_accum^-lr_power - accum^-lr_power) / lr * var; var = |linear| > l1 ? (sign(linear) "
      "* l1 - linear) / (new_accum^-lr_power / lr + 2 * l2) : 0; accum = new_accum "
      "(multiply_linear_by_lr keeps lr * linear instead).";
  const std::string ftrl_v2 = ftrl + " V2: grad + 2 * l2_shrinkage * var replaces grad in the "
                                     "update of linear (not of accum).";
  const char* kFtrlFlag = "multiply_linear_by_lr: bool = false";
  const std::string dense_ftrl = " Shape: var's; accum, linear and grad must equal it, the rest are scalars.";
  TFD_RETURN_IF_ERROR((AddRowApply<FtrlRule<false>, false, 3>(
      r, "ApplyFtrl", kFtrlFlag, ftrl + dense_ftrl)));
  TFD_RETURN_IF_ERROR((AddRowApply<FtrlRule<true>, false, 3>(
      r, "ApplyFtrlV2", kFtrlFlag, ftrl_v2 + dense_ftrl)));
  TFD_RETURN_IF_ERROR((AddRowApply<FtrlRule<false>, true, 3>(
      r, "SparseApplyFtrl", kFtrlFlag, ftrl + kSparseDoc)));
  TFD_RETURN_IF_ERROR((AddRowApply<FtrlRule<true>, true, 3>(
      r, "SparseApplyFtrlV2", kFtrlFlag, ftrl_v2 + kSparseDoc)));

  TFD_RETURN_IF_ERROR((AddRowApply<MomentumRule, true, 3>(
      r, "SparseApplyMomentum", "use_nesterov: bool = false",
      std::string("accum = accum * momentum + grad; var -= lr * accum (Nesterov: var -= grad * "
                  "lr + accum * momentum * lr).") + kSparseDoc)));

  const std::string rms =
      "ms += (grad^2 - ms) * (1 - rho); mom = mom * momentum + lr * grad / sqrt(ms + epsilon); "
      "var -= mom.";
  TFD_RETURN_IF_ERROR((AddRowApply<RmsPropRule, false, 7>(
      r, "ApplyRMSProp", nullptr,
      rms + " Shape: var's; ms, mom and grad must equal it, the rest are scalars.")));
  TFD_RETURN_IF_ERROR((AddRowApply<RmsPropRule, true, 7>(r, "SparseApplyRMSProp", nullptr,
                                                         rms + kSparseDoc)));
  return AddRowApply<LazyAdamRule, true, 9>(
      r, "SparseApplyLazyAdam", nullptr,
      std::string("Lazy Adam (TF contrib's LazyAdamOptimizer; not a TF core op): on the rows "
                  "indices names only, lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); "
                  "m += (grad - m) * (1 - beta1); v += (grad^2 - v) * (1 - beta2); var -= lr_t "
                  "* m / (sqrt(v) + epsilon). Other rows keep var, m and v, unlike ApplyAdam. "
                  "A duplicate index moves its row's moments twice, which is not Adam on the "
                  "summed gradient: the optimizer sums duplicates first.") +
          kSparseDoc);
}

}  // namespace tfd::kernels::state
