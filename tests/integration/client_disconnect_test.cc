// A client that vanishes mid-step (its process killed, so its connection
// drops without a goodbye): the step is cancelled on every task it ran on
// and the session and its registered partitions are released — TensorFlow
// leaked them. The step here is blocked on a dequeue from an empty queue on
// the ps; had it lived on, it would take the next element anyone enqueues.
#include <catch2/catch.hpp>
#include <functional>
#include <thread>

#include "common/graph_io.h"
#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/temp_dir.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::Const;
using testing::LocalCluster;
using testing::Node;
using testing::OneLine;
using testing::QueueGraph;
using testing::TempDir;
using testing::TfctlBinary;

struct Counts {
  uint32_t sessions = 0, master_graphs = 0, ps_graphs = 0;
  bool operator==(const Counts&) const = default;
};

StatusOr<Counts> Read(Client& master, Client& ps) {
  TFD_ASSIGN_OR_RETURN(TaskStatusInfo m, master.GetStatus(5s));
  TFD_ASSIGN_OR_RETURN(TaskStatusInfo p, ps.GetStatus(5s));
  return Counts{m.sessions, m.registered_graphs, p.registered_graphs};
}

// Polls until `want` holds of both tasks' counts or `bound` passes. The
// last counts read, or the error that kept them from being read (a task
// that died is never mistaken for one whose counts went back).
StatusOr<Counts> PollUntil(Client& master, Client& ps, const std::function<bool(const Counts&)>& want,
                           std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (true) {
    auto counts = Read(master, ps);
    if ((counts.ok() && want(*counts)) || std::chrono::steady_clock::now() >= deadline) {
      return counts;
    }
    std::this_thread::sleep_for(50ms);
  }
}

std::string Describe(const StatusOr<Counts>& c) {
  if (!c.ok()) return "status unreadable: " + c.status().ToString();
  return "sessions " + std::to_string(c->sessions) + ", graphs on the master " +
         std::to_string(c->master_graphs) + ", on the ps " + std::to_string(c->ps_graphs);
}

TEST_CASE("a client killed mid-step: the step is cancelled on every task, its session released") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto master = cluster.Connect("worker", 0);
  auto ps = cluster.Connect("ps", 0);
  REQUIRE((master.ok() && ps.ok()));
  auto before = Read(**master, **ps);
  REQUIRE(before.ok());

  TempDir dir;
  const std::string graph_file = dir.path() + "/queue.txt";
  REQUIRE(SaveGraph(QueueGraph(), graph_file, GraphFormat::kText).ok());
  // Three clients in turn, each killed while its step is blocked: a task
  // that frees a partition while its step is still unwinding shows up by
  // the second or third.
  for (int round = 1; round <= 3; ++round) {
    INFO("round " << round);
    // A long step deadline: whatever ends the step below, it is not the deadline.
    auto client = ChildProcess::Spawn({TfctlBinary(), "submit", graph_file, "--target",
                                       cluster.Address("worker", 0), "--fetch", "taken",
                                       "--step-timeout", "120"});
    REQUIRE(client.ok());

    // The step is blocked: the session exists and both tasks hold its partition.
    const Counts blocked_counts{before->sessions + 1, before->master_graphs + 1,
                                before->ps_graphs + 1};
    auto blocked =
        PollUntil(**master, **ps, [&](const Counts& c) { return c == blocked_counts; }, 20s);
    INFO("while blocked: " << Describe(blocked)
                           << "; client stderr: " << OneLine((*client)->Stderr()));
    REQUIRE(blocked.ok());
    REQUIRE(*blocked == blocked_counts);
    REQUIRE(!(*client)->Wait(300ms).ok());  // still blocked, not failed

    (*client)->Kill();
    const auto killed = std::chrono::steady_clock::now();
    // Both tasks outlive the client, and let go of its session and partitions.
    auto after = PollUntil(**master, **ps, [&](const Counts& c) { return c == *before; }, 10s);
    INFO("after the kill: " << Describe(after)
                            << "; master log: " << OneLine(cluster.Log("worker", 0)));
    REQUIRE(after.ok());
    CHECK(*after == *before);
    CHECK(std::chrono::steady_clock::now() - killed < 10s);
  }

  // The dead step's dequeue is gone: another client's element stays in the
  // queue until that client takes it itself.
  auto other = cluster.Connect("worker", 0);
  REQUIRE(other.ok());
  REQUIRE((*other)->CreateSession(QueueGraph(), 5s).ok());
  auto put = (*other)->Run({}, {}, {"put"}, {});
  INFO(put.status().ToString());
  REQUIRE(put.ok());
  auto size = (*other)->Run({}, {"size"}, {}, {});
  REQUIRE(size.ok());
  CHECK(size->fetches[0].scalar<int32_t>() == 1);
  auto taken = (*other)->Run({}, {"taken"}, {}, {});
  INFO(taken.status().ToString());
  REQUIRE(taken.ok());
  CHECK(taken->fetches[0].scalar<float>() == 42.0f);
}

}  // namespace
}  // namespace tfd
