#include "daemon/runtime/kernel_costs.h"

#include <algorithm>
#include <limits>

namespace tfd {

KernelCosts::KernelCosts(int num_nodes)
    : ns_(std::make_unique<std::atomic<uint32_t>[]>(static_cast<size_t>(num_nodes))) {}

bool KernelCosts::Cheap(int node) const {
  const uint32_t ns = ns_[node].load(std::memory_order_relaxed);
  return ns != 0 && ns < kInlineBelow.count();
}

void KernelCosts::Record(int node, std::chrono::nanoseconds took) {
  // Clamped to [1 ns, ~4.3 s]: 0 means "not measured", and anything longer
  // is as expensive as it gets.
  const uint64_t t = static_cast<uint64_t>(
      std::clamp<int64_t>(took.count(), 1, std::numeric_limits<uint32_t>::max()));
  std::atomic<uint32_t>& estimate = ns_[node];
  const uint64_t old = estimate.load(std::memory_order_relaxed);
  const uint64_t next = old == 0 || t > 4 * old ? t : (3 * old + t) / 4;
  estimate.store(static_cast<uint32_t>(next), std::memory_order_relaxed);
}

std::chrono::nanoseconds KernelCosts::Estimate(int node) const {
  return std::chrono::nanoseconds(ns_[node].load(std::memory_order_relaxed));
}

}  // namespace tfd
