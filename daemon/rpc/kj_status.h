// The one place where Status becomes a kj::Exception and back, so error
// codes survive RPC: the exception's description is "CODE: message".
//
//   return promise.catch_([](kj::Exception&& e) { Status s = StatusFromKj(e); ... });
//   kj::throwFatalException(KjFromStatus(status));
#pragma once

#include <kj/async.h>
#include <kj/exception.h>

#include <memory>

#include <spdlog/logger.h>

#include "common/status.h"

namespace tfd {

kj::Exception KjFromStatus(const Status& status);
// Codes written by KjFromStatus come back as they were; a lost connection
// (kj DISCONNECTED) is UNAVAILABLE; anything else INTERNAL.
Status StatusFromKj(const kj::Exception& e);

// Throws (the kj way of failing a promise) when `status` is not OK.
void ThrowIfError(const Status& status);

// Logs the failures of fire-and-forget promises kept in a kj::TaskSet.
class LogTaskErrors : public kj::TaskSet::ErrorHandler {
 public:
  LogTaskErrors(std::shared_ptr<spdlog::logger> logger, const char* what)
      : logger_(std::move(logger)), what_(what) {}
  void taskFailed(kj::Exception&& e) override;

 private:
  std::shared_ptr<spdlog::logger> logger_;
  const char* what_;
};

// A promise that resolves to the status of `p` (OK, or its failure).
kj::Promise<Status> Settle(kj::Promise<void> p);

}  // namespace tfd
