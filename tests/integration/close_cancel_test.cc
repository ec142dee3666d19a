// TF1's Session.close: closing a session cancels its steps still running.
// A step blocked on a dequeue from an empty queue on the ps ends CANCELLED,
// its partition on the ps goes (had it lived on, it would take the next
// element anyone enqueues), and another session's step blocked on the same
// queue is untouched.
//
// A Client is used on its own event loop's thread only, and Run blocks that
// thread: each blocked step runs on a thread of its own, and the test sends
// the close through that thread's loop (kj::Executor), as the Python binding
// does for a close on another thread.
#include <catch2/catch.hpp>
#include <signal.h>

#include <functional>
#include <future>
#include <thread>

#include "daemon/rpc/kj_status.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Const;
using testing::LocalCluster;
using testing::Node;
using testing::QueueGraph;

// One client on a thread of its own, whose step fetches `taken` and blocks
// until an element comes, the step's deadline, or its session's close.
class BlockedStep {
 public:
  BlockedStep(const std::string& address, std::chrono::milliseconds step_timeout, bool then_more)
      : thread_([=, this] { Body(address, step_timeout, then_more); }) {
    ready_.get_future().wait();
  }
  // A test that failed midway does not wait for the step's deadline.
  ~BlockedStep() {
    if (thread_.joinable() && executor_.get() != nullptr && executor_->isLive()) (void)Close();
    Join();
  }

  const Status& setup() const { return setup_; }
  // Closes the session on the step's loop while its run waits there.
  Status Close() {
    try {
      executor_->executeSync([this] {
        return client_ == nullptr ? kj::Promise<void>(kj::READY_NOW) : client_->SendClose();
      });
      return OkStatus();
    } catch (const kj::Exception& e) {
      return StatusFromKj(e);
    }
  }
  void Join() {
    if (release_.get() != nullptr) release_->fulfill();
    if (thread_.joinable()) thread_.join();
  }
  // Once the run has answered (then_more: also what follows), or joined:
  // the blocked run's answer, and (with then_more) a second
  // run in the same session and a second CloseSession.
  const StatusOr<Client::RunOutput>& run() const { return run_; }
  const Status& run_again() const { return run_again_; }
  const Status& close_again() const { return close_again_; }

 private:
  void Body(const std::string& address, std::chrono::milliseconds step_timeout, bool then_more) {
    auto io = kj::setupAsyncIo();
    auto client = Client::Connect(io, address, "", 10s);
    setup_ = client.status();
    if (setup_.ok()) setup_ = (*client)->CreateSession(QueueGraph(), step_timeout);
    if (!setup_.ok()) return ready_.set_value();
    executor_ = kj::getCurrentThreadExecutor().addRef();
    client_ = client->get();
    auto release = kj::newPromiseAndCrossThreadFulfiller<void>();
    release_ = kj::mv(release.fulfiller);
    ready_.set_value();
    run_ = (*client)->Run({}, {"taken"}, {}, {});
    if (then_more) {
      run_again_ = (*client)->Run({}, {"taken"}, {}, {}).status();
      close_again_ = (*client)->CloseSession();
    }
    // The loop serves Close until Join, however soon the step ended.
    release.promise.wait(io.waitScope);
    client_ = nullptr;  // on this loop, as Close's use of it
  }

  std::promise<void> ready_;
  Status setup_;
  kj::Own<const kj::Executor> executor_;
  kj::Own<kj::CrossThreadPromiseFulfiller<void>> release_;
  Client* client_ = nullptr;
  StatusOr<Client::RunOutput> run_ = Status();
  Status run_again_, close_again_;
  std::thread thread_;  // last: starts once the rest is made
};

// Registered partitions on the ps: one per session whose step reached it.
uint32_t PsGraphs(Client& ps) {
  auto s = ps.GetStatus(5s);
  return s.ok() ? s->registered_graphs : ~0u;
}

// Polls until the ps holds `want` partitions, or 20 s pass (a hang guard).
bool PsGraphsReach(Client& ps, uint32_t want) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (PsGraphs(ps) != want) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// A new session puts one element and takes one: the queue still works, and
// no dequeue of a cancelled step is left to take the element first.
void QueueStillWorks(LocalCluster& cluster) {
  auto other = cluster.Connect("worker", 0);
  REQUIRE(other.ok());
  REQUIRE((*other)->CreateSession(QueueGraph(), 30s).ok());
  auto put = (*other)->Run({}, {}, {"put"}, {});
  INFO(put.status().ToString());
  REQUIRE(put.ok());
  auto taken = (*other)->Run({}, {"taken"}, {}, {});
  INFO(taken.status().ToString());
  REQUIRE(taken.ok());
  CHECK(taken->fetches[0].scalar<float>() == 42.0f);
}

TEST_CASE("closing a session cancels its blocked step on every task, and no other session's") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto ps = cluster.Connect("ps", 0);
  REQUIRE(ps.ok());
  const std::string address = cluster.Address("worker", 0);

  // Long step deadlines: whatever ends these steps, it is not a deadline.
  BlockedStep closed(address, 120s, /*then_more=*/true);
  REQUIRE(closed.setup().ok());
  REQUIRE(PsGraphsReach(**ps, 1));  // its step reached the queue first
  BlockedStep other(address, 120s, /*then_more=*/false);
  REQUIRE(other.setup().ok());
  REQUIRE(PsGraphsReach(**ps, 2));

  // Close answers once the step has ended, and its partition on the ps is
  // gone with it.
  REQUIRE(closed.Close().ok());
  CHECK(PsGraphsReach(**ps, 1));
  closed.Join();
  INFO(closed.run().status().ToString());
  CHECK(closed.run().status().code() == Code::kCancelled);
  CHECK(closed.run().status().message().find("session was closed") != std::string::npos);
  // A closed session runs nothing, as before; closing it again is fine.
  CHECK(closed.run_again().code() == Code::kNotFound);
  CHECK(closed.close_again().ok());

  // The other session's step is still waiting: the one element a new
  // session puts goes to it (the cancelled step's dequeue, queued before
  // it, would have taken it), and then the queue works as before.
  auto put = cluster.Connect("worker", 0);
  REQUIRE(put.ok());
  REQUIRE((*put)->CreateSession(QueueGraph(), 30s).ok());
  REQUIRE((*put)->Run({}, {}, {"put"}, {}).ok());
  other.Join();
  INFO(other.run().status().ToString());
  REQUIRE(other.run().ok());
  CHECK(other.run()->fetches[0].scalar<float>() == 42.0f);
  QueueStillWorks(cluster);
}

TEST_CASE("close while the step is being aborted for its deadline answers, and twice") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto ps = cluster.Connect("ps", 0);
  REQUIRE(ps.ok());

  BlockedStep step(cluster.Address("worker", 0), 1s, /*then_more=*/false);
  REQUIRE(step.setup().ok());
  REQUIRE(PsGraphsReach(**ps, 1));
  // The ps answers nothing now: the step's abort at its deadline waits for
  // it, and so would a close that waited for every task without a bound.
  const pid_t ps_pid = cluster.Pid("ps", 0);
  REQUIRE(kill(ps_pid, SIGSTOP) == 0);
  // Past the deadline, most likely inside the half second its abort waits
  // for the stopped ps (either order is a valid outcome, asserted below).
  std::this_thread::sleep_for(1200ms);
  Status first = step.Close();
  Status second = step.Close();
  REQUIRE(kill(ps_pid, SIGCONT) == 0);
  INFO("first close: " << first.ToString() << "; second: " << second.ToString());
  CHECK(first.ok());
  CHECK(second.ok());
  step.Join();
  INFO(step.run().status().ToString());
  const Code code = step.run().status().code();
  CHECK((code == Code::kDeadlineExceeded || code == Code::kCancelled));
  QueueStillWorks(cluster);
}

}  // namespace
}  // namespace tfd
