// TaskMetrics: what a task counts as it works, for its /metrics page
// (daemon/metrics_page.h): runs and partition steps by outcome with their
// durations, failed RPC calls by method and code, checkpoint saves (its own
// files, and the cluster checkpoints it saved as master). Each is
// counted where the work ends; the page reads them when scraped. Gauges
// (sessions, variables, queues, memory) are not here: the page reads them
// from their owners.
//
//   env.metrics.partition_steps.Record(status.code(), elapsed);
//   class MasterService final : public CountedServer<proto::Master> { ... };
//
// Thread-safety: every method from any thread. Counters are relaxed
// atomics; the table of RPC failures takes a mutex (failures are rare).
#pragma once

#include <capnp/capability.h>
#include <capnp/schema.h>
#include <kj/async.h>

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "common/mutex.h"
#include "common/status.h"
#include "daemon/rpc/kj_status.h"

namespace tfd {

// Durations in fixed buckets, read as Prometheus's cumulative histogram.
class LatencyHistogram {
 public:
  // Upper bounds in seconds: from an empty step on loopback (~100 µs) to a
  // step that runs into the default 30 s deadline.
  static constexpr std::array<double, 16> kBounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                     0.005,  0.01,    0.025,  0.05,  0.1,
                                                     0.25,   0.5,     1,      2.5,   10,
                                                     30};
  struct Snapshot {
    std::array<uint64_t, kBounds.size() + 1> buckets{};  // per bucket (not cumulative); last: +Inf
    uint64_t count = 0;
    double sum_seconds = 0;
  };

  void Observe(std::chrono::nanoseconds elapsed);
  Snapshot Read() const;

 private:
  std::array<std::atomic<uint64_t>, kBounds.size() + 1> buckets_{};
  std::atomic<uint64_t> sum_nanos_{0};
};

// A count per error code, OK included.
class CodeCounts {
 public:
  void Add(Code code) { counts_[static_cast<int>(code)].fetch_add(1, std::memory_order_relaxed); }
  std::array<uint64_t, kNumCodes> Read() const;

 private:
  std::array<std::atomic<uint64_t>, kNumCodes> counts_{};
};

// Steps of one kind: how each ended and how long it took.
struct StepCounts {
  CodeCounts outcomes;
  LatencyHistogram seconds;
  void Record(Code code, std::chrono::nanoseconds elapsed) {
    outcomes.Add(code);
    seconds.Observe(elapsed);
  }
};

// Saves of one kind: how many succeeded and when the newest did, and how
// many failed.
class SaveCounts {
 public:
  void Saved(std::chrono::system_clock::time_point when);
  void Failed() { failed_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t saved() const { return saved_.load(std::memory_order_relaxed); }
  uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }
  // When the newest successful save ended; nullopt before the first.
  std::optional<std::chrono::system_clock::time_point> last_success() const;

 private:
  std::atomic<uint64_t> saved_{0};
  std::atomic<uint64_t> failed_{0};
  std::atomic<int64_t> last_ms_{-1};  // Unix time in ms; -1: none yet
};

class TaskMetrics {
 public:
  // Session.run and Callable.run answered by this task as master, from the
  // call's arrival to its answer.
  StepCounts runs;
  // Every partition this task ran: for a master elsewhere (over the step
  // channel) or its own part of a run.
  StepCounts partition_steps;

  // A call of `method` ("Session.run") answered with an error.
  void RpcFailed(const std::string& method, Code code);
  std::map<std::pair<std::string, Code>, uint64_t> RpcFailures() const;

  // This task's own checkpoint files, counted when one becomes a checkpoint.
  void CheckpointSaved(std::chrono::system_clock::time_point when) { checkpoints_.Saved(when); }
  uint64_t checkpoints_saved() const { return checkpoints_.saved(); }
  // When the last save succeeded; nullopt before the first.
  std::optional<std::chrono::system_clock::time_point> last_checkpoint() const {
    return checkpoints_.last_success();
  }

  // Cluster checkpoints this task saved as master (Master.saveCheckpoint,
  // daemon/distributed/checkpoint_fanout.h): saved means complete on every
  // task; failed, that some task could not write or commit its part.
  SaveCounts cluster_checkpoints;

 private:
  mutable Mutex mu_;
  std::map<std::pair<std::string, Code>, uint64_t> rpc_failures_ GUARDED_BY(mu_);
  SaveCounts checkpoints_;
};

// `step` as it was, recorded in `counts` when it ends (a call the client
// cancelled is not recorded: nobody is answered).
kj::Promise<void> CountStep(StepCounts& counts, kj::Promise<void> step);

// "Session.run" for method `id` of Cap'n Proto interface `schema`.
std::string RpcMethodName(capnp::InterfaceSchema schema, uint16_t id);

// The Cap'n Proto server of `Interface`, counting its failed calls in
// `metrics` (thrown at once or rejected later) by method and code:
//   class WorkerService final : public CountedServer<proto::Worker> { ... };
template <typename Interface>
class CountedServer : public Interface::Server {
 public:
  explicit CountedServer(TaskMetrics& metrics) : metrics_(metrics) {}

  capnp::Capability::Server::DispatchCallResult dispatchCall(
      uint64_t interface_id, uint16_t method_id,
      capnp::CallContext<capnp::AnyPointer, capnp::AnyPointer> context) override {
    bool streaming = false;
    auto promise = kj::evalNow([&]() {
      auto result = Interface::Server::dispatchCall(interface_id, method_id, context);
      streaming = result.isStreaming;
      return kj::mv(result.promise);
    });
    return {promise.catch_([&metrics = metrics_, method_id](kj::Exception&& e) -> kj::Promise<void> {
              metrics.RpcFailed(RpcMethodName(capnp::Schema::from<Interface>(), method_id),
                                StatusFromKj(e).code());
              return kj::mv(e);
            }),
            streaming};
  }

 private:
  TaskMetrics& metrics_;
};

}  // namespace tfd
