#include "common/cancellation.h"

#include <vector>

namespace tfd {

std::optional<CancellationManager::Token> CancellationManager::Register(Callback cb) {
  MutexLock lock(mu_);
  if (cancelled_) return std::nullopt;
  const Token t = next_++;
  callbacks_.emplace(t, std::move(cb));
  return t;
}

bool CancellationManager::Deregister(Token token) {
  MutexLock lock(mu_);
  return callbacks_.erase(token) == 1;
}

void CancellationManager::Cancel(const Status& reason) {
  std::map<Token, Callback> run;
  {
    MutexLock lock(mu_);
    if (cancelled_) return;
    cancelled_ = true;
    reason_ = reason;
    run.swap(callbacks_);
  }
  for (auto& [token, cb] : run) cb(reason);
}

bool CancellationManager::cancelled() const {
  MutexLock lock(mu_);
  return cancelled_;
}

Status CancellationManager::reason() const {
  MutexLock lock(mu_);
  return reason_;
}

}  // namespace tfd
