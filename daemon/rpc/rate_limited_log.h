// RateLimitedLog: warnings about things a stranger can make happen at will
// (refused and broken connections, failed logins), at most a few lines per
// second of each kind, so a flood cannot fill the disk or drown the log.
// What is held back is counted and summed up once the second is over:
// "... and 37 more like it (broken connection)".
//
//   RateLimitedLog log(logger, timer);   // 5 lines per kind per second
//   log.Warn("broken connection", "connection from 10.0.0.7:4711 closed: ...");
//
// Thread-safety: the event-loop thread that owns `timer`.
#pragma once

#include <kj/async.h>
#include <kj/timer.h>

#include <map>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "daemon/rpc/kj_status.h"

namespace tfd {

class RateLimitedLog {
 public:
  struct Options {
    int lines_per_window = 5;               // per kind
    kj::Duration window = 1 * kj::SECONDS;  // each kind's window opens with its first line
  };

  RateLimitedLog(std::shared_ptr<spdlog::logger> logger, kj::Timer& timer, Options options);
  RateLimitedLog(std::shared_ptr<spdlog::logger> logger, kj::Timer& timer)
      : RateLimitedLog(std::move(logger), timer, Options()) {}

  // Logs `line` at warning level, or counts it when `kind` has had its lines
  // in the current window.
  void Warn(const std::string& kind, const std::string& line);

 private:
  struct Kind {
    kj::TimePoint window_start = kj::origin<kj::TimePoint>();
    int lines = 0;
    uint64_t held_back = 0;
  };
  // Logs the summary of `kind`'s window that began at `window_start`, if it
  // is still the current one and held lines back.
  void Summarize(const std::string& kind, kj::TimePoint window_start);

  std::shared_ptr<spdlog::logger> logger_;
  kj::Timer& timer_;
  const Options options_;
  std::map<std::string, Kind> kinds_;
  LogTaskErrors errors_;
  kj::TaskSet summaries_;  // one timer per window that held lines back
};

}  // namespace tfd
