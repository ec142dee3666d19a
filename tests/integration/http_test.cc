// tfd's HTTP port (--http-listen): /metrics counts what users watch —
// runs and partition steps by outcome, failed calls by method and code,
// tensor bytes per peer, sessions, variables, queues — and parses as
// Prometheus reads it (check_metrics.py, python3-prometheus-client);
// /healthz is 200 while a task serves and 503 while it drains. The port
// holds under idle connections twice over and a taken port fails the start.
#include <catch2/catch.hpp>
#include <signal.h>

#include <cstdlib>
#include <functional>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "common/graph_io.h"
#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/log_lines.h"
#include "tests/integration/raw_socket.h"
#include "tests/integration/temp_dir.h"
#include "tfd_version.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::Const;
using testing::LinesWith;
using testing::LocalCluster;
using testing::Node;
using testing::OneLine;
using testing::RawSocket;
using testing::RunProcess;
using testing::TempDir;
using testing::TfctlBinary;
using testing::TfdBinary;
using testing::WaitForLines;

const std::vector<std::string> kHttpFlags = {"--http-listen", "127.0.0.1:0"};
const std::string kPs = "/job:ps/replica:0/task:0";
const std::string kWorker = "/job:worker/replica:0/task:0";

// The HTTP port a task logged ("... over HTTP on 127.0.0.1:0 (port N)").
int HttpPort(const LocalCluster& cluster, const std::string& job, int task) {
  auto lines = WaitForLines([&] { return cluster.Log(job, task); }, "over HTTP on", 1, 10s);
  REQUIRE(lines.size() == 1);
  std::smatch m;
  REQUIRE(std::regex_search(lines[0], m, std::regex(R"(\(port (\d+)\))")));
  return std::stoi(m[1]);
}

struct Reply {
  int status = 0;
  std::string body;
};

// GET `path` over a connection of its own, read until the task closes it;
// nullopt when the port does not answer (closed, or not an HTTP reply).
std::optional<Reply> TryGet(int port, const std::string& path, const std::string& method = "GET") {
  auto s = RawSocket::Connect("127.0.0.1:" + std::to_string(port), 5s);
  if (!s.ok() || !(*s)->Send(method + " " + path + " HTTP/1.1\r\nHost: tfd\r\n\r\n")) {
    return std::nullopt;
  }
  (*s)->ShutdownWrite();
  auto text = (*s)->ReadUntilClosed(10s);
  std::smatch m;
  if (!text || !std::regex_search(*text, m, std::regex(R"(^HTTP/1\.1 (\d{3}) )"))) {
    return std::nullopt;
  }
  Reply r{std::stoi(m[1]), ""};
  const size_t body = text->find("\r\n\r\n");
  if (body != std::string::npos) r.body = text->substr(body + 4);
  return r;
}

Reply Get(int port, const std::string& path, const std::string& method = "GET") {
  auto reply = TryGet(port, path, method);
  REQUIRE(reply.has_value());
  return *reply;
}

// The value of sample `sample` ("name{labels}" as the page writes it).
std::optional<double> Value(const std::string& page, const std::string& sample) {
  std::istringstream in(page);
  for (std::string line; std::getline(in, line);) {
    if (line.size() > sample.size() && line.compare(0, sample.size(), sample) == 0 &&
        line[sample.size()] == ' ') {
      return std::stod(line.substr(sample.size() + 1));
    }
  }
  return std::nullopt;
}

// Polls `sample` of the page on `port` until `done` says yes or `timeout`
// passes; returns the last value read.
std::optional<double> AwaitSample(int port, const std::string& sample,
                                  const std::function<bool(double)>& done,
                                  std::chrono::seconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  std::optional<double> v;
  while (std::chrono::steady_clock::now() < until) {
    v = Value(Get(port, "/metrics").body, sample);
    if (v && done(*v)) break;
    std::this_thread::sleep_for(20ms);
  }
  return v;
}

// check_metrics.py's verdict on `page` (python3-prometheus-client).
void CheckParses(const std::string& page) {
  const char* script = std::getenv("CHECK_METRICS");
  REQUIRE(script != nullptr);
  TempDir dir;
  auto run = RunProcess({"/usr/bin/python3", script, dir.Write("page.txt", page)}, 60s);
  REQUIRE(run.ok());
  INFO("check_metrics.py: " << OneLine(run->out + run->err));
  CHECK(run->exit_status == 0);
}

GraphDef Graph() {
  GraphDef g;
  g.nodes = {
      Const("x", 2.0f, "/job:ps"),
      Node("y", "Add", {"x", "x"}, "/job:worker"),
      Node("queue", "FIFOQueue", {}, "/job:ps",
           {{"component_types", std::vector<DType>{DType::kFloat32}},
            {"shapes", std::vector<PartialShape>{PartialShape({})}},
            {"capacity", int64_t{10}},
            {"shared_name", std::string("work")}}),
      Node("put", "QueueEnqueue", {"queue", "x"}, ""),
      Node("take", "QueueDequeue", {"queue"}, "",
           {{"component_types", std::vector<DType>{DType::kFloat32}}}),
      Node("taken", "Identity", {"take"}, "/job:worker"),
      Node("w", "VariableV2", {}, "/job:ps",
           {{"dtype", DType::kFloat32}, {"shape", PartialShape(std::vector<int64_t>{})}}),
      Node("init", "Assign", {"w", "x"}, ""),
  };
  return g;
}

TEST_CASE("/metrics counts runs, failures, bytes per peer, queues and variables, and parses") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.Start("ps", 0, kHttpFlags).ok());
  REQUIRE(cluster.Start("worker", 0, kHttpFlags).ok());
  const int ps_port = HttpPort(cluster, "ps", 0);
  const int worker_port = HttpPort(cluster, "worker", 0);

  for (int port : {ps_port, worker_port}) {
    Reply health = Get(port, "/healthz");
    CHECK(health.status == 200);
    CHECK(health.body == "ok\n");
  }

  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  REQUIRE((*client)->CreateSession(Graph()).ok());
  // Five runs move x (a float32 scalar, 4 bytes) from the ps to the worker.
  for (int i = 0; i < 5; ++i) REQUIRE((*client)->Run({}, {"y"}, {}, {}).ok());
  for (int i = 0; i < 2; ++i) REQUIRE((*client)->Run({}, {}, {"put"}, {}).ok());
  REQUIRE((*client)->Run({}, {}, {"init"}, {}).ok());
  auto bad = (*client)->Run({}, {"nope"}, {}, {});
  REQUIRE(bad.status().code() == Code::kNotFound);

  const std::string worker = Get(worker_port, "/metrics").body;
  CHECK(Value(worker, R"(tfd_runs_total{code="OK"})") == 8);
  CHECK(Value(worker, R"(tfd_runs_total{code="NOT_FOUND"})") == 1);
  CHECK(Value(worker, "tfd_run_duration_seconds_count") == 9);
  CHECK(Value(worker, R"(tfd_run_duration_seconds_bucket{le="+Inf"})") == 9);
  CHECK(Value(worker, R"(tfd_rpc_errors_total{method="Session.run",code="NOT_FOUND"})") == 1);
  CHECK(Value(worker, "tfd_sessions") == 1);
  CHECK(Value(worker, R"(tfd_data_plane_received_bytes_total{peer=")" + kPs + R"("})") == 20);
  CHECK(Value(worker, R"(tfd_build_info{version=")" TFD_VERSION R"(",task=")" + kWorker + R"("})") ==
        1);
  CHECK(Value(worker, "process_resident_memory_bytes") > 1e6);
  CheckParses(worker);

  const std::string ps = Get(ps_port, "/metrics").body;
  // The ps has a part in every run but the failed one.
  CHECK(Value(ps, R"(tfd_partition_steps_total{code="OK"})") == 8);
  CHECK(Value(ps, R"(tfd_runs_total{code="OK"})") == 0);
  CHECK(Value(ps, R"(tfd_data_plane_sent_bytes_total{peer=")" + kWorker + R"("})") == 20);
  // The worker's master ran its steps here over the step channel: each a
  // run message to the ps and its answer back, none refused.
  CHECK(Value(worker, "tfd_data_plane_step_messages_sent_total") == 8);
  CHECK(Value(ps, "tfd_data_plane_step_messages_received_total") == 8);
  CHECK(Value(ps, "tfd_data_plane_step_messages_sent_total") == 8);
  CHECK(Value(worker, "tfd_data_plane_step_messages_received_total") == 8);
  CHECK(Value(ps, "tfd_data_plane_step_messages_refused_total") == 0);
  CHECK(Value(worker, "tfd_data_plane_step_messages_refused_total") == 0);
  CHECK(Value(ps, R"(tfd_queue_size{queue="work"})") == 2);
  CHECK(Value(ps, R"(tfd_queue_capacity{queue="work"})") == 10);
  CHECK(Value(ps, R"(tfd_variables{state="initialized"})") == 1);
  CHECK(Value(ps, "tfd_checkpoint_last_success_timestamp_seconds") == 0);
  CheckParses(ps);

  // Only GET and HEAD, only the two pages.
  CHECK(Get(ps_port, "/metrics", "HEAD").status == 200);
  CHECK(Get(ps_port, "/metrics", "POST").status == 405);
  CHECK(Get(ps_port, "/").status == 404);
  // The client's going ends its session, and the page shows it.
  client->reset();
  std::optional<double> sessions;
  for (int i = 0; i < 200 && sessions != 0.0; ++i) {
    sessions = Value(Get(worker_port, "/metrics").body, "tfd_sessions");
    std::this_thread::sleep_for(50ms);
  }
  CHECK(sessions == 0.0);
}

TEST_CASE("the HTTP port holds under idle connections, twice, and RPC goes on meanwhile") {
  LocalCluster cluster({{"worker", 1}});
  REQUIRE(cluster.Start("worker", 0, kHttpFlags).ok());
  const int port = HttpPort(cluster, "worker", 0);
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  GraphDef g;
  g.nodes = {Const("x", 1.0f)};
  REQUIRE((*client)->CreateSession(g).ok());

  for (int round = 1; round <= 2; ++round) {
    INFO("round " << round);
    // As many connections as the port serves, none sending a byte.
    std::vector<std::unique_ptr<RawSocket>> idle;
    for (int i = 0; i < 16; ++i) {
      auto s = RawSocket::Connect("127.0.0.1:" + std::to_string(port), 5s);
      REQUIRE(s.ok());
      idle.push_back(std::move(s).value());
    }
    // One more is closed at once, and the RPC port does not notice.
    auto extra = RawSocket::Connect("127.0.0.1:" + std::to_string(port), 5s);
    REQUIRE(extra.ok());
    CHECK((*extra)->WaitClosed(3s));
    CHECK((*client)->Run({}, {"x"}, {}, {}).ok());
    // The idle ones are dropped at the header deadline (5 s), and then the
    // port answers again.
    for (auto& s : idle) CHECK(s->WaitClosed(15s));
    CHECK(Get(port, "/healthz").status == 200);
  }
  CHECK(LinesWith(cluster.Log("worker", 0), "closed an HTTP connection").size() >= 2);
}

TEST_CASE("/healthz is 503 while a task drains its steps on SIGTERM") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.Start("ps", 0).ok());
  REQUIRE(cluster.Start("worker", 0, kHttpFlags).ok());
  const int port = HttpPort(cluster, "worker", 0);
  TempDir dir;
  const std::string graph_file = dir.path() + "/graph.txt";
  REQUIRE(SaveGraph(Graph(), graph_file, GraphFormat::kText).ok());

  // A step blocked on the empty queue keeps the worker draining after SIGTERM.
  auto blocked = ChildProcess::Spawn({TfctlBinary(), "submit", graph_file, "--target",
                                      cluster.Address("worker", 0), "--fetch", "taken",
                                      "--step-timeout", "120"});
  REQUIRE(blocked.ok());
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (Value(Get(port, "/metrics").body, "tfd_steps_running").value_or(0) < 1 &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(50ms);
  }
  INFO("tfctl: " << OneLine((*blocked)->Stderr()));
  REQUIRE(Value(Get(port, "/metrics").body, "tfd_steps_running") >= 1);
  CHECK(Get(port, "/healthz").status == 200);

  REQUIRE(::kill(cluster.Pid("worker", 0), SIGTERM) == 0);
  Reply health;
  for (int i = 0; i < 40 && health.status != 503; ++i) {
    health = Get(port, "/healthz");
    std::this_thread::sleep_for(25ms);
  }
  CHECK(health.status == 503);
  CHECK(health.body == "draining\n");
  auto stopped = cluster.Stop("worker", 0, 20s);
  REQUIRE(stopped.ok());
  CHECK(*stopped == 0);
}

// Walkthrough 5's graph: a counter and a queue of capacity 10 on the ps.
std::string CounterQueueGraph() {
  const char* path = std::getenv("COUNTER_QUEUE_GRAPH");
  REQUIRE(path != nullptr);
  return path;
}

// A worker that is the master of a step running on the ps alone (an
// enqueue into the full queue) is stopped with SIGTERM while the step
// blocks. The step is cancelled on every task with an error its client
// can read, /healthz says "draining" until the port closes, and the task
// exits 0. Once the grace ends by a second signal (so the draining port is
// seen for certain), once by itself (the --drain-grace default's path).
TEST_CASE("SIGTERM to the master of a step blocked on another task cancels it and exits 0") {
  for (const bool second_signal : {true, false}) {
    INFO((second_signal ? "grace ended by a second SIGTERM" : "grace ended by itself"));
    LocalCluster cluster({{"ps", 1}, {"worker", 1}}, kHttpFlags);
    REQUIRE(cluster.Start("ps", 0).ok());
    REQUIRE(cluster.Start("worker", 0,
                          {"--drain-grace", second_signal ? "600" : "0.5"}).ok());
    const int ps_port = HttpPort(cluster, "ps", 0);
    const int worker_port = HttpPort(cluster, "worker", 0);

    // Ten enqueues through the worker fill the queue; the eleventh blocks.
    auto graph = LoadGraph(CounterQueueGraph());
    REQUIRE(graph.ok());
    auto client = cluster.Connect("worker", 0);
    REQUIRE(client.ok());
    REQUIRE((*client)->CreateSession(*graph).ok());
    REQUIRE((*client)->Run({}, {}, {"init"}, {}).ok());
    for (int i = 0; i < 10; ++i) REQUIRE((*client)->Run({}, {}, {"enqueue"}, {}).ok());
    client->reset();
    auto blocked = ChildProcess::Spawn({TfctlBinary(), "submit", CounterQueueGraph(), "--target",
                                        cluster.Address("worker", 0), "--run", "enqueue",
                                        "--step-timeout", "300"});
    REQUIRE(blocked.ok());
    const auto running = [](double n) { return n >= 1; };
    REQUIRE(AwaitSample(ps_port, "tfd_steps_running", running, 20s) >= 1);
    CHECK(Value(Get(ps_port, "/metrics").body, R"(tfd_queue_size{queue="shared_queue"})") == 10);
    CHECK(Get(worker_port, "/healthz").status == 200);

    REQUIRE(::kill(cluster.Pid("worker", 0), SIGTERM) == 0);
    if (second_signal) {
      // Draining, for as long as the grace lasts: 503 until the port closes.
      std::optional<Reply> health;
      const auto until = std::chrono::steady_clock::now() + 20s;
      while (std::chrono::steady_clock::now() < until && (!health || health->status != 503)) {
        health = TryGet(worker_port, "/healthz");
        if (!health) break;  // the port closed: no drain was seen
        std::this_thread::sleep_for(20ms);
      }
      CHECK(health.has_value());
      CHECK(health.value_or(Reply{}).status == 503);
      CHECK(health.value_or(Reply{}).body == "draining\n");
      // The grace lets the step go on.
      CHECK((*blocked)->Wait(0ms).status().code() == Code::kDeadlineExceeded);
    }
    // cluster.Stop signals again, which ends the grace.
    auto stopped = second_signal ? cluster.Stop("worker", 0, 30s) : cluster.Wait("worker", 0, 30s);
    INFO("worker's log: " << OneLine(cluster.Log("worker", 0)));
    REQUIRE(stopped.ok());
    CHECK(*stopped == 0);

    auto client_exit = (*blocked)->Wait(30s);
    INFO("tfctl: " << OneLine((*blocked)->Stderr()));
    REQUIRE(client_exit.ok());
    CHECK(*client_exit == 1);
    CHECK((*blocked)->Stderr().find("error: UNAVAILABLE: step 1: " + kWorker +
                                    " is shutting down: the step was cancelled " +
                                    (second_signal ? "on a second stop signal"
                                                   : "after the drain's grace of 0.5 s")) !=
          std::string::npos);
    // The ps was told: its part of the step ended, the queue holds ten.
    const auto none = [](double n) { return n == 0; };
    CHECK(AwaitSample(ps_port, "tfd_steps_running", none, 20s) == 0);
    CHECK(Value(Get(ps_port, "/metrics").body, R"(tfd_queue_size{queue="shared_queue"})") == 10);
  }
}

TEST_CASE("a task whose --http-listen cannot be bound does not start, twice") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.Start("ps", 0).ok());
  for (int attempt = 1; attempt <= 2; ++attempt) {
    INFO("attempt " << attempt);
    // The ps's RPC port is taken: by the ps.
    auto run = RunProcess({TfdBinary(), "--cluster", cluster.spec().ToJson(), "--job", "worker",
                           "--task", "0", "--http-listen", cluster.Address("ps", 0)},
                          20s);
    REQUIRE(run.ok());
    INFO("stderr: " << OneLine(run->err));
    CHECK(run->exit_status == 1);
    CHECK(run->err.find("(--http-listen)") != std::string::npos);
  }
  auto malformed = RunProcess({TfdBinary(), "--cluster", cluster.spec().ToJson(), "--job",
                               "worker", "--task", "0", "--http-listen", "9090"},
                              20s);
  REQUIRE(malformed.ok());
  CHECK(malformed->exit_status == 2);
  CHECK(malformed->err.find("--http-listen '9090' is not HOST:PORT") != std::string::npos);
}

}  // namespace
}  // namespace tfd
