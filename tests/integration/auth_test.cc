// A task started with --auth-token-file: a client without the token, or
// with a wrong one, gets UNAUTHENTICATED at once (through the C++ Client and
// through tfctl), the right token gets the services, and the tasks log in to
// each other with it.
#include <catch2/catch.hpp>

#include "common/graph_io.h"
#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/log_lines.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/temp_dir.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Contains;
using testing::Const;
using testing::LocalCluster;
using testing::Node;
using testing::OneLine;
using testing::RunProcess;
using testing::TempDir;
using testing::TfctlBinary;

TEST_CASE("a task with --auth-token-file refuses a missing or wrong token with UNAUTHENTICATED") {
  TempDir dir;
  const std::string token_file = dir.Write("token", "s3cret\n");
  const std::string wrong_file = dir.Write("wrong", "guess\n");
  LocalCluster cluster({{"worker", 2}}, {"--auth-token-file", token_file});
  REQUIRE(cluster.Spawn("worker", 0).ok());
  REQUIRE(cluster.Spawn("worker", 1).ok());
  const std::string w0 = cluster.Address("worker", 0);
  GraphDef g;
  g.nodes = {Const("x", 2.0f, "/job:worker/task:1"), Node("y", "Add", {"x", "x"}, "/job:worker/task:0")};

  // The right token: the services, and a run across both tasks, so the
  // tasks present the token to each other too.
  auto client = Client::Connect(cluster.io(), w0, "s3cret", 20s);
  INFO(client.status().ToString() << "; log: " << OneLine(cluster.Log("worker", 0)));
  REQUIRE(client.ok());
  REQUIRE((*client)->WaitCluster(20s).status().ok());
  REQUIRE((*client)->CreateSession(g).ok());
  auto out = (*client)->Run({}, {"y"}, {}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->fetches[0].scalar<float>() == 4.0f);

  // No token, a wrong one, the right one with more after it: refused at
  // once, not retried until the connect timeout.
  for (const std::string token : {"", "guess", "s3cret-and-more"}) {
    INFO("token '" << token << "'");
    const auto start = std::chrono::steady_clock::now();
    auto refused = Client::Connect(cluster.io(), w0, token, 10s);
    CHECK(refused.status().code() == Code::kUnauthenticated);
    CHECK(Contains(refused.status().message(), "/job:worker/replica:0/task:0"));
    CHECK(std::chrono::steady_clock::now() - start < 5s);
    CHECK(Contains(refused.status().message(), token.empty() ? "none was given" : "wrong token"));
  }
  CHECK(Contains(cluster.Log("worker", 0), "refused a login"));

  // tfctl: exit status 1 and `error: UNAUTHENTICATED` on stderr without the
  // token or with a wrong one; the result with the right one.
  const std::string graph_file = dir.path() + "/graph.txt";
  REQUIRE(SaveGraph(g, graph_file, GraphFormat::kText).ok());
  const std::vector<std::string> submit = {TfctlBinary(), "submit", graph_file, "--target", w0,
                                           "--fetch", "y", "--timeout", "10"};
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, std::vector<std::string>{"--token-file", wrong_file}}) {
    auto args = submit;
    args.insert(args.end(), extra.begin(), extra.end());
    auto run = RunProcess(args, 60s);
    INFO(OneLine(run.status().ToString()));
    REQUIRE(run.ok());
    INFO("stderr: " << OneLine(run->err));
    CHECK(run->exit_status == 1);
    CHECK(Contains(run->err, "error: UNAUTHENTICATED"));
    CHECK(Contains(run->err, extra.empty() ? "none was given" : "wrong token"));
    CHECK(run->out.empty());
  }
  auto args = submit;
  args.insert(args.end(), {"--token-file", token_file});
  auto run = RunProcess(args, 60s);
  REQUIRE(run.ok());
  INFO("stderr: " << OneLine(run->err));
  CHECK(run->exit_status == 0);
  CHECK(Contains(run->out, "4"));
}

TEST_CASE("tfctl status reports the UNAUTHENTICATED a running task gave, not 'unreachable'") {
  TempDir dir;
  const std::string token_file = dir.Write("token", "s3cret\n");
  const std::string wrong_file = dir.Write("wrong", "guess\n");
  LocalCluster cluster({{"worker", 1}}, {"--auth-token-file", token_file});
  REQUIRE(cluster.Spawn("worker", 0).ok());
  REQUIRE(Client::Connect(cluster.io(), cluster.Address("worker", 0), "s3cret", 20s).ok());
  const std::vector<std::string> status = {TfctlBinary(), "status", "--cluster",
                                           cluster.spec().ToJson(), "--timeout", "5"};

  auto wrong = status;
  wrong.insert(wrong.end(), {"--token-file", wrong_file});
  auto human = RunProcess(wrong, 60s);
  REQUIRE(human.ok());
  INFO("stdout: " << OneLine(human->out) << " stderr: " << OneLine(human->err));
  CHECK(human->exit_status == 1);
  CHECK(Contains(human->out, "refused"));
  CHECK(Contains(human->err, "/job:worker/replica:0/task:0: UNAUTHENTICATED: wrong token"));
  CHECK_FALSE(Contains(human->out + human->err, "unreachable"));

  auto json_args = wrong;
  json_args.insert(json_args.end(), {"--output", "json"});
  auto json = RunProcess(json_args, 60s);
  REQUIRE(json.ok());
  INFO("stdout: " << OneLine(json->out));
  CHECK(json->exit_status == 1);
  CHECK(Contains(json->out, "\"state\": \"refused\""));
  CHECK(Contains(json->out, "\"error\": \"UNAUTHENTICATED: wrong token"));

  auto right = status;
  right.insert(right.end(), {"--token-file", token_file});
  auto up = RunProcess(right, 60s);
  REQUIRE(up.ok());
  INFO("stdout: " << OneLine(up->out) << " stderr: " << OneLine(up->err));
  CHECK(up->exit_status == 0);
  CHECK(Contains(up->out, " up "));
}

}  // namespace
}  // namespace tfd
