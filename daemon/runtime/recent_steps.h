// RecentSteps: the ids of the last `capacity` steps that ended, in memory
// fixed by the first Add.
//
// A rendezvous must recognise a step that already ended for as long as a
// late tensor may still arrive for it, over tens of thousands of steps. A
// node-based set of them grew the process by tens of megabytes before its
// bound was reached (and left the heap fragmented by the long-lived nodes);
// this one maps all its memory at once, and touches no allocator after.
// Not before the first Add: 65,536 steps' table is 1.7 MB, nearly what a
// task that has run none holds of its own (docs/scaling.md). It comes
// zeroed from the kernel in one call (common/zero_pages.h): zeroed by the
// allocator it faulted in page by page, 5 ms of a task's first step.
//
//   RecentSteps ended(65536);
//   ended.Add(step_id);             // forgets the oldest once full
//   if (ended.Contains(step_id)) ...
//
// Thread-safety: none; the owner locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/zero_pages.h"

namespace tfd {

class RecentSteps {
 public:
  // `capacity` is rounded up to a power of two.
  explicit RecentSteps(size_t capacity);

  bool Contains(int64_t step_id) const;
  // No effect when the step is already there. The first call takes the
  // memory of `capacity` steps.
  void Add(int64_t step_id);
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  // The bytes of its table: 0 until the first Add, then the same for good.
  size_t bytes() const;
  // The bytes of its table in memory now: all of it from the first Add.
  size_t resident_bytes() const { return pages_.resident_bytes(); }

 private:
  // Maps the zeroed table of `capacity_` steps (the first Add).
  void TakeTable();
  // The table slot holding `step_id`, or the empty slot where it would go.
  size_t Find(int64_t step_id) const;
  void Remove(int64_t step_id);

  size_t capacity_;
  // Open addressing with linear probing, twice the capacity so probes stay
  // short; `used_` says which slots hold an id (every int64 is a valid id).
  // All three empty until the first Add, then views of `pages_`.
  ZeroPages pages_;
  std::span<int64_t> slots_;
  std::span<uint8_t> used_;
  std::span<int64_t> order_;  // ring of ids, oldest at next_ once full
  size_t next_ = 0;
  size_t size_ = 0;
};

}  // namespace tfd
