// A task started with --auth-token-file: a client without the token, or
// with a wrong one, gets UNAUTHENTICATED (through the C++ Client and through
// tfctl), the right token gets the services, and the tasks log in to each
// other with it. A token file that is blank, short or readable by every
// user stops tfd and tfctl alike before they connect.
#include <catch2/catch.hpp>

#include <filesystem>

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
using testing::kToken;
using testing::kWrongToken;
using testing::OneLine;
using testing::RunProcess;
using testing::TempDir;
using testing::TfctlBinary;

TEST_CASE("a task with --auth-token-file refuses a missing or wrong token with UNAUTHENTICATED") {
  TempDir dir;
  const std::string token_file = dir.WriteSecret("token", kToken);
  const std::string wrong_file = dir.WriteSecret("wrong", kWrongToken);
  LocalCluster cluster({{"worker", 2}}, {"--auth-token-file", token_file});
  REQUIRE(cluster.Spawn("worker", 0).ok());
  REQUIRE(cluster.Spawn("worker", 1).ok());
  const std::string w0 = cluster.Address("worker", 0);
  GraphDef g;
  g.nodes = {Const("x", 2.0f, "/job:worker/task:1"), Node("y", "Add", {"x", "x"}, "/job:worker/task:0")};

  // The right token: the services, and a run across both tasks, so the
  // tasks present the token to each other too.
  auto client = Client::Connect(cluster.io(), w0, kToken, 20s);
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
  for (const std::string& token :
       {std::string(), std::string("guess"), std::string(kToken) + "-and-more"}) {
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
  const std::string token_file = dir.WriteSecret("token", kToken);
  const std::string wrong_file = dir.WriteSecret("wrong", kWrongToken);
  LocalCluster cluster({{"worker", 1}}, {"--auth-token-file", token_file});
  REQUIRE(cluster.Spawn("worker", 0).ok());
  REQUIRE(Client::Connect(cluster.io(), cluster.Address("worker", 0), kToken, 20s).ok());
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

// A peer that refuses the master's login will not answer however long the
// master waits: waitCluster fails at once with the refusal, and tfctl wait
// exits 1 for it, not 3 as at a deadline.
TEST_CASE("waitCluster fails at once with UNAUTHENTICATED when a task refuses the master's token") {
  TempDir dir;
  const std::string token_file = dir.WriteSecret("token", kToken);
  const std::string other_file = dir.WriteSecret("other", kWrongToken);
  LocalCluster cluster({{"worker", 2}});
  REQUIRE(cluster.Spawn("worker", 0, {"--auth-token-file", token_file}).ok());
  REQUIRE(cluster.Spawn("worker", 1, {"--auth-token-file", other_file}).ok());
  const std::string w0 = cluster.Address("worker", 0);
  auto client = Client::Connect(cluster.io(), w0, kToken, 20s);
  INFO(client.status().ToString());
  REQUIRE(client.ok());
  for (int attempt = 1; attempt <= 2; ++attempt) {
    INFO("attempt " << attempt);
    auto waited = (*client)->WaitCluster(60s);
    INFO(waited.status().ToString());
    CHECK(waited.status().code() == Code::kUnauthenticated);
    CHECK(Contains(waited.status().message(),
                   "cluster not ready: /job:worker/replica:0/task:1: wrong token"));
  }
  auto wait = RunProcess({TfctlBinary(), "wait", "cluster", "--target", w0, "--token-file",
                          token_file, "--timeout", "60"},
                         90s);
  REQUIRE(wait.ok());
  INFO("stderr: " << OneLine(wait->err));
  CHECK(wait->exit_status == 1);
  CHECK(Contains(wait->err,
                 "error: UNAUTHENTICATED: cluster not ready: /job:worker/replica:0/task:1"));
}

TEST_CASE("tfd and tfctl refuse a blank, short or world-readable token file, saying how to fix "
          "it") {
  TempDir dir;
  const std::string blank = dir.WriteSecret("blank", "   ");  // once taken as a 3-byte token
  const std::string short_one = dir.WriteSecret("short", "s3cret");
  const std::string open = dir.Write("open", std::string(kToken) + "\n");
  std::filesystem::permissions(open, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::owner_write |
                                         std::filesystem::perms::others_read);
  const std::vector<std::pair<std::string, std::string>> files = {
      {blank, "holds no token"},
      {short_one, "holds a token of 6 base64 characters"},
      {open, "may be read by every user (mode 0604); keep it to its owner: chmod 600 " + open},
  };
  for (const auto& [file, why] : files) {
    INFO(file);
    auto tfd = RunProcess({testing::TfdBinary(), "--cluster", R"({"worker": ["127.0.0.1:1"]})",
                           "--job", "worker", "--task", "0", "--auth-token-file", file},
                          60s);
    REQUIRE(tfd.ok());
    INFO("tfd: " << OneLine(tfd->err));
    CHECK(tfd->exit_status == 2);
    CHECK(Contains(tfd->err, "error: INVALID_ARGUMENT: --auth-token-file: token file '" + file + "'"));
    CHECK(Contains(tfd->err, why));

    auto tfctl = RunProcess({TfctlBinary(), "status", "--cluster", R"({"worker": ["127.0.0.1:1"]})",
                             "--token-file", file, "--timeout", "5"},
                            60s);
    REQUIRE(tfctl.ok());
    INFO("tfctl: " << OneLine(tfctl->err));
    CHECK(tfctl->exit_status == 1);
    CHECK(Contains(tfctl->err, "error: INVALID_ARGUMENT: token file '" + file + "'"));
    CHECK(Contains(tfctl->err, why));
  }
}

}  // namespace
}  // namespace tfd
