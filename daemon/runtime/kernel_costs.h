// KernelCosts: how long each node's kernel has taken to compute, so that the
// executor can run the ones measured cheap on the thread that made them
// ready, as it runs kernels declared cheap (OpKernel::is_cheap). It does so
// in steps of a blocking Executor::Run (a LocalSession, `tfctl run`) only: on
// a task's event loop the same cost 7-9 % of an unpinned 1 ps + 1 worker's
// steps (bench/NOTES.md, "Kernels measured cheap"). There, a variable's
// update is cheap by the size of its inputs instead
// (OpKernel::cheap_up_to_elements): a bound fixed from a measurement, with
// no clock read per run.
//
// Handing a kernel to the compute pool costs a wake-up and a context switch,
// 10-50 µs on the virtual machines tfd was measured on; a kernel that takes
// less than kInlineBelow is not worth it. Which kernels those are depends on
// the shapes a graph gives them (a MatMul of 100x10 by 10x100 takes a few
// µs, one of 100x784 by 784x100 over 100), so they are measured, not declared.
// TensorFlow's executor does the same (8,000 cycles in its later versions).
//
// The estimate follows the last runs (a moving average); a run four times
// slower than it replaces it at once, so a kernel whose input grew stops
// running inline after one slow run. A kernel never measured is not cheap.
//
//   KernelCosts costs(graph.num_nodes());
//   if (costs.Cheap(id)) { ... run here ... }
//   costs.Record(id, took);
//
// Thread-safety: every method from any thread; an estimate read while
// another thread records may be the older one.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

namespace tfd {

class KernelCosts {
 public:
  static constexpr std::chrono::nanoseconds kInlineBelow = std::chrono::microseconds(10);

  explicit KernelCosts(int num_nodes);

  // Whether `node`'s kernel was measured, and its estimate is below kInlineBelow.
  bool Cheap(int node) const;
  void Record(int node, std::chrono::nanoseconds took);
  // The current estimate; zero before the first run.
  std::chrono::nanoseconds Estimate(int node) const;

 private:
  std::unique_ptr<std::atomic<uint32_t>[]> ns_;  // by node; 0: not measured yet
};

}  // namespace tfd
