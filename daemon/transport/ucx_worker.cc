#include "daemon/transport/ucx_worker.h"

#include <cstdlib>

#include "daemon/rpc/kj_status.h"

namespace tfd {

std::string UcxStatusString(ucs_status_t status) { return ucs_status_string(status); }

StatusOr<std::unique_ptr<UcxWorker>> UcxWorker::Create(kj::UnixEventPort& events,
                                                        const Options& options,
                                                        std::shared_ptr<spdlog::logger> logger) {
  auto w = std::make_unique<UcxWorker>(std::move(logger));
  ucp_config_t* config = nullptr;
  ucs_status_t s = ucp_config_read(nullptr, nullptr, &config);
  if (s != UCS_OK) return errors::Unavailable("UCX configuration: ", UcxStatusString(s));
  if (!options.transports.empty()) {
    s = ucp_config_modify(config, "TLS", options.transports.c_str());
    if (s != UCS_OK) {
      ucp_config_release(config);
      return errors::InvalidArgument("UCX transports '", options.transports,
                                     "': ", UcxStatusString(s));
    }
  }
  const char* tls_env = std::getenv("UCX_TLS");
  w->transports_ = !options.transports.empty() ? options.transports
                   : tls_env != nullptr        ? tls_env
                                               : "all";

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
  watching_ = nullptr;
  observer_ = nullptr;
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
  if (context_ != nullptr) ucp_cleanup(context_);
}

void UcxWorker::Progress() {
  if (in_progress_) return;
  in_progress_ = true;
  for (;;) {
    while (ucp_worker_progress(worker_) != 0) {
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
    break;
  }
  in_progress_ = false;
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
