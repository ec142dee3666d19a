// MemoryCharge: bytes counted in a task's MemoryBudget for as long as the
// object lives, for memory a client makes the task hold that is not a tensor
// buffer: a frame being received and the message read from it
// (daemon/rpc/frame_ledger.h). Tensors charge their buffers themselves
// (common/buffer.h); a MemoryCharge is for everything else that must be
// counted. Empty (counting nothing) when default-built or moved from.
//
//   TFD_ASSIGN_OR_RETURN(MemoryCharge charge, MemoryCharge::Take(budget, bytes));
//   ... the memory is held; `charge` goes with it ...
//
// Thread-safety: a value; it may be destroyed on any thread (the budget is).
#pragma once

#include <cstdint>
#include <memory>

#include "common/memory_budget.h"
#include "common/status.h"

namespace tfd {

class MemoryCharge {
 public:
  MemoryCharge() = default;
  // Counts `bytes` in `budget` (RESOURCE_EXHAUSTED, and nothing counted,
  // when they do not fit). A null budget counts nothing and always fits.
  static StatusOr<MemoryCharge> Take(std::shared_ptr<MemoryBudget> budget, uint64_t bytes);
  MemoryCharge(MemoryCharge&& other) noexcept;
  MemoryCharge& operator=(MemoryCharge&& other) noexcept;
  ~MemoryCharge();

  uint64_t bytes() const { return bytes_; }

 private:
  MemoryCharge(std::shared_ptr<MemoryBudget> budget, uint64_t bytes)
      : budget_(std::move(budget)), bytes_(bytes) {}
  void Reset();

  std::shared_ptr<MemoryBudget> budget_;
  uint64_t bytes_ = 0;
};

}  // namespace tfd
