// Stopping on request: SIGINT or SIGTERM (tfctl train), or whatever else a
// caller polls (Python's KeyboardInterrupt). The loop ends after the
// running step, and the hooks' End (the chief's final checkpoint) runs as
// at any other stop. The hook polls between steps; the same poll given as
// SessionOptions::stop_requested (Trainer does) also ends the session's
// waits for the cluster, within a slice of them.
//
//   CatchStopSignals();
//   StopRequestHook signals(StopSignalReason);  // "stopped by SIGINT"
//
// Thread-safety: the hook runs on the session's thread; the handlers that
// CatchStopSignals installs only note the signal.
#pragma once

#include <functional>
#include <string>

#include "daemon/client/training/session_hook.h"

namespace tfd::training {

// Stops before a step once `why` answers something other than "", with
// that answer as the reason.
class StopRequestHook : public SessionHook {
 public:
  explicit StopRequestHook(std::function<std::string()> why) : why_(std::move(why)) {}
  Status BeforeRun(TrainingSession& session, StepArgs& args) override;

 private:
  std::function<std::string()> why_;
};

// From now on SIGINT and SIGTERM only note the signal; the handlers reset
// themselves, so a second one kills at once.
void CatchStopSignals();
// The signal caught since CatchStopSignals, or 0.
int CaughtStopSignal();
// "stopped by SIGINT" / "stopped by SIGTERM", or "" before either.
std::string StopSignalReason();

}  // namespace tfd::training
