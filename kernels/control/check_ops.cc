// Ops that fail a step when a value is not what the graph's author expects:
// Assert (tf.Assert, under every tf.assert_*) and CheckNumerics
// (tf.check_numerics, tf.verify_tensor_all_finite). Both fail with
// INVALID_ARGUMENT, whose message says what was found.
#include <cmath>
#include <string>
#include <vector>

#include "common/gradients.h"
#include "common/op_kernel.h"
#include "kernels/control/control_ops.h"
#include "kernels/math/grad_util.h"

namespace tfd::kernels {
namespace {

// A data tensor as TF1's Assert shows it: its first `summarize` values in
// brackets, strings unquoted ("[x > 0 failed:]", "[-1 2 3...]").
std::string Shown(const Tensor& t, int64_t summarize) {
  if (t.dtype() != DType::kString) {
    std::string s = t.DebugString(summarize);
    return t.rank() == 0 ? "[" + s + "]" : s;
  }
  std::string s = "[";
  const int64_t n = t.num_elements();
  for (int64_t i = 0; i < n && (summarize < 0 || i < summarize); ++i) {
    s += (i > 0 ? " " : "") + t.data<std::string>()[i];
  }
  return s + (summarize >= 0 && n > summarize ? "...]" : "]");
}

class AssertOp : public OpKernel {
 public:
  explicit AssertOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("summarize", &summarize_));
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& condition = ctx.input(0);
    TFD_OP_REQUIRES(ctx, condition.dtype() == DType::kBool && condition.rank() == 0,
                    errors::InvalidArgument("the condition of Assert '", node().name,
                                            "' must be a bool scalar, not ", condition.Describe()));
    if (condition.scalar<bool>()) return;
    std::string message = "assertion failed:";
    for (int i = 1; i < ctx.num_inputs(); ++i) message += " " + Shown(ctx.input(i), summarize_);
    ctx.SetStatus(errors::InvalidArgument(message));
  }

 private:
  int64_t summarize_ = 3;
};

// What a tensor holds that is not finite: "NaN", "Inf", "Inf and NaN" or "".
template <typename T>
std::string NotFinite(const Tensor& t) {
  bool inf = false, nan = false;
  const T* v = t.data<T>();
  for (int64_t i = 0, n = t.num_elements(); i < n && !(inf && nan); ++i) {
    inf = inf || std::isinf(v[i]);
    nan = nan || std::isnan(v[i]);
  }
  return inf && nan ? "Inf and NaN" : inf ? "Inf" : nan ? "NaN" : "";
}

class CheckNumericsOp : public OpKernel {
 public:
  explicit CheckNumericsOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("message", &message_));
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    std::string found;
    TFD_SWITCH_FLOAT(
        x.dtype(), T, found = NotFinite<T>(x),
        ctx.SetStatus(errors::InvalidArgument("CheckNumerics cannot take ", x.Describe())));
    if (!ctx.status().ok()) return;
    TFD_OP_REQUIRES(ctx, found.empty(),
                    errors::InvalidArgument(message_, " : Tensor had ", found, " values"));
    ctx.set_output(0, x);
  }
  bool is_cheap() const override { return true; }

 private:
  std::string message_;
};

// The gradient is checked too, as TensorFlow's is: a NaN born in the
// backward pass is caught where it crosses this node.
Status CheckNumericsGrad(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  TFD_ASSIGN_OR_RETURN(std::string message, in.GetAttr<std::string>("message"));
  (*dx)[0] = grad::Op(s, "CheckNumerics", {in.dy[0]},
                      {{"message",
                        "Not a number (NaN) or infinity (Inf) values detected in "
                        "gradient. " +
                            message}});
  return OkStatus();
}

}  // namespace

Status RegisterCheckOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<AssertOp>(
      OpDefBuilder("Assert")
          .Input("condition: bool")
          .Input("data: T")
          .Attr("T: list(type) >= 0")
          .Attr("summarize: int = 3")
          .SetIsStateful()
          .Doc("Fails the step with INVALID_ARGUMENT when condition (a bool scalar) is false: "
               "\"assertion failed:\" and each data tensor's first summarize values in "
               "brackets. Run it before what it guards with a control edge. Shape: no "
               "outputs."),
      shape_fns::NoOutputs));
  TFD_RETURN_IF_ERROR(r.Add<CheckNumericsOp>(
      OpDefBuilder("CheckNumerics")
          .Input("tensor: T")
          .Output("output: T")
          .Attr("T: {float32, float64}")
          .Attr("message: string")
          .Doc("Passes tensor through, or fails the step with INVALID_ARGUMENT \"message : "
               "Tensor had NaN values\" (Inf, or Inf and NaN) when any element is not finite; "
               "its gradient is checked the same way. Shape: tensor's."),
      shape_fns::UnchangedShape));
  return grad::Register(r, "CheckNumerics", CheckNumericsGrad);
}

}  // namespace tfd::kernels
