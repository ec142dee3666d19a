#include "daemon/runtime/recent_steps.h"

#include <bit>

namespace tfd {
namespace {

// Step ids are random or sequential; a multiplicative hash spreads both.
size_t Hash(int64_t id, size_t mask) {
  return static_cast<size_t>((static_cast<uint64_t>(id) * 0x9e3779b97f4a7c15ULL) >> 17) & mask;
}

}  // namespace

RecentSteps::RecentSteps(size_t capacity)
    : capacity_(std::bit_ceil(capacity < 1 ? size_t{1} : capacity)) {}

void RecentSteps::TakeTable() {
  const size_t slots = 2 * capacity_;
  const size_t order_at = slots * sizeof(int64_t);
  const size_t used_at = order_at + capacity_ * sizeof(int64_t);
  pages_ = ZeroPages(used_at + slots);
  slots_ = {pages_.As<int64_t>(), slots};
  order_ = {pages_.As<int64_t>(order_at), capacity_};
  used_ = {pages_.As<uint8_t>(used_at), slots};
}

size_t RecentSteps::bytes() const {
  return slots_.size() * sizeof(int64_t) + used_.size() + order_.size() * sizeof(int64_t);
}

size_t RecentSteps::Find(int64_t step_id) const {
  const size_t mask = slots_.size() - 1;
  size_t i = Hash(step_id, mask);
  while (used_[i] && slots_[i] != step_id) i = (i + 1) & mask;
  return i;
}

bool RecentSteps::Contains(int64_t step_id) const {
  return !order_.empty() && used_[Find(step_id)] != 0;
}

void RecentSteps::Add(int64_t step_id) {
  if (order_.empty()) TakeTable();
  const size_t slot = Find(step_id);
  if (used_[slot]) return;
  if (size_ == order_.size()) {
    Remove(order_[next_]);
    Add(step_id);  // the slot found above may have moved
    return;
  }
  slots_[slot] = step_id;
  used_[slot] = 1;
  order_[next_] = step_id;
  next_ = (next_ + 1) % order_.size();
  ++size_;
}

// Backward-shift deletion: later members of the probe run move up into the
// hole, so lookups never need tombstones.
void RecentSteps::Remove(int64_t step_id) {
  const size_t mask = slots_.size() - 1;
  size_t hole = Find(step_id);
  if (!used_[hole]) return;
  used_[hole] = 0;
  --size_;
  for (size_t i = (hole + 1) & mask; used_[i]; i = (i + 1) & mask) {
    const size_t home = Hash(slots_[i], mask);
    // Moves up unless its home lies cyclically in (hole, i].
    const bool stays = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
    if (stays) continue;
    slots_[hole] = slots_[i];
    used_[hole] = 1;
    used_[i] = 0;
    hole = i;
  }
}

}  // namespace tfd
