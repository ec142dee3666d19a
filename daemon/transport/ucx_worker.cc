#include "daemon/transport/ucx_worker.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string_view>

#include "daemon/rpc/kj_status.h"

namespace tfd {

std::string UcxStatusString(ucs_status_t status) { return ucs_status_string(status); }

namespace {

// The kernel this process runs on and its IPC namespace: processes that
// share both can attach each other's shared memory. Empty parts where /proc
// does not say (then no peer is taken for a neighbour).
std::string HostIdentity() {
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  char ns[128] = {};
  const ssize_t n = readlink("/proc/self/ns/ipc", ns, sizeof(ns) - 1);
  if (boot.empty() || n <= 0) return "";
  return boot + " " + std::string(ns, static_cast<size_t>(n));
}

}  // namespace

StatusOr<std::unique_ptr<UcxWorker>> UcxWorker::Create(kj::UnixEventPort& events,
                                                        kj::Timer& timer,
                                                        std::shared_ptr<spdlog::logger> logger) {
  // Without the /proc link, posix segments would stay in /dev/shm under a
  // guessable name for anyone who can open them: not for tfd.
  if (const char* link = std::getenv("UCX_POSIX_USE_PROC_LINK");
      link != nullptr && std::string_view(link) != "y" && std::string_view(link) != "yes" &&
      std::string_view(link) != "1" && std::string_view(link) != "on") {
    return errors::FailedPrecondition("UCX_POSIX_USE_PROC_LINK=", link,
                                      " would leave shared memory in /dev/shm; unset it");
  }
  auto w = std::make_unique<UcxWorker>(std::move(logger));
  w->timer_ = &timer;
  ucp_config_t* config = nullptr;
  ucs_status_t s = ucp_config_read(nullptr, nullptr, &config);
  if (s != UCS_OK) return errors::Unavailable("UCX configuration: ", UcxStatusString(s));
  // Set here, over whatever UCX_TLS says: it decides what UCX opens to
  // other processes (see the header).
  s = ucp_config_modify(config, "TLS", kTransports);
  if (s != UCS_OK) {
    ucp_config_release(config);
    return errors::Unavailable("UCX refused TLS=", kTransports, ": ", UcxStatusString(s));
  }
  // Lets UCX tell when a neighbour dies. Without it a neighbour killed while
  // this task pulls a tensor from its memory (cross-memory attach) fails the
  // read with ESRCH, which UCX then treats as fatal and aborts this task.
  // (UCX accepts any key here, so a misspelt one would pass silently; the
  // endpoints' PEER mode then fails at once: transfer_test covers it.)
  s = ucp_config_modify(config, "MM_ERROR_HANDLING", "y");
  if (s == UCS_OK) s = ucp_config_modify(config, "KEEPALIVE_INTERVAL", "1s");
  if (s != UCS_OK) {
    ucp_config_release(config);
    return errors::Unavailable("UCX refused its error handling settings: ", UcxStatusString(s));
  }
  w->host_ = HostIdentity();

  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
  // Active messages carry pushed tensors; WAKEUP gives the event fd.
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.name = "tfd";
  s = ucp_init(&params, config, &w->context_);
  ucp_config_release(config);
  if (s != UCS_OK) return errors::Unavailable("UCX init: ", UcxStatusString(s));

  ucp_worker_params_t wparams{};
  wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
  s = ucp_worker_create(w->context_, &wparams, &w->worker_);
  if (s != UCS_OK) return errors::Unavailable("UCX worker: ", UcxStatusString(s));

  ucp_address_t* address = nullptr;
  size_t length = 0;
  s = ucp_worker_get_address(w->worker_, &address, &length);
  if (s != UCS_OK) return errors::Unavailable("UCX worker address: ", UcxStatusString(s));
  w->address_.assign(reinterpret_cast<const char*>(address), length);
  ucp_worker_release_address(w->worker_, address);

  s = ucp_worker_get_efd(w->worker_, &w->event_fd_);
  if (s != UCS_OK) return errors::Unavailable("UCX event fd: ", UcxStatusString(s));
  w->observer_ = kj::heap<kj::UnixEventPort::FdObserver>(
      events, w->event_fd_, kj::UnixEventPort::FdObserver::OBSERVE_READ);
  w->Progress();  // arms the worker, so its event fd speaks up
  w->watching_ = w->Watch().eagerlyEvaluate([logger = w->logger_](kj::Exception&& e) {
    if (logger) logger->error("the UCX progress loop stopped: {}", e.getDescription().cStr());
  });
  return w;
}

UcxWorker::~UcxWorker() {
  retry_ = nullptr;
  polling_ = nullptr;
  watching_ = nullptr;
  observer_ = nullptr;
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
  if (context_ != nullptr) ucp_cleanup(context_);
}

void UcxWorker::Progress() {
  if (in_progress_) return;
  if (!ProgressOnce() && !retry_running_) {
    // More to do than one turn should take: go on after the loop's other
    // events (in a test, the peer worker on the same loop is one of them).
    retry_running_ = true;
    retry_ = Retry().eagerlyEvaluate([logger = logger_](kj::Exception&& e) {
      if (logger) logger->error("the UCX progress retry stopped: {}", e.getDescription().cStr());
    });
  }
}

kj::Promise<void> UcxWorker::Retry() {
  // A timer, not evalLater: the loop looks at file descriptors (the peer's
  // event fd among them) only between timer turns, never while a chain of
  // evalLaters keeps its queue busy.
  return timer_->afterDelay(0 * kj::MILLISECONDS).then([this]() -> kj::Promise<void> {
    if (in_progress_ || !ProgressOnce()) return Retry();
    retry_running_ = false;
    return kj::READY_NOW;
  });
}

bool UcxWorker::ProgressOnce() {
  // Bounded: a send queued behind a full FIFO makes every progress call
  // report work without any being done, until the peer drains the FIFO.
  constexpr int kRounds = 8;
  constexpr int kCallsPerRound = 64;
  in_progress_ = true;
  bool armed = false;
  for (int round = 0; round < kRounds && !armed; ++round) {
    for (int i = 0; i < kCallsPerRound && ucp_worker_progress(worker_) != 0; ++i) {
    }
    if (!after_progress_.empty()) {
      // What callbacks set off may post more operations: progress again after.
      auto work = std::move(after_progress_);
      after_progress_.clear();
      for (auto& f : work) f();
      continue;
    }
    // Every progress, wherever it was called from, ends armed: an event
    // consumed here without re-arming would leave the event fd silent and
    // the next message unnoticed until something else progressed the worker.
    const ucs_status_t s = ucp_worker_arm(worker_);
    if (s == UCS_ERR_BUSY) continue;  // events came meanwhile
    if (s != UCS_OK && logger_) {
      logger_->error("ucp_worker_arm: {}", UcxStatusString(s));
    }
    armed = true;
  }
  in_progress_ = false;
  return armed;
}

void UcxWorker::RunAfterProgress(kj::Function<void()> work) {
  if (in_progress_) {
    after_progress_.push_back(std::move(work));
  } else {
    work();
  }
}

kj::Promise<void> UcxWorker::Watch() {
  return observer_->whenBecomesReadable().then([this]() {
    Progress();
    return Watch();
  });
}

}  // namespace tfd

namespace tfd {

void UcxWorker::Begin() {
  ++active_;
  if (!poll_running_) {
    poll_running_ = true;
    polling_ = Poll().eagerlyEvaluate([logger = logger_](kj::Exception&& e) {
      if (logger) logger->error("the UCX poll stopped: {}", e.getDescription().cStr());
    });
  }
}

void UcxWorker::End() {
  // The poll stops itself at its next tick: End may run inside it.
  if (active_ > 0) --active_;
}

kj::Promise<void> UcxWorker::Poll() {
  return timer_->afterDelay(1 * kj::MILLISECONDS).then([this]() -> kj::Promise<void> {
    Progress();
    if (active_ == 0) {
      poll_running_ = false;
      return kj::READY_NOW;
    }
    return Poll();
  });
}

}  // namespace tfd
