// UcxWorker: a task's UCX context and worker, driven by the task's kj event
// loop, for the data plane's links to tasks on the same host.
//
// Used only with --data-plane-transports=shm. Posix shared memory only
// (segments created mode 0600 and unlinked at once; a peer maps them through
// /proc/PID/fd, which only tfd's own user may open). Whatever UCX_TLS says,
// its TCP transport (whose listener on every interface parses
// unauthenticated bytes, and aborts on some), its SysV shared memory
// (segments readable by tfd's group) and its cross-memory attach are never
// enabled. Cross-memory attach is left out because UCX 1.13 aborts the
// reading process when the peer dies during a read (process_vm_readv:
// ESRCH, an error UCX cannot hand back without its peer-failure mode, and
// that mode wedged a task's loop in our tests); large tensors go by
// rendezvous over the posix FIFO instead, which measured no slower.
//
// No thread spins on a core: the worker's event fd is watched by
// the loop, which runs UCX's progress engine when it fires and re-arms it
// when there is nothing left to do, so an idle task sleeps.
//
// Not everything UCX waits for makes the event fd speak: a send queued
// behind a full shared-memory FIFO resumes only when the sender's worker is
// progressed again. While operations are outstanding (an Activity is held)
// the loop therefore also progresses the worker every millisecond.
//
//   TFD_ASSIGN_OR_RETURN(auto worker, UcxWorker::Create(io.unixEventPort, timer, logger));
//   ... post sends and receives on worker->worker(), then worker->Progress() ...
//
// Thread-safety: event-loop thread only (the worker runs in UCX's
// single-thread mode; other threads hand work to the loop).
#pragma once

#include <kj/async-unix.h>
#include <kj/function.h>
#include <ucp/api/ucp.h>

#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "common/status.h"

namespace tfd {

class UcxWorker {
 public:
  // The only UCX transports a worker enables (see above).
  static constexpr const char* kTransports = "posix";

  // UNAVAILABLE naming what UCX refused (no usable transport, ...).
  static StatusOr<std::unique_ptr<UcxWorker>> Create(kj::UnixEventPort& events,
                                                      kj::Timer& timer,
                                                      std::shared_ptr<spdlog::logger> logger);
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  ucp_context_h context() const { return context_; }
  ucp_worker_h worker() const { return worker_; }
  // This worker's address, to be handed to peers (opaque bytes).
  const std::string& address() const { return address_; }
  // Who can share memory with this worker: the kernel's boot id and the IPC
  // namespace. Two workers with the same identity are on one host and may
  // use UCX's shared-memory transports.
  const std::string& host() const { return host_; }

  // Runs the progress engine until it has nothing to do (or, when it keeps
  // finding work, for a bounded while and then again after the loop's other
  // events). Call after posting an operation from the loop, so it starts at
  // once. Called from inside a UCX callback it returns at once: the progress
  // already running goes on.
  void Progress();
  // UCX callbacks may not re-enter the progress engine, so what they set
  // off (starting a receive, delivering a tensor, closing an endpoint) runs
  // here once the engine has returned; outside the engine, at once.
  void RunAfterProgress(kj::Function<void()> work);

  // Held while an operation of this worker is outstanding: the worker is
  // then also progressed on a timer (see above).
  class Activity {
   public:
    explicit Activity(UcxWorker& w) : w_(&w) { w_->Begin(); }
    ~Activity() {
      if (w_ != nullptr) w_->End();
    }
    Activity(Activity&& o) noexcept : w_(o.w_) { o.w_ = nullptr; }
    Activity(const Activity&) = delete;
    Activity& operator=(const Activity&) = delete;
    Activity& operator=(Activity&&) = delete;

   private:
    UcxWorker* w_;
  };

  // Use Create.
  UcxWorker(std::shared_ptr<spdlog::logger> logger) : logger_(std::move(logger)) {}

 private:
  kj::Promise<void> Watch();
  // One bounded run of the progress engine; true when it ended armed.
  bool ProgressOnce();
  kj::Promise<void> Retry();
  void Begin();
  void End();
  kj::Promise<void> Poll();

  std::shared_ptr<spdlog::logger> logger_;
  kj::Timer* timer_ = nullptr;
  size_t active_ = 0;  // Activities held
  bool poll_running_ = false;
  bool retry_running_ = false;
  kj::Promise<void> retry_ = nullptr;
  kj::Promise<void> polling_ = nullptr;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::string address_;
  std::string host_;
  int event_fd_ = -1;
  bool in_progress_ = false;
  std::vector<kj::Function<void()>> after_progress_;
  kj::Own<kj::UnixEventPort::FdObserver> observer_;
  kj::Promise<void> watching_ = nullptr;
};

// "UCS_ERR_..." and UCX's description of `status`.
std::string UcxStatusString(ucs_status_t status);

}  // namespace tfd
