// Tasks started with --tls-cert/--tls-key/--tls-ca, with certificates the
// test makes with openssl (make_test_certs.sh): the right client certificate
// runs a step across ps and worker (so the tasks' connections to each other
// are TLS too) with the token as well; every wrong way in — no certificate,
// one from another CA, an expired one, plain text, silence — is refused with
// an error that names TLS on both sides, and the task goes on serving.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "common/graph_io.h"
#include "daemon/rpc/tls.h"
#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/log_lines.h"
#include "tests/integration/raw_socket.h"
#include "tests/integration/temp_dir.h"
#include "tests/integration/test_certs.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Contains;
using testing::Const;
using testing::LocalCluster;
using testing::Node;
using testing::OneLine;
using testing::RawSocket;
using testing::RunProcess;
using testing::Certs;
using testing::TempDir;
using testing::TfctlBinary;
using testing::WaitForLines;

GraphDef AcrossTasks() {
  GraphDef g;
  g.nodes = {Const("x", 2.0f, "/job:ps/task:0"), Node("y", "Add", {"x", "x"}, "/job:worker/task:0")};
  return g;
}

TEST_CASE("with TLS and a token, the right certificate runs a step across tasks") {
  Certs certs;
  const std::string token_file = certs.dir.WriteSecret("token", testing::kToken);
  LocalCluster cluster({{"ps", 1}, {"worker", 1}}, {"--auth-token-file", token_file});
  REQUIRE(cluster.Spawn("ps", 0, certs.Flags("ps-0")).ok());
  REQUIRE(cluster.Spawn("worker", 0, certs.Flags("worker-0")).ok());
  const std::string w0 = cluster.Address("worker", 0);

  // tfctl with the client's certificate and the token: the step needs the
  // worker to log in to the ps, over TLS with the server certificate.
  const std::string graph_file = certs.dir.path() + "/graph.txt";
  REQUIRE(SaveGraph(AcrossTasks(), graph_file, GraphFormat::kText).ok());
  std::vector<std::string> submit = {TfctlBinary(), "submit", graph_file, "--target", w0,
                                     "--fetch", "y", "--timeout", "20", "--token-file", token_file};
  const auto client_flags = certs.Flags("client");
  submit.insert(submit.end(), client_flags.begin(), client_flags.end());
  auto run = RunProcess(submit, 60s);
  REQUIRE(run.ok());
  INFO("stderr: " << OneLine(run->err) << "; worker log: " << OneLine(cluster.Log("worker", 0)));
  CHECK(run->exit_status == 0);
  CHECK(Contains(run->out, "4"));
  CHECK(Contains(cluster.Log("worker", 0), "mutual TLS"));

  // The same through the client library, by the name "localhost" (the
  // certificate's other subjectAltName).
  const std::string port = w0.substr(w0.rfind(':'));
  auto by_name =
      Client::Connect(cluster.io(), "localhost" + port, testing::kToken, 20s, certs.Load("client"));
  INFO(by_name.status().ToString());
  CHECK(by_name.ok());

  // The right certificate with a wrong token: UNAUTHENTICATED as without
  // TLS.
  auto wrong = Client::Connect(cluster.io(), w0, "guess", 10s, certs.Load("client"));
  CHECK(wrong.status().code() == Code::kUnauthenticated);
  CHECK(Contains(wrong.status().message(), "wrong token"));
}

TEST_CASE("a task with TLS refuses clients without the cluster's certificate, and goes on") {
  Certs certs;
  // Each kind of refusal below goes to a task of its own, so that its log
  // line is not among those the task's rate-limited log folds into "... and
  // N more like it" when refusals come in one window (a loaded host makes
  // one refusal log several lines).
  LocalCluster cluster({{"worker", 3}}, {"--login-timeout", "2"});
  for (int i = 0; i < 3; ++i) {
    REQUIRE(cluster.Spawn("worker", i, certs.Flags("worker-" + std::to_string(i))).ok());
  }
  const std::string w0 = cluster.Address("worker", 0);
  const std::string w1 = cluster.Address("worker", 1);
  auto log = [&]() { return cluster.Log("worker", 0); };
  auto log1 = [&]() { return cluster.Log("worker", 1); };
  // Up, and serving the right certificate.
  REQUIRE(Client::Connect(cluster.io(), w0, "", 20s, certs.Load("client")).ok());

  // A certificate from another CA, and an expired one from the right CA:
  // UNAUTHENTICATED at once (not retried until the timeout), naming TLS
  // and what was wrong; the task logs the refusal.
  for (const auto& [name, task, client_says, task_says] :
       {std::tuple{"other", 0, "unknown ca", "certificate verify failed"},
        std::tuple{"expired", 2, "certificate expired", "certificate verify failed"}}) {
    INFO(name);
    const std::string target = cluster.Address("worker", task);
    auto task_log = [&, task = task]() { return cluster.Log("worker", task); };
    const size_t before = testing::LinesWith(task_log(), "TLS with the client failed").size();
    auto refused = Client::Connect(cluster.io(), target, "", 10s, certs.Load(name));
    INFO(refused.status().ToString());
    CHECK(refused.status().code() == Code::kUnauthenticated);
    CHECK(Contains(refused.status().message(), "TLS with " + target + " failed"));
    CHECK(Contains(refused.status().message(), client_says));
    auto lines = WaitForLines(task_log, "TLS with the client failed", before + 1, 10s);
    REQUIRE(lines.size() > before);
    CHECK(Contains(lines.back(), task_says));
  }

  // A TLS client with no certificate at all (openssl's own client).
  REQUIRE(Client::Connect(cluster.io(), w1, "", 20s, certs.Load("client")).ok());
  auto no_cert = RunProcess({"openssl", "s_client", "-connect", w1, "-CAfile", certs.File("ca.crt"),
                             "-verify_return_error", "-ign_eof"},
                            30s);
  REQUIRE(no_cert.ok());
  INFO("s_client: " << OneLine(no_cert->err));
  CHECK(no_cert->exit_status != 0);
  CHECK(Contains(no_cert->err, "certificate required"));
  const auto no_cert_lines = WaitForLines(log1, "peer did not return a certificate", 1, 10s);
  INFO("log: " << OneLine(log1()));
  CHECK(no_cert_lines.size() == 1);

  // tfctl trusting another CA refuses the task's certificate, saying what
  // the certificate must hold.
  std::vector<std::string> status = {TfctlBinary(), "status", "--cluster", cluster.spec().ToJson(),
                                     "--timeout", "5"};
  const auto other_ca = certs.Flags("other", "other-ca");
  status.insert(status.end(), other_ca.begin(), other_ca.end());
  auto distrust = RunProcess(status, 60s);
  REQUIRE(distrust.ok());
  INFO("stderr: " << OneLine(distrust->err));
  CHECK(distrust->exit_status == 1);
  CHECK(Contains(distrust->err, "UNAUTHENTICATED: TLS with " + w0 +
                                    " failed: error:0A000086:SSL routines::certificate verify failed"));
  CHECK(Contains(distrust->err, "subjectAltName"));

  // A plain-text client: the task drops it at its first bytes and says why;
  // the client is told TLS may be what it lacks.
  auto plain = Client::Connect(cluster.io(), w0, "", 3s);
  CHECK(plain.status().code() == Code::kUnavailable);
  CHECK(Contains(plain.status().message(), "--tls-cert"));
  CHECK(!WaitForLines(log, "did not start a TLS handshake", 1, 10s).empty());

  // A peer that connects and says nothing holds its slot until the login
  // deadline, which covers the handshake.
  auto silent = RawSocket::Connect(w0, 5s);
  REQUIRE(silent.ok());
  CHECK((*silent)->WaitClosed(20s));
  CHECK(WaitForLines(log, "no TLS handshake and login within 2 s", 1, 10s).size() == 1);

  // Still serving.
  auto after = Client::Connect(cluster.io(), w0, "", 20s, certs.Load("client"));
  INFO(after.status().ToString() << "; log: " << OneLine(log()));
  REQUIRE(after.ok());
  CHECK((*after)->GetStatus(10s).ok());
  CHECK(cluster.Pid("worker", 0) > 0);
}

// tfctl start holds only the task's own certificate, with which a login is
// a peer task's: it sees the task answer by a handshake that the task's
// certificate passes, and does not wait out its --timeout for a login.
TEST_CASE("tfctl start starts a task with TLS flags and sees it answer") {
  Certs certs;
  LocalCluster addresses({{"worker", 1}});  // a spec on free ports; nothing spawned
  const std::string spec = addresses.spec().ToJson();
  const std::string run_dir = certs.dir.path() + "/run";
  std::vector<std::string> start = {TfctlBinary(), "start", "--cluster", spec,
                                    "--run-dir",   run_dir, "--tfd",     testing::TfdBinary(),
                                    "--timeout",   "30"};
  for (const std::string& flag : certs.Flags("worker-0")) start.push_back("--tfd-flag=" + flag);
  auto started = RunProcess(start, 60s);
  REQUIRE(started.ok());
  INFO("stdout: " << OneLine(started->out) << " stderr: " << OneLine(started->err));
  CHECK(started->exit_status == 0);
  CHECK(Contains(started->out, "started /job:worker/replica:0/task:0 pid "));
  auto client = Client::Connect(addresses.io(), addresses.Address("worker", 0), "", 20s,
                                certs.Load("client"));
  INFO(client.status().ToString());
  CHECK(client.ok());
  auto stopped = RunProcess({TfctlBinary(), "stop", "--cluster", spec, "--run-dir", run_dir}, 60s);
  REQUIRE(stopped.ok());
  INFO("stop: " << OneLine(stopped->out) << " " << OneLine(stopped->err));
  CHECK(stopped->exit_status == 0);
  CHECK(Contains(stopped->out, "stopped /job:worker/replica:0/task:0"));
}

TEST_CASE("tfd refuses to start with an incomplete or unusable TLS configuration") {
  Certs certs;
  const std::string cluster = R"({"worker": ["127.0.0.1:1"]})";
  const std::string garbage = certs.dir.Write("garbage.pem", "not a certificate\n");
  const std::string bad_pem = certs.dir.Write(
      "bad.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
  struct Case {
    std::vector<std::string> tls;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--tls-cert", certs.File("worker-0.crt"), "--tls-key", certs.File("worker-0.key")},
       "--tls-ca is missing"},
      {{"--tls-ca", certs.File("ca.crt")}, "--tls-cert is missing"},
      {{"--tls-cert", certs.File("worker-0.crt"), "--tls-key", certs.File("nope.key"), "--tls-ca",
        certs.File("ca.crt")},
       "--tls-key: file '" + certs.File("nope.key") + "' does not exist"},
      // Read no further than a PEM file can be long.
      {{"--tls-cert", certs.File("worker-0.crt"), "--tls-key", certs.File("worker-0.key"),
        "--tls-ca", "/dev/zero"},
       "--tls-ca: file '/dev/zero' holds over 4194304 bytes, the limit"},
      {{"--tls-cert", garbage, "--tls-key", certs.File("worker-0.key"), "--tls-ca",
        certs.File("ca.crt")},
       "--tls-cert: '" + garbage + "' holds no PEM block"},
      {{"--tls-cert", certs.File("worker-0.crt"), "--tls-key", certs.File("worker-0.key"),
        "--tls-ca", bad_pem},
       "--tls-ca: cannot parse '" + bad_pem + "'"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {testing::TfdBinary(), "--cluster", cluster, "--job", "worker",
                                     "--task", "0"};
    argv.insert(argv.end(), c.tls.begin(), c.tls.end());
    auto run = RunProcess(argv, 30s);
    REQUIRE(run.ok());
    INFO("stderr: " << OneLine(run->err));
    CHECK(run->exit_status == 2);
    CHECK(Contains(run->err, "INVALID_ARGUMENT"));
    CHECK(Contains(run->err, c.says));
  }
}

}  // namespace
}  // namespace tfd
