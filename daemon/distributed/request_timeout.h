// RequestTimeout: the timeouts clients and peers send (a step's, a wait's)
// made safe to compute with. A request may say anything in its Int64: left
// as is, a few trillion milliseconds overflow the moment they become
// nanoseconds on a clock (rpc_fuzz found exactly that). Zero or less means
// "the task's default"; more than a week is taken as a week, which no step
// or wait needs and every clock holds.
//
//   const auto timeout = RequestTimeout(params.getTimeoutMs(), env.step_timeout);
//   const auto deadline = timer.now() + timeout.count() * kj::MILLISECONDS;
//
// Thread-safety: a pure function.
#pragma once

#include <chrono>
#include <cstdint>

namespace tfd {

inline constexpr std::chrono::milliseconds kMaxRequestTimeout = std::chrono::hours(24 * 7);

inline std::chrono::milliseconds RequestTimeout(int64_t ms, std::chrono::milliseconds fallback) {
  if (ms <= 0) return fallback;
  return ms > kMaxRequestTimeout.count() ? kMaxRequestTimeout : std::chrono::milliseconds(ms);
}

}  // namespace tfd
