#include "daemon/distributed/task_metrics.h"

#include <algorithm>

namespace tfd {

void LatencyHistogram::Observe(std::chrono::nanoseconds elapsed) {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  const size_t bucket =
      std::lower_bound(kBounds.begin(), kBounds.end(), seconds) - kBounds.begin();
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(static_cast<uint64_t>(std::max<int64_t>(0, elapsed.count())),
                       std::memory_order_relaxed);
}

LatencyHistogram::Snapshot LatencyHistogram::Read() const {
  Snapshot out;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    out.buckets[i] = buckets_[i].load(std::memory_order_relaxed);
    out.count += out.buckets[i];
  }
  out.sum_seconds = static_cast<double>(sum_nanos_.load(std::memory_order_relaxed)) * 1e-9;
  return out;
}

std::array<uint64_t, kNumCodes> CodeCounts::Read() const {
  std::array<uint64_t, kNumCodes> out{};
  for (int i = 0; i < kNumCodes; ++i) out[i] = counts_[i].load(std::memory_order_relaxed);
  return out;
}

void TaskMetrics::RpcFailed(const std::string& method, Code code) {
  MutexLock lock(mu_);
  ++rpc_failures_[{method, code}];
}

std::map<std::pair<std::string, Code>, uint64_t> TaskMetrics::RpcFailures() const {
  MutexLock lock(mu_);
  return rpc_failures_;
}

void SaveCounts::Saved(std::chrono::system_clock::time_point when) {
  saved_.fetch_add(1, std::memory_order_relaxed);
  const int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count();
  // Saves may finish out of order on the pool: keep the latest.
  int64_t seen = last_ms_.load(std::memory_order_relaxed);
  while (seen < ms && !last_ms_.compare_exchange_weak(seen, ms)) {
  }
}

std::optional<std::chrono::system_clock::time_point> SaveCounts::last_success() const {
  const int64_t ms = last_ms_.load(std::memory_order_relaxed);
  if (ms < 0) return std::nullopt;
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms));
}

kj::Promise<void> CountStep(StepCounts& counts, kj::Promise<void> step) {
  const auto started = std::chrono::steady_clock::now();
  return step.then(
      [&counts, started]() { counts.Record(Code::kOk, std::chrono::steady_clock::now() - started); },
      [&counts, started](kj::Exception&& e) {
        counts.Record(StatusFromKj(e).code(), std::chrono::steady_clock::now() - started);
        kj::throwFatalException(kj::mv(e));
      });
}

std::string RpcMethodName(capnp::InterfaceSchema schema, uint16_t id) {
  std::string name = schema.getShortDisplayName().cStr();
  auto methods = schema.getMethods();
  if (id < methods.size()) return name + "." + methods[id].getProto().getName().cStr();
  // A method this build does not know (a newer client, or a prober): one
  // label for all of them, so callers cannot grow the page.
  return name + ".unknown";
}

}  // namespace tfd
