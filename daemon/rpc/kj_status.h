// The one place where Status becomes a kj::Exception and back, so error
// codes and details survive RPC. Cap'n Proto 0.9.2's exceptions carry only a
// description, so that is "CODE: message", after the details' token when
// there are any (common/status_details.h, e.g.
// "tfd-details/1/19:node=1:x;op=5:_Recv; INTERNAL: node 'x' (_Recv): ...").
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
// Codes and details written by KjFromStatus come back as they were; a lost
// connection (kj DISCONNECTED without a code) is UNAVAILABLE with the reason
// kConnectionLost; anything else INTERNAL. Never throws, whatever the
// description holds.
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
