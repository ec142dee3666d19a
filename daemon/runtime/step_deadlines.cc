#include "daemon/runtime/step_deadlines.h"

#include "common/thread_name.h"

namespace tfd {

StepDeadlines::StepDeadlines() : thread_([this] { Loop(); }) {}

StepDeadlines::~StepDeadlines() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

StepDeadlines& StepDeadlines::Shared() {
  static StepDeadlines shared;
  return shared;
}

StepDeadlines::Id StepDeadlines::Add(Clock::time_point when, std::function<void()> fire) {
  bool sooner;
  Id id;
  {
    MutexLock lock(mu_);
    id = next_id_++;
    queue_.emplace(std::make_pair(when, id), std::move(fire));
    when_.emplace(id, when);
    // A later deadline is seen when the thread wakes for the one it sleeps
    // until (which may have been removed since: the thread then finds the
    // queue's new first entry and sleeps again).
    sooner = when < sleeping_until_;
    if (sooner) sleeping_until_ = when;
  }
  if (sooner) changed_.notify_one();
  return id;
}

void StepDeadlines::Remove(Id id) {
  MutexLock lock(mu_);
  if (auto it = when_.find(id); it != when_.end()) {
    queue_.erase({it->second, id});
    when_.erase(it);
    return;
  }
  // From `fire` itself (a cancelled step ending on this thread) there is
  // nothing to wait for, and waiting would never end.
  if (std::this_thread::get_id() == thread_.get_id()) return;
  lock.Wait(fired_, [&]() REQUIRES(mu_) { return firing_ != id; });
}

size_t StepDeadlines::size() const {
  MutexLock lock(mu_);
  return queue_.size();
}

void StepDeadlines::Loop() {
  NameThisThread("deadlines");
  MutexLock lock(mu_);
  while (!stop_) {
    if (queue_.empty()) {
      if (sleeping_until_ <= Clock::now()) sleeping_until_ = Clock::time_point::max();
      if (sleeping_until_ == Clock::time_point::max()) {
        lock.Wait(changed_);
      } else {
        lock.WaitUntil(changed_, sleeping_until_);
      }
      continue;
    }
    auto first = queue_.begin();
    if (first->first.first > Clock::now()) {
      // Keep an earlier wake-up already promised to Add.
      if (sleeping_until_ <= Clock::now() || first->first.first < sleeping_until_) {
        sleeping_until_ = first->first.first;
      }
      lock.WaitUntil(changed_, sleeping_until_);
      continue;
    }
    const Id id = first->first.second;
    std::function<void()> fire = std::move(first->second);
    queue_.erase(first);
    when_.erase(id);
    firing_ = id;
    lock.Unlock();
    fire();
    fire = nullptr;  // what it holds goes before Remove returns
    lock.Lock();
    firing_ = 0;
    fired_.notify_all();
  }
}

}  // namespace tfd
