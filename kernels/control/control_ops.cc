// The control family: NoOp and ControlTrigger (nodes that only order others
// through control edges) and Print (passes its input through, logging values).
#include "kernels/control/control_ops.h"

#include <spdlog/logger.h>

#include <atomic>
#include <cstdio>
#include <string>

#include "common/op_kernel.h"

namespace tfd::kernels {
namespace {

class NoOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext&) override {}
  bool is_cheap() const override { return true; }
};

// Values as TensorFlow's Print shows them inside its brackets: "1 2 3" for a
// vector, "[1 2] [3 4]" for a matrix, "..." after `summarize` values.
std::string Summarize(const Tensor& t, int64_t summarize) {
  std::string s = t.DebugString(summarize);
  if (t.rank() >= 1 && s.size() >= 2 && s.front() == '[' && s.back() == ']') {
    s = s.substr(1, s.size() - 2);
  }
  return s;
}

class PrintOp : public OpKernel {
 public:
  explicit PrintOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("message", &message_));
    c.SetStatus(c.GetAttr("first_n", &first_n_));
    c.SetStatus(c.GetAttr("summarize", &summarize_));
  }

  void Compute(OpKernelContext& ctx) override {
    ctx.set_output(0, ctx.input(0));
    // first_n counts across steps, like TensorFlow's: the kernel outlives them.
    if (first_n_ >= 0 && printed_.fetch_add(1) >= first_n_) return;
    std::string line = message_;
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      line += '[';
      line += Summarize(ctx.input(i), summarize_);
      line += ']';
    }
    if (ctx.env().logger) {
      ctx.env().logger->info("{}", line);
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }

 private:
  std::string message_;
  int64_t first_n_ = -1;
  int64_t summarize_ = 3;
  std::atomic<int64_t> printed_{0};
};

}  // namespace

Status RegisterControlOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<NoOpKernel>(
      OpDefBuilder("NoOp").Doc("Does nothing; groups control dependencies. Shape: no outputs."),
      shape_fns::NoOutputs));
  TFD_RETURN_IF_ERROR(r.Add<NoOpKernel>(
      OpDefBuilder("ControlTrigger")
          .SetIsStateful()
          .Doc("Does nothing; a stateful anchor for control edges that is never pruned as a "
               "duplicate. Shape: no outputs."),
      shape_fns::NoOutputs));
  TFD_RETURN_IF_ERROR(r.Add<PrintOp>(
      OpDefBuilder("Print")
          .Input("input: T")
          .Input("data: U")
          .Output("output: T")
          .Attr("T: type")
          .Attr("U: list(type) >= 0")
          .Attr("message: string = \"\"")
          .Attr("first_n: int = -1")
          .Attr("summarize: int = 3")
          .SetIsStateful()
          .Doc("Passes input through and logs message followed by each data tensor's first "
               "summarize values in brackets, on the task that runs it, for the first first_n "
               "runs (all when negative). Shape: input's."),
      shape_fns::UnchangedShape));
  TFD_RETURN_IF_ERROR(RegisterCheckOps(r));
  TFD_RETURN_IF_ERROR(RegisterCondOps(r));
  TFD_RETURN_IF_ERROR(RegisterLoopOps(r));
  return RegisterStackOps(r);
}

}  // namespace tfd::kernels
