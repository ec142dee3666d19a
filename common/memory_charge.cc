#include "common/memory_charge.h"

namespace tfd {

StatusOr<MemoryCharge> MemoryCharge::Take(std::shared_ptr<MemoryBudget> budget, uint64_t bytes) {
  if (budget == nullptr) return MemoryCharge();
  TFD_RETURN_IF_ERROR(budget->Charge(bytes));
  return MemoryCharge(std::move(budget), bytes);
}

MemoryCharge::MemoryCharge(MemoryCharge&& other) noexcept
    : budget_(std::move(other.budget_)), bytes_(other.bytes_) {
  other.bytes_ = 0;
}

MemoryCharge& MemoryCharge::operator=(MemoryCharge&& other) noexcept {
  if (this != &other) {
    Reset();
    budget_ = std::move(other.budget_);
    bytes_ = other.bytes_;
    other.bytes_ = 0;
  }
  return *this;
}

MemoryCharge::~MemoryCharge() { Reset(); }

void MemoryCharge::Reset() {
  if (budget_ != nullptr && bytes_ > 0) budget_->Release(bytes_);
  budget_ = nullptr;
  bytes_ = 0;
}

}  // namespace tfd
