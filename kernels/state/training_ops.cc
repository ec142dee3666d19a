// Optimizer updates applied to variables in place: ApplyGradientDescent,
// ApplyMomentum, ApplyAdam (TensorFlow's formulas, use_locking honoured
// through UpdateVariables). A large variable's update is cut into ranges of
// elements run at once on the task's intra-op threads: it is bound by memory
// bandwidth, which one core does not fill (a 5.8 M-parameter model's SGD
// update took 2-4 ms of each step on one).
#include <array>
#include <cmath>
#include <functional>
#include <string>

#include "common/tensor_eigen.h"
#include "kernels/math/ieee_functors.h"
#include "kernels/nn/parallel_shards.h"
#include "kernels/state/state_ops_internal.h"

namespace tfd::kernels::state {
namespace {

// Hyper-parameter input `i` as a scalar of T.
template <typename T>
Status ScalarArg(const OpKernelContext& ctx, int i, const char* what, T* out) {
  const Tensor& t = ctx.input(i);
  if (t.rank() != 0) {
    return errors::InvalidArgument(what, " must be a scalar but is ", t.Describe());
  }
  *out = t.scalar<T>();
  return OkStatus();
}

Status SameShape(const Variable& var, const Tensor& value, const Tensor& other, const char* what) {
  if (value.shape() == other.shape()) return OkStatus();
  return errors::InvalidArgument(what, " is ", other.Describe(), " but variable '", var.FullName(),
                                 "' holds ", value.Describe());
}

// Elements [first, last) of t as a 1-D array.
template <typename T>
FlatMap<T> Part(const Tensor& t, int64_t first, int64_t last) {
  return FlatMap<T>(t.data<T>() + first, last - first);
}

// fn(first, last) over the elements of `var`, split over `pool` when its
// `ops_per_element` make the whole worth it (kernels/nn/parallel_shards.h).
void OverElements(const IntraOpPool* pool, const Tensor& var, double ops_per_element,
                  const std::function<void(int64_t, int64_t)>& fn) {
  const int64_t n = var.num_elements();
  nn::ParallelFor(pool, n, static_cast<double>(n) * ops_per_element, fn);
}

// var -= alpha * delta
template <typename T>
Status GradientDescent(const OpKernelContext& ctx, const IntraOpPool* pool, const Variable& var,
                       std::span<Tensor> v) {
  const Tensor& delta = ctx.input(2);
  TFD_RETURN_IF_ERROR(SameShape(var, v[0], delta, "delta"));
  T alpha;
  TFD_RETURN_IF_ERROR(ScalarArg(ctx, 1, "alpha", &alpha));
  OverElements(pool, v[0], 3, [&](int64_t a, int64_t b) {
    Part<T>(v[0], a, b) -= alpha * Part<T>(delta, a, b);
  });
  return OkStatus();
}

// accum = accum * momentum + grad
// var -= lr * accum                                  (plain)
// var -= grad * lr + accum * momentum * lr           (Nesterov)
template <typename T>
Status Momentum(const OpKernelContext& ctx, const IntraOpPool* pool, const Variable& variable,
                bool nesterov, std::span<Tensor> v) {
  const Tensor& grad = ctx.input(3);
  TFD_RETURN_IF_ERROR(SameShape(variable, v[0], v[1], "accum"));
  TFD_RETURN_IF_ERROR(SameShape(variable, v[0], grad, "grad"));
  T lr, momentum;
  TFD_RETURN_IF_ERROR(ScalarArg(ctx, 2, "lr", &lr));
  TFD_RETURN_IF_ERROR(ScalarArg(ctx, 4, "momentum", &momentum));
  OverElements(pool, v[0], 6, [&](int64_t a, int64_t b) {
    auto var = Part<T>(v[0], a, b);
    auto accum = Part<T>(v[1], a, b);
    auto g = Part<T>(grad, a, b);
    accum = accum * momentum + g;
    if (nesterov) {
      var -= g * lr + accum * momentum * lr;
    } else {
      var -= lr * accum;
    }
  });
  return OkStatus();
}

// lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
// m += (grad - m) * (1 - beta1)
// v += (grad^2 - v) * (1 - beta2)
// var -= lr_t * m / (sqrt(v) + epsilon)                                 (plain)
// var -= lr_t * (grad * (1 - beta1) + beta1 * m) / (sqrt(v) + epsilon)  (Nesterov)
template <typename T>
Status Adam(const OpKernelContext& ctx, const IntraOpPool* pool, const Variable& variable,
            bool nesterov, std::span<Tensor> v) {
  const Tensor& grad = ctx.input(9);
  TFD_RETURN_IF_ERROR(SameShape(variable, v[0], v[1], "m"));
  TFD_RETURN_IF_ERROR(SameShape(variable, v[0], v[2], "v"));
  TFD_RETURN_IF_ERROR(SameShape(variable, v[0], grad, "grad"));
  T beta1_power, beta2_power, lr, beta1, beta2, epsilon;
  TFD_RETURN_IF_ERROR(ScalarArg(ctx, 3, "beta1_power", &beta1_power));
  TFD_RETURN_IF_ERROR(ScalarArg(ctx, 4, "beta2_power", &beta2_power));
  TFD_RETURN_IF_ERROR(ScalarArg(ctx, 5, "lr", &lr));
  TFD_RETURN_IF_ERROR(ScalarArg(ctx, 6, "beta1", &beta1));
  TFD_RETURN_IF_ERROR(ScalarArg(ctx, 7, "beta2", &beta2));
  TFD_RETURN_IF_ERROR(ScalarArg(ctx, 8, "epsilon", &epsilon));
  const T lr_t = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
  OverElements(pool, v[0], 16, [&](int64_t a, int64_t b) {
    auto var = Part<T>(v[0], a, b);
    auto m = Part<T>(v[1], a, b);
    auto vv = Part<T>(v[2], a, b);
    auto g = Part<T>(grad, a, b);
    m += (g - m) * (T(1) - beta1);
    vv += (g.square() - vv) * (T(1) - beta2);
    // The correctly rounded sqrt, vectorised (Eigen's .sqrt() is not, with
    // AVX-512 and no fast math).
    const auto sqrt_v = vv.unaryExpr(ieee::SqrtOp<T>());
    if (nesterov) {
      var -= lr_t * (g * (T(1) - beta1) + beta1 * m) / (sqrt_v + epsilon);
    } else {
      var -= lr_t * m / (sqrt_v + epsilon);
    }
  });
  return OkStatus();
}

enum class Rule { kGradientDescent, kMomentum, kAdam };

// One kernel class for the three rules: they differ only in which inputs are
// variables and in the arithmetic.
template <Rule kRule>
class ApplyOp : public OpKernel {
 public:
  explicit ApplyOp(OpKernelConstruction& c) : OpKernel(c), dtype_(c.input_type(0)) {
    c.SetStatus(c.GetAttr("use_locking", &use_locking_));
    if constexpr (kRule != Rule::kGradientDescent) {
      c.SetStatus(c.GetAttr("use_nesterov", &use_nesterov_));
    }
  }
  // A small update costs less than its hand-off to the pool. The bound
  // counts the gradient's elements and the hyper-parameters' scalars.
  int64_t cheap_up_to_elements() const override {
    if constexpr (kRule == Rule::kGradientDescent) return kCheapGradientDescentElements;
    if constexpr (kRule == Rule::kMomentum) return kCheapMomentumElements;
    return kCheapAdamElements;
  }

  void Compute(OpKernelContext& ctx) override {
    constexpr int kNumVars = kRule == Rule::kGradientDescent ? 1 : kRule == Rule::kMomentum ? 2 : 3;
    static_assert(kNumVars <= kInlineVariables);
    // Arrays, not vectors: an optimizer step runs this once per variable.
    std::array<std::shared_ptr<Variable>, kNumVars> vars;
    std::array<Variable*, kNumVars> raw;
    for (int i = 0; i < kNumVars; ++i) {
      auto v = VariableInput(ctx, i, dtype_);
      TFD_OP_REQUIRES_OK(ctx, v.status());
      vars[i] = *std::move(v);
      raw[i] = vars[i].get();
    }
    // The context and the variable behind one pointer: std::function holds
    // a capture of two pointers without allocating.
    struct Args {
      const OpKernelContext& ctx;
      const Variable& var;
      const IntraOpPool* pool;
    } args{ctx, *vars[0], pool_.Get(ctx)};
    Status s = UpdateVariables(raw, use_locking_, [this, &args](std::span<Tensor> v) -> Status {
      TFD_SWITCH_FLOAT(
          dtype_, T,
          {
            if constexpr (kRule == Rule::kGradientDescent) {
              return GradientDescent<T>(args.ctx, args.pool, args.var, v);
            }
            if constexpr (kRule == Rule::kMomentum) {
              return Momentum<T>(args.ctx, args.pool, args.var, use_nesterov_, v);
            }
            if constexpr (kRule == Rule::kAdam) {
              return Adam<T>(args.ctx, args.pool, args.var, use_nesterov_, v);
            }
          },
          break);
      return errors::InvalidArgument(DTypeName(dtype_), " is not a float type");
    });
    TFD_OP_REQUIRES_OK(ctx, s);
    ctx.set_output_ref(0, vars[0]);
  }

 private:
  const DType dtype_;
  bool use_locking_ = false;
  bool use_nesterov_ = false;
  nn::LazyIntraOpPool pool_;
};

Status GradientDescentShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(ScalarInput(c, 1, "alpha"));
  TFD_ASSIGN_OR_RETURN(PartialShape s, MergeInputs(c, {0, 2}));
  c.set_output(0, std::move(s));
  return OkStatus();
}

Status MomentumShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(ScalarInput(c, 2, "lr"));
  TFD_RETURN_IF_ERROR(ScalarInput(c, 4, "momentum"));
  TFD_ASSIGN_OR_RETURN(PartialShape s, MergeInputs(c, {0, 1, 3}));
  c.set_output(0, std::move(s));
  return OkStatus();
}

Status AdamShape(InferenceContext& c) {
  const char* scalars[] = {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"};
  for (int i = 0; i < 6; ++i) TFD_RETURN_IF_ERROR(ScalarInput(c, 3 + i, scalars[i]));
  TFD_ASSIGN_OR_RETURN(PartialShape s, MergeInputs(c, {0, 1, 2, 9}));
  c.set_output(0, std::move(s));
  return OkStatus();
}

const char* kFloat = "T: {float32, float64}";
const char* kUseLocking = "use_locking: bool = false";

}  // namespace

Status RegisterTrainingOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<ApplyOp<Rule::kGradientDescent>>(
      OpDefBuilder("ApplyGradientDescent")
          .Input("var: Ref(T)")
          .Input("alpha: T")
          .Input("delta: T")
          .Output("out: Ref(T)")
          .Attr(kFloat)
          .Attr(kUseLocking)
          .SetIsStateful()
          .Doc("var -= alpha * delta, in the variable. Shape: var's; delta must equal it, "
               "alpha is a scalar."),
      GradientDescentShape));
  TFD_RETURN_IF_ERROR(r.Add<ApplyOp<Rule::kMomentum>>(
      OpDefBuilder("ApplyMomentum")
          .Input("var: Ref(T)")
          .Input("accum: Ref(T)")
          .Input("lr: T")
          .Input("grad: T")
          .Input("momentum: T")
          .Output("out: Ref(T)")
          .Attr(kFloat)
          .Attr(kUseLocking)
          .Attr("use_nesterov: bool = false")
          .SetIsStateful()
          .Doc("accum = accum * momentum + grad; var -= lr * accum (Nesterov: var -= "
               "grad * lr + accum * momentum * lr). Shape: var's; accum and grad must "
               "equal it, lr and momentum are scalars."),
      MomentumShape));
  TFD_RETURN_IF_ERROR(r.Add<ApplyOp<Rule::kAdam>>(
      OpDefBuilder("ApplyAdam")
          .Input("var: Ref(T)")
          .Input("m: Ref(T)")
          .Input("v: Ref(T)")
          .Input("beta1_power: T")
          .Input("beta2_power: T")
          .Input("lr: T")
          .Input("beta1: T")
          .Input("beta2: T")
          .Input("epsilon: T")
          .Input("grad: T")
          .Output("out: Ref(T)")
          .Attr(kFloat)
          .Attr(kUseLocking)
          .Attr("use_nesterov: bool = false")
          .SetIsStateful()
          .Doc("Adam: lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); m += (grad - m) "
               "* (1 - beta1); v += (grad^2 - v) * (1 - beta2); var -= lr_t * m / (sqrt(v) + "
               "epsilon). Shape: var's; m, v and grad must equal it, the rest are scalars."),
      AdamShape));
  return OkStatus();
}

}  // namespace tfd::kernels::state
