#include "tests/util/test_ops.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "common/op_kernel.h"
#include "kernels/framework/framework_ops.h"

namespace tfd::testing {

struct RunLog : ResourceBase {
  std::string_view Kind() const override { return "run log"; }
  std::string DebugString() const override { return "run log"; }
  std::mutex mu;
  std::vector<std::string> order;
};

std::vector<std::string> RecordedOrder(ResourceMgr& rm) {
  auto log = rm.Lookup<RunLog>("test", "log");
  if (!log.ok()) return {};
  std::lock_guard<std::mutex> lock((*log)->mu);
  return (*log)->order;
}

std::string ThreadTag() {
  return std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
}

namespace {

class TConst : public OpKernel {
 public:
  explicit TConst(OpKernelConstruction& c) : OpKernel(c) { c.SetStatus(c.GetAttr("value", &value_)); }
  void Compute(OpKernelContext& ctx) override { ctx.set_output(0, value_); }

 private:
  Tensor value_;
};

class TAdd : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    TFD_OP_REQUIRES(ctx, a.shape() == b.shape(),
                    errors::InvalidArgument("shapes differ: ", a.Describe(), " vs ", b.Describe()));
    Tensor* out;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, a.shape(), &out));
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      out->data<float>()[i] = a.data<float>()[i] + b.data<float>()[i];
    }
  }
};

// Appends `entry` to the task's run log, creating it on first use.
Status AppendToRunLog(OpKernelContext& ctx, std::string entry) {
  TFD_ASSIGN_OR_RETURN(auto log, ctx.resources().LookupOrCreate<RunLog>("test", "log", [] {
    return StatusOr<std::shared_ptr<RunLog>>(std::make_shared<RunLog>());
  }));
  std::lock_guard<std::mutex> lock(log->mu);
  log->order.push_back(std::move(entry));
  return OkStatus();
}

class TRecord : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override { ctx.SetStatus(AppendToRunLog(ctx, name())); }
};

class TFail : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    ctx.SetStatus(errors::InvalidArgument("this op always fails"));
  }
};

// Waits until the step is cancelled, then finishes with the reason and what
// it waited for — the contract of every blocking kernel.
class TWait : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    auto token = ctx.cancellation().Register([&ctx, done](const Status& why) {
      ctx.SetStatus(Status(why.code(), why.message() + "; while waiting for the test event"));
      done();
    });
    if (!token) {
      ctx.SetStatus(ctx.cancellation().reason());
      done();
    }
  }
};

// Cheap: the executor runs it on whichever thread made it ready.
class TTick : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool is_cheap() const override { return true; }
  void Compute(OpKernelContext&) override {}
};

// Asynchronous, and done before ComputeAsync returns (as a receive whose
// tensor is already there).
class TReady : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext&, DoneCallback done) override { done(); }
};

// Expensive (the default): records "NAME@THREAD" in the run log, THREAD
// being ThreadTag() of the thread it ran on, after keeping its thread busy
// for `busy_us` (0 by default: then the executor soon measures it cheap).
class TRecordThread : public OpKernel {
 public:
  explicit TRecordThread(OpKernelConstruction& c) : OpKernel(c) {
    int64_t busy_us = 0;
    c.SetStatus(c.GetAttr("busy_us", &busy_us));
    busy_ = std::chrono::microseconds(busy_us);
  }
  void Compute(OpKernelContext& ctx) override {
    const auto until = std::chrono::steady_clock::now() + busy_;
    while (std::chrono::steady_clock::now() < until) {
    }
    ctx.SetStatus(AppendToRunLog(ctx, name() + "@" + ThreadTag()));
  }

 private:
  std::chrono::microseconds busy_{0};
};

// A stand-in resource: a float scalar cell, enough to exercise references.
struct TCell : ResourceBase {
  std::string_view Kind() const override { return "test cell"; }
  std::string DebugString() const override { return "test cell"; }
  StatusOr<Tensor> Read() const override { return Tensor::Scalar(value.load()); }
  std::atomic<float> value{0};
};

class TVar : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    auto cell = ctx.resources().LookupOrCreate<TCell>(
        "test", name(), [] { return StatusOr<std::shared_ptr<TCell>>(std::make_shared<TCell>()); });
    TFD_OP_REQUIRES_OK(ctx, cell.status());
    ctx.set_output_ref(0, *cell);
  }
};

class TSet : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    auto cell = ctx.input_ref<TCell>(0);
    TFD_OP_REQUIRES_OK(ctx, cell.status());
    (*cell)->value = ctx.input(1).scalar<float>();
  }
};

Status ConstShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(Tensor v, c.GetAttr<Tensor>("value"));
  c.set_output(0, v.shape());
  c.set_output_value(0, v);
  return OkStatus();
}

}  // namespace

Status RegisterTestOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(kernels::RegisterFrameworkOps(r));  // feeds and fetches
  TFD_RETURN_IF_ERROR(r.Add<TConst>(
      OpDefBuilder("TConst").Output("output: dtype").Attr("value: tensor").Attr("dtype: type"),
      ConstShape));
  TFD_RETURN_IF_ERROR(r.Add<TAdd>(
      OpDefBuilder("TAdd").Input("x: T").Input("y: T").Output("z: T").Attr("T: {float32}"),
      shape_fns::BroadcastBinary));
  TFD_RETURN_IF_ERROR(r.Add<TRecord>(OpDefBuilder("TRecord").SetIsStateful(), shape_fns::NoOutputs));
  TFD_RETURN_IF_ERROR(r.Add<TFail>(OpDefBuilder("TFail").Input("x: float32"), shape_fns::NoOutputs));
  TFD_RETURN_IF_ERROR(r.Add<TVar>(OpDefBuilder("TVar").Output("ref: Ref(float32)").SetIsStateful(),
                                  shape_fns::Scalar));
  TFD_RETURN_IF_ERROR(r.Add<TSet>(
      OpDefBuilder("TSet").Input("ref: Ref(float32)").Input("value: float32").SetIsStateful(),
      shape_fns::NoOutputs));
  TFD_RETURN_IF_ERROR(r.Add<TWait>(OpDefBuilder("TWait").Output("y: float32"), shape_fns::Unknown));
  TFD_RETURN_IF_ERROR(r.Add<TTick>(OpDefBuilder("TTick"), shape_fns::NoOutputs));
  TFD_RETURN_IF_ERROR(r.Add<TReady>(OpDefBuilder("TReady"), shape_fns::NoOutputs));
  TFD_RETURN_IF_ERROR(
      r.Add<TRecordThread>(OpDefBuilder("TRecordThread").Attr("busy_us: int = 0").SetIsStateful(),
                           shape_fns::NoOutputs));
  return OkStatus();
}

}  // namespace tfd::testing
