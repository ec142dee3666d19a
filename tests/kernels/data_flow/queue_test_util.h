// Shared by the queue tests: a registry and one task environment, and a way
// to start an asynchronous kernel and look at it before it has finished
// (RunOpValues waits for it, which would hide whether a thread was parked).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/register_all.h"
#include "tests/util/contains.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {

// One started run of an AsyncOpKernel. done() may fire on any thread.
class AsyncCall {
 public:
  AsyncCall(const OpRegistry& registry, const KernelEnv& env, const std::string& op, AttrMap attrs,
            std::vector<Value> inputs, CancellationManager* cm)
      : node_{"async_" + op, op, env.task + "/device:CPU:0"}, attrs_(std::move(attrs)) {
    auto reg = registry.Lookup(op);
    REQUIRE(reg.ok());
    REQUIRE(CompleteAndCheckAttrs((*reg)->def, attrs_).ok());
    auto in_types = ArgTypes((*reg)->def.inputs, attrs_);
    auto out_types = ArgTypes((*reg)->def.outputs, attrs_);
    REQUIRE(in_types.ok());
    REQUIRE(out_types.ok());
    OpKernelConstruction c(node_, (*reg)->def, attrs_, *in_types, *out_types, env);
    auto kernel = (*reg)->kernels.at(kDeviceCpu)(c);
    REQUIRE(kernel.ok());
    REQUIRE((*kernel)->is_async());
    kernel_ = std::move(kernel).value();
    step_.cancellation = cm != nullptr ? cm : &own_cm_;
    ctx_ = std::make_unique<OpKernelContext>(*kernel_, env, step_, std::move(inputs), *out_types);
    static_cast<AsyncOpKernel&>(*kernel_).ComputeAsync(*ctx_, [this] {
      std::lock_guard<std::mutex> lock(mu_);
      ++done_calls_;
      cv_.notify_all();
    });
  }
  ~AsyncCall() {
    // A call still waiting would run its callback into a dead object.
    if (!finished()) step_.cancellation->Cancel(errors::Cancelled("test over"));
    Wait();
  }

  bool finished() const {
    std::lock_guard<std::mutex> lock(mu_);
    return done_calls_ > 0;
  }
  int done_calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return done_calls_;
  }
  // Waits for done (another thread must bring it about); false after a
  // generous limit so that a bug fails the test instead of hanging it.
  bool Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(30), [&] { return done_calls_ > 0; });
  }
  const Status& status() const { return ctx_->status(); }
  const Tensor& output(int i) const { return ctx_->outputs()[i].tensor; }

 private:
  NodeInfo node_;
  AttrMap attrs_;
  std::unique_ptr<OpKernel> kernel_;
  CancellationManager own_cm_;
  StepContext step_;
  std::unique_ptr<OpKernelContext> ctx_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int done_calls_ = 0;
};

class QueueTestEnv {
 public:
  QueueTestEnv() {
    REQUIRE(kernels::RegisterAll(registry_).ok());
    env_.resources = &resources_;
  }

  // `master`: the replica the run belongs to (StepContext::master).
  StatusOr<std::vector<Value>> Run(const std::string& op, AttrMap attrs, std::vector<Value> inputs,
                                   CancellationManager* cm = nullptr, std::string master = {}) {
    RunOpOptions options;
    options.env = &env_;
    options.cancellation = cm;
    options.master = std::move(master);
    return RunOpValues(registry_, op, std::move(attrs), std::move(inputs), options);
  }
  std::unique_ptr<AsyncCall> Start(const std::string& op, AttrMap attrs, std::vector<Value> inputs,
                                   CancellationManager* cm = nullptr) {
    return std::make_unique<AsyncCall>(registry_, env_, op, std::move(attrs), std::move(inputs),
                                       cm);
  }

  // A FIFOQueue kernel's output (or that of `op`, given `more` attrs): the
  // queue under `name`.
  std::shared_ptr<ResourceBase> NewQueue(const std::string& name, std::vector<DType> types,
                                         std::vector<PartialShape> shapes, int64_t capacity,
                                         const std::string& op = "FIFOQueue", AttrMap more = {}) {
    AttrMap attrs{{"component_types", types}, {"capacity", capacity}, {"shared_name", name}};
    if (!shapes.empty()) attrs["shapes"] = shapes;
    attrs.insert(more.begin(), more.end());
    auto out = Run(op, std::move(attrs), {});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    REQUIRE((*out)[0].is_ref());
    return (*out)[0].ref;
  }

  const OpRegistry& registry() const { return registry_; }
  ResourceMgr& resources() { return resources_; }
  KernelEnv& env() { return env_; }

 private:
  OpRegistry registry_;
  ResourceMgr resources_;
  KernelEnv env_;
};

inline Value Ref(std::shared_ptr<ResourceBase> r) { return Value{Tensor(), std::move(r)}; }
inline Value Val(Tensor t) { return Value{std::move(t), nullptr}; }

}  // namespace tfd::testing
