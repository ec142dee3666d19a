// MemoryBudget: the bytes of tensor buffers that one task's kernels hold
// alive at once, against a limit, so that a step asking for more memory than
// the machine has fails with RESOURCE_EXHAUSTED instead of getting the task
// OOM-killed.
//
// A buffer allocated with a budget (Buffer::Allocate, Tensor::Allocate; every
// kernel output through OpKernelContext::allocate_output) charges its bytes
// before the memory is taken and gives them back when the last tensor using
// it goes away — a step's temporaries at its end, a variable's value when it
// is replaced. Buffers hold the budget by shared_ptr, so it outlives them.
// Fed values, graphs' constants and restored checkpoints are charged too, and
// frames received from clients through a MemoryCharge (common/memory_charge.h).
// Not seen: the kernels' own scratch (Eigen temporaries), most non-tensors.
//
//   auto budget = std::make_shared<MemoryBudget>(MemoryBudget::DefaultLimit());
//   TFD_RETURN_IF_ERROR(budget->Charge(bytes));   // RESOURCE_EXHAUSTED when over
//   ...
//   budget->Release(bytes);
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/status.h"

namespace tfd {

class MemoryBudget {
 public:
  explicit MemoryBudget(uint64_t limit_bytes) : limit_(limit_bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Three quarters of the memory this process may use: the machine's
  // physical memory, or its cgroup's limit when that is lower (a container).
  // The rest is for what the budget does not count (see above).
  static uint64_t DefaultLimit();

  // Counts `bytes` more when they fit under the limit; otherwise counts
  // nothing and returns RESOURCE_EXHAUSTED saying what is in use.
  Status Charge(uint64_t bytes);
  // Gives back bytes an earlier Charge counted.
  void Release(uint64_t bytes);

  uint64_t limit() const { return limit_; }
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }

 private:
  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
};

}  // namespace tfd
