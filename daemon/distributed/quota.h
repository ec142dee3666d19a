// Quota: how many of something a task holds at once against a limit — the
// sessions of one client (--max-sessions-per-client), the partitions
// registered with a task (--max-registered-graphs). Each holder keeps a Slot
// and its place is free again when the slot goes; a slot may outlive its
// quota (a session outliving its client's connection).
//
//   Quota sessions(64);
//   std::unique_ptr<Quota::Slot> slot = sessions.TryTake();
//   if (slot == nullptr) return errors::ResourceExhausted("...", sessions.limit(), "...");
//
// Thread-safety: event-loop thread only, slots included.
#pragma once

#include <memory>

namespace tfd {

class Quota {
 public:
  class Slot {
   public:
    explicit Slot(std::shared_ptr<int> held) : held_(std::move(held)) { ++*held_; }
    ~Slot() { --*held_; }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    std::shared_ptr<int> held_;
  };

  explicit Quota(int limit) : limit_(limit) {}

  // A place, or null when `limit` are held already.
  std::unique_ptr<Slot> TryTake() {
    return *held_ < limit_ ? std::make_unique<Slot>(held_) : nullptr;
  }
  int held() const { return *held_; }
  int limit() const { return limit_; }

 private:
  const int limit_;
  std::shared_ptr<int> held_ = std::make_shared<int>(0);
};

}  // namespace tfd
