// Steps of SgdQueueGraph (graph_helpers.h) for the tests that compare where
// and how a worker runs them: training steps through one client (the
// variable w after each, to compare bit for bit), a step that waits in the
// graph's queue from a thread of its own, and the ps killed under training.
//
//   const auto values = testing::SgdSteps(client, 30);
//   testing::QueueTaker taker(address, 30s);
//   ... taker.result().wait_for(...) ...
//   testing::KillPsAndTrainAgain(cluster, client, 2);
//
// Thread-safety: the client's thread.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "daemon/client/client.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"

namespace tfd::testing {

// A new session on `client` (worker:0's master), "init", then `steps` runs
// of "apply", each fetching w.
inline std::vector<std::vector<float>> SgdSteps(Client& client, int steps) {
  using namespace std::chrono_literals;
  REQUIRE(client.CreateSession(SgdQueueGraph(), 20s).ok());
  REQUIRE(client.Run({}, {}, {"init"}, {}).ok());
  std::vector<std::vector<float>> values;
  for (int i = 0; i < steps; ++i) {
    auto out = client.Run({}, {"apply"}, {}, {.timeout = 10s});
    INFO("step " << i << ": " << out.status().ToString());
    REQUIRE(out.ok());
    const Tensor& w = out->fetches[0];
    REQUIRE(w.shape().num_elements() == 16);
    values.emplace_back(w.data<float>(), w.data<float>() + 16);
  }
  return values;
}

// `rounds` times: kills ps:0 of `cluster`, checks that a step through
// `client` fails UNAVAILABLE (or ABORTED) naming the ps, restarts the ps and
// trains three steps in a new session (a restarted ps starts empty).
inline void KillPsAndTrainAgain(LocalCluster& cluster, Client& client, int rounds) {
  using namespace std::chrono_literals;
  for (int round = 0; round < rounds; ++round) {
    INFO("round " << round);
    cluster.Kill("ps", 0);
    auto failed = client.Run({}, {"apply"}, {}, {.timeout = 10s});
    INFO(failed.status().ToString());
    REQUIRE(!failed.ok());
    CHECK((failed.status().code() == Code::kUnavailable ||
           failed.status().code() == Code::kAborted));
    CHECK(failed.status().message().find("/job:ps") != std::string::npos);
    REQUIRE(cluster.Start("ps", 0).ok());
    const auto values = SgdSteps(client, 3);
    CHECK(values.front() != values.back());
  }
}

// Runs "taken" through the master at `address` in a session of its own,
// from a thread and event loop of its own: the step waits in the ps's queue
// until something is put there. The thread is joined when this goes.
class QueueTaker {
 public:
  QueueTaker(std::string address, std::chrono::milliseconds timeout)
      : result_(promise_.get_future()),
        thread_([this, address = std::move(address), timeout] { Take(address, timeout); }) {}

  // The value taken, or why the step failed.
  std::future<StatusOr<float>>& result() { return result_; }

 private:
  void Take(const std::string& address, std::chrono::milliseconds timeout) {
    using namespace std::chrono_literals;
    auto io = kj::setupAsyncIo();
    auto client = Client::Connect(io, address, "", 10s);
    if (!client.ok()) return promise_.set_value(client.status());
    if (Status s = (*client)->CreateSession(SgdQueueGraph(), 20s); !s.ok()) {
      return promise_.set_value(s);
    }
    auto out = (*client)->Run({}, {"taken"}, {}, {.timeout = timeout});
    if (!out.ok()) return promise_.set_value(out.status());
    promise_.set_value(out->fetches[0].scalar<float>());
  }

  std::promise<StatusOr<float>> promise_;
  std::future<StatusOr<float>> result_;
  std::jthread thread_;  // last: joined before the promise goes
};

}  // namespace tfd::testing
