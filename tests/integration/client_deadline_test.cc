// A client's deadline covers resolving, connecting and logging in: against
// a listener that accepts and never answers (a hung task, or one out of file
// descriptors whose backlog holds the connection), `tfctl status --timeout 2`
// and Client::Connect(2 s) end with an error instead of waiting forever, and
// tfctl's commands that ask a whole cluster ask its tasks at once.
#include <memory>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "daemon/client/client.h"
#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/log_lines.h"
#include "tests/integration/raw_socket.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Contains;
using testing::OneLine;
using testing::RunProcess;
using testing::SilentListener;
using testing::TfctlBinary;

TEST_CASE("tfctl status --timeout 2 against a task that accepts and never answers ends with an "
          "error") {
  SilentListener deaf;
  const std::string spec = "{\"worker\": [\"" + deaf.address() + "\"]}";
  const auto start = std::chrono::steady_clock::now();
  auto run = RunProcess({TfctlBinary(), "status", "--cluster", spec, "--timeout", "2"}, 60s);
  const auto took = std::chrono::steady_clock::now() - start;
  INFO(OneLine(run.status().ToString()));
  REQUIRE(run.ok());
  INFO("stdout: " << OneLine(run->out) << "; stderr: " << OneLine(run->err));
  CHECK(took < 15s);
  CHECK(run->exit_status == 1);
  CHECK(Contains(run->out, "down"));
}

// Six hung tasks asked one after another took six --timeouts; asked at
// once (cli/cluster_probe.h), about one. The bound is four, wide enough
// for a loaded machine and below what asking in turn takes.
TEST_CASE(
    "tfctl status and vars list --cluster ask every task at once: six hung tasks cost "
    "about one --timeout") {
  std::vector<std::unique_ptr<SilentListener>> deaf;
  std::string addresses;
  for (int i = 0; i < 6; ++i) {
    deaf.push_back(std::make_unique<SilentListener>());
    addresses += (i == 0 ? "\"" : ", \"") + deaf.back()->address() + "\"";
  }
  const std::string spec = "{\"ps\": [" + addresses + "]}";
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"status"}, std::vector<std::string>{"vars", "list"}}) {
    std::vector<std::string> args = {TfctlBinary()};
    args.insert(args.end(), command.begin(), command.end());
    args.insert(args.end(), {"--cluster", spec, "--timeout", "3"});
    const auto start = std::chrono::steady_clock::now();
    auto run = RunProcess(args, 120s);
    const auto took = std::chrono::steady_clock::now() - start;
    REQUIRE(run.ok());
    INFO(command[0] << " stdout: " << OneLine(run->out) << "; stderr: " << OneLine(run->err));
    CHECK(took < 12s);
    CHECK(run->exit_status == 1);
    for (int i = 0; i < 6; ++i) {  // each named, in the spec's order
      const std::string task = "/job:ps/replica:0/task:" + std::to_string(i);
      const size_t at = run->err.find(task + (command[0] == "status" ? ": " : " ("));
      CHECK(at != std::string::npos);
      if (i > 0) CHECK(at > run->err.find("/job:ps/replica:0/task:" + std::to_string(i - 1)));
    }
  }
}

TEST_CASE("Client::Connect with a 2 s timeout against a listener that never answers returns "
          "UNAVAILABLE") {
  SilentListener deaf;
  auto io = kj::setupAsyncIo();
  for (int i = 0; i < 2; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto client = Client::Connect(io, deaf.address(), "", 2s);
    const auto took = std::chrono::steady_clock::now() - start;
    INFO(client.status().ToString());
    CHECK(client.status().code() == Code::kUnavailable);
    CHECK(Contains(client.status().message(), "logging in"));
    CHECK(took < 15s);
  }
}

TEST_CASE("a client that spent a while away from its event loop still gets its whole timeout") {
  // The loop's clock moves only when the loop runs: a deadline taken from it
  // after the caller did something else for a while (waited for a child, as
  // the training tests do) was already past, and Connect failed at once.
  testing::LocalCluster cluster({{"worker", 1}});
  REQUIRE(cluster.Start("worker", 0).ok());
  auto first = cluster.Connect("worker", 0, 10s);
  REQUIRE(first.ok());
  std::this_thread::sleep_for(3s);  // nothing runs the loop meanwhile
  auto again = cluster.Connect("worker", 0, 2s);
  INFO(again.status().ToString());
  CHECK(again.ok());
  std::this_thread::sleep_for(3s);
  auto status = (*first)->GetStatus(2s);
  INFO(status.status().ToString());
  CHECK(status.ok());
}

}  // namespace
}  // namespace tfd
