#include "daemon/distributed/task_env.h"

#include <random>
#include <vector>

namespace tfd {

uint64_t NewIncarnation() {
  std::random_device device;
  uint64_t value = 0;
  while (value == 0) value = (uint64_t{device()} << 32) | device();
  return value;
}

void StepRegistry::Add(int64_t step_id, std::shared_ptr<CancellationManager> cm) {
  MutexLock lock(mu_);
  steps_.emplace(step_id, cm);
}

void StepRegistry::Remove(int64_t step_id, const CancellationManager* cm) {
  MutexLock lock(mu_);
  auto [begin, end] = steps_.equal_range(step_id);
  for (auto it = begin; it != end; ++it) {
    auto held = it->second.lock();
    if (!held || held.get() == cm) {
      steps_.erase(it);
      return;
    }
  }
}

void StepRegistry::Abort(int64_t step_id, const Status& why) {
  std::vector<std::shared_ptr<CancellationManager>> cms;
  {
    MutexLock lock(mu_);
    auto [begin, end] = steps_.equal_range(step_id);
    for (auto it = begin; it != end; ++it) {
      if (auto cm = it->second.lock()) cms.push_back(cm);
    }
  }
  for (auto& cm : cms) cm->Cancel(why);
}

void StepRegistry::AbortAll(const Status& why) {
  std::vector<std::shared_ptr<CancellationManager>> cms;
  {
    MutexLock lock(mu_);
    for (auto& [id, weak] : steps_) {
      if (auto cm = weak.lock()) cms.push_back(cm);
    }
  }
  for (auto& cm : cms) cm->Cancel(why);
}

size_t StepRegistry::size() const {
  MutexLock lock(mu_);
  return steps_.size();
}

}  // namespace tfd
