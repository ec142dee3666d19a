#include "daemon/client/training/signal_stop_hook.h"

#include <signal.h>

#include "daemon/client/training/training_session.h"

namespace tfd::training {
namespace {

// Set by the handler, read between steps.
volatile sig_atomic_t stop_signal = 0;

void OnStopSignal(int signal) { stop_signal = signal; }

}  // namespace

Status StopRequestHook::BeforeRun(TrainingSession& session, StepArgs& args) {
  std::string why = why_();
  if (!why.empty()) session.RequestStop(std::move(why));
  return OkStatus();
}

void CatchStopSignals() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int CaughtStopSignal() { return stop_signal; }

std::string StopSignalReason() {
  if (stop_signal == 0) return "";
  return stop_signal == SIGINT ? "stopped by SIGINT" : "stopped by SIGTERM";
}

}  // namespace tfd::training
