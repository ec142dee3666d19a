// TaskMetrics: what /metrics reads. Durations land in the bucket whose
// bound is the first at or above them (Prometheus's `le`), outliers in
// +Inf; the newest checkpoint time wins whatever order saves end in; a
// method is named from the schema, and an unknown one gets one name.
#include <catch2/catch.hpp>

#include <thread>

#include "daemon/distributed/task_metrics.h"
#include "schemas/rpc.capnp.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;

size_t BucketOf(const LatencyHistogram::Snapshot& s) {
  for (size_t i = 0; i < s.buckets.size(); ++i) {
    if (s.buckets[i] > 0) return i;
  }
  return s.buckets.size();
}

TEST_CASE("a duration is counted in the first bucket whose bound holds it") {
  const auto& bounds = LatencyHistogram::kBounds;
  struct Case {
    std::chrono::nanoseconds d;
    size_t bucket;
  };
  for (const Case& c : std::vector<Case>{{0ns, 0},
                                         {100us, 0},       // on a bound: that bucket
                                         {101us, 1},
                                         {1ms, 3},
                                         {30s, bounds.size() - 1},
                                         {31s, bounds.size()},  // +Inf
                                         {-5ms, 0}}) {         // a clock step back
    LatencyHistogram h;
    h.Observe(c.d);
    const auto s = h.Read();
    INFO(c.d.count() << " ns");
    CHECK(BucketOf(s) == c.bucket);
    CHECK(s.count == 1);
    CHECK(s.sum_seconds >= 0);
  }
  LatencyHistogram h;
  h.Observe(2ms);
  h.Observe(3ms);
  CHECK(h.Read().sum_seconds == Approx(0.005));
}

TEST_CASE("steps are counted by code from many threads") {
  StepCounts counts;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&counts, t] {
      for (int i = 0; i < 1000; ++i) counts.Record(t == 0 ? Code::kUnavailable : Code::kOk, 1ms);
    });
  }
  for (auto& t : threads) t.join();
  const auto by_code = counts.outcomes.Read();
  CHECK(by_code[static_cast<int>(Code::kOk)] == 3000);
  CHECK(by_code[static_cast<int>(Code::kUnavailable)] == 1000);
  CHECK(counts.seconds.Read().count == 4000);
}

TEST_CASE("the last checkpoint time is the newest, whatever order saves end in") {
  TaskMetrics m;
  CHECK_FALSE(m.last_checkpoint().has_value());
  const auto t0 = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
  m.CheckpointSaved(t0 + 10s);
  m.CheckpointSaved(t0);  // an older save that finished later
  CHECK(m.checkpoints_saved() == 2);
  REQUIRE(m.last_checkpoint().has_value());
  CHECK(*m.last_checkpoint() == t0 + 10s);
}

TEST_CASE("failed calls are named from the schema; unknown methods share one name") {
  const auto session = capnp::Schema::from<proto::Session>();
  CHECK(RpcMethodName(session, 1) == "Session.run");
  CHECK(RpcMethodName(session, 999) == "Session.unknown");
  TaskMetrics m;
  m.RpcFailed("Session.run", Code::kNotFound);
  m.RpcFailed("Session.run", Code::kNotFound);
  m.RpcFailed("Gate.login", Code::kUnauthenticated);
  const auto failures = m.RpcFailures();
  CHECK(failures.size() == 2);
  CHECK(failures.at({"Session.run", Code::kNotFound}) == 2);
  CHECK(failures.at({"Gate.login", Code::kUnauthenticated}) == 1);
}

}  // namespace
}  // namespace tfd
