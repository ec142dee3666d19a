// CancellationManager: one per step; lets waiting kernels (queue dequeues,
// receives) be woken when the step is cancelled or passes its deadline.
//
//   auto token = cm.Register([done](const Status& why) { done(why); });
//   if (!token) { /* already cancelled: fail now */ }
//   ... later, when the wait ends normally:
//   if (!cm.Deregister(*token)) { /* cancellation is running the callback */ }
//
// Thread-safety: all methods may be called from any thread. Callbacks run on
// the thread that calls Cancel, outside the lock, at most once each.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>

#include "common/mutex.h"
#include "common/status.h"

namespace tfd {

class CancellationManager {
 public:
  using Token = int64_t;
  using Callback = std::function<void(const Status& reason)>;

  // nullopt when already cancelled (the callback is not kept).
  std::optional<Token> Register(Callback cb);
  // True when the callback was removed before cancellation reached it.
  bool Deregister(Token token);
  // Cancels once with `reason` (later calls are ignored) and runs callbacks.
  void Cancel(const Status& reason);
  bool cancelled() const;
  // The reason given to Cancel, or OK.
  Status reason() const;

 private:
  mutable Mutex mu_;
  bool cancelled_ GUARDED_BY(mu_) = false;
  Status reason_ GUARDED_BY(mu_);
  Token next_ GUARDED_BY(mu_) = 0;
  std::map<Token, Callback> callbacks_ GUARDED_BY(mu_);
};

}  // namespace tfd
