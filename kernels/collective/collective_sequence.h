// CollectiveSequence: counts, per task, the runs of each collective
// instance (group_key, instance_key). Members of a group run their own
// sessions and steps, so step ids cannot match their transfers; the n-th run
// of an instance on one task matches the n-th on every other (Horovod's
// rule: every member runs the same collectives in the same order). A run
// that fails still counts. Kept in the task's ResourceMgr.
//
//   TFD_ASSIGN_OR_RETURN(auto seq, CollectiveSequence::ForTask(ctx.resources()));
//   const int64_t n = seq->Next(group_key, instance_key);   // 0, 1, 2, ...
//
// Thread-safety: Next may be called from any thread.
#pragma once

#include <map>
#include <memory>
#include <utility>

#include "common/mutex.h"
#include "common/resource_mgr.h"

namespace tfd::kernels {

class CollectiveSequence : public ResourceBase {
 public:
  static constexpr const char* kContainer = "_kernels";
  static constexpr const char* kName = "collective_sequence";

  static StatusOr<std::shared_ptr<CollectiveSequence>> ForTask(ResourceMgr& resources) {
    return resources.LookupOrCreate<CollectiveSequence>(
        kContainer, kName,
        []() -> StatusOr<std::shared_ptr<CollectiveSequence>> {
          return std::make_shared<CollectiveSequence>();
        });
  }

  // How many runs of (group_key, instance_key) came before this one.
  int64_t Next(int64_t group_key, int64_t instance_key) {
    MutexLock lock(mu_);
    return runs_[{group_key, instance_key}]++;
  }

  std::string_view Kind() const override { return "collective sequence"; }
  std::string DebugString() const override {
    MutexLock lock(mu_);
    return std::to_string(runs_.size()) + " collective instance(s) run";
  }

 private:
  mutable Mutex mu_;
  std::map<std::pair<int64_t, int64_t>, int64_t> runs_ GUARDED_BY(mu_);
};

}  // namespace tfd::kernels
