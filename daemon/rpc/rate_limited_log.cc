#include "daemon/rpc/rate_limited_log.h"

namespace tfd {

RateLimitedLog::RateLimitedLog(std::shared_ptr<spdlog::logger> logger, kj::Timer& timer,
                               Options options)
    : logger_(std::move(logger)),
      timer_(timer),
      options_(options),
      errors_(logger_, "a log summary"),
      summaries_(errors_) {}

void RateLimitedLog::Warn(const std::string& kind, const std::string& line) {
  const kj::TimePoint now = timer_.now();
  auto [it, fresh] = kinds_.try_emplace(kind);
  Kind& k = it->second;
  if (fresh || now - k.window_start >= options_.window) {
    // The timer may not have fired yet for the window that just ended.
    Summarize(kind, k.window_start);
    k = Kind{now, 0, 0};
  }
  if (k.lines < options_.lines_per_window) {
    ++k.lines;
    if (logger_) logger_->warn("{}", line);
    return;
  }
  if (k.held_back++ == 0) {
    const kj::TimePoint start = k.window_start;
    summaries_.add(timer_.atTime(start + options_.window).then([this, kind, start]() {
      Summarize(kind, start);
    }));
  }
}

void RateLimitedLog::Summarize(const std::string& kind, kj::TimePoint window_start) {
  auto it = kinds_.find(kind);
  if (it == kinds_.end() || it->second.window_start != window_start) return;
  Kind& k = it->second;
  if (k.held_back == 0) return;
  if (logger_) logger_->warn("... and {} more like it ({})", k.held_back, kind);
  k.held_back = 0;
}

}  // namespace tfd
