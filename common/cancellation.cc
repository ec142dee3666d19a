#include "common/cancellation.h"

#include <vector>

namespace tfd {

std::optional<CancellationManager::Token> CancellationManager::Register(Callback cb) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) return std::nullopt;
  const Token t = next_++;
  callbacks_.emplace(t, std::move(cb));
  return t;
}

bool CancellationManager::Deregister(Token token) {
  std::lock_guard<std::mutex> lock(mu_);
  return callbacks_.erase(token) == 1;
}

void CancellationManager::Cancel(const Status& reason) {
  std::map<Token, Callback> run;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) return;
    cancelled_ = true;
    reason_ = reason;
    run.swap(callbacks_);
  }
  for (auto& [token, cb] : run) cb(reason);
}

bool CancellationManager::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

Status CancellationManager::reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reason_;
}

}  // namespace tfd
