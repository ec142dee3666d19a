// Tensors moving between real tfd processes over the data plane, over shared
// memory between tasks of one host (also when UCX_TLS asks for TCP, which
// tfd never lets UCX use) and over streams (--data-plane-transports=stream):
// contents bit-exact at sizes around the transports' thresholds, many
// tensors in flight between several task pairs, a tensor over 2 GiB, a
// sender killed mid-transfer (twice), an aborted step's pushed tensors
// released, and transfers shown in traces.
#include <catch2/catch.hpp>
#include <stdlib.h>

#include <chrono>
#include <cstring>
#include <future>
#include <map>
#include <set>
#include <thread>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/graph_io.h"
#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/temp_dir.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Const;
using testing::LocalCluster;
using testing::Node;

const char* const kWorker0 = "/job:worker/replica:0/task:0";
const char* const kWorker1 = "/job:worker/replica:0/task:1";

// UCX_TLS for the tfd processes a test starts (they inherit the
// environment); restored when the test ends.
class ForcedTransports {
 public:
  explicit ForcedTransports(const std::string& tls) {
    if (const char* old = getenv("UCX_TLS")) old_ = old;
    if (tls.empty()) {
      unsetenv("UCX_TLS");
    } else {
      setenv("UCX_TLS", tls.c_str(), 1);
    }
  }
  ~ForcedTransports() {
    if (old_.empty()) {
      unsetenv("UCX_TLS");
    } else {
      setenv("UCX_TLS", old_.c_str(), 1);
    }
  }

 private:
  std::string old_;
};

NodeDef Dims(std::string name, std::vector<int64_t> dims, std::string device) {
  return Node(std::move(name), "Const", {}, std::move(device),
              {{"value", Tensor::FromVector<int64_t>(dims)}, {"dtype", DType::kInt64}});
}

NodeDef AllAxes(std::string name, std::string device) {
  return Node(std::move(name), "Const", {}, std::move(device),
              {{"value", Tensor::FromVector<int32_t>({0})}, {"dtype", DType::kInt32}});
}

Tensor Pattern(int64_t bytes) {
  Tensor t = *Tensor::Allocate(DType::kUInt8, TensorShape({bytes}));
  uint8_t* p = t.data<uint8_t>();
  for (int64_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>((i * 131 + 7) >> 3);
  return t;
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.total_bytes()) == 0;
}

// Waits (bounded) until the task holds no received tensors and no step
// state: what an ended or aborted step pushed to it was released.
DataPlaneInfo WaitReleased(LocalCluster& cluster, const std::string& job, int task) {
  DataPlaneInfo last;
  for (int i = 0; i < 100; ++i) {
    auto client = cluster.Connect(job, task);
    REQUIRE(client.ok());
    auto st = (*client)->GetStatus(5s);
    REQUIRE(st.ok());
    last = st->data_plane;
    if (last.bytes_held == 0 && last.steps_held == 0) break;
    std::this_thread::sleep_for(100ms);
  }
  return last;
}

TEST_CASE("tensors cross tasks bit-exact at sizes around every threshold, on each transport") {
  // Sizes around UCX's short/bcopy/zcopy/rendezvous switches on shared
  // memory and TCP (ucx_info -e), and the receive pool's block sizes.
  const std::vector<int64_t> sizes = {0,      1,       92,      93,      94,     8185,
                                      8186,   8256,    8257,    20553,   20554,  65536,
                                      65537,  1 << 20, (1 << 20) + 3, 16 << 20};
  // The default (shared memory between these two tasks), the same with
  // UCX_TLS asking for TCP (which tfd never lets UCX use), and streams.
  for (const std::string way : {"", "UCX_TLS=tcp", "stream"}) {
    DYNAMIC_SECTION("transports '" << way << "'") {
      const bool stream = way == "stream";
      ForcedTransports forced(way == "UCX_TLS=tcp" ? "tcp" : "");
      LocalCluster cluster({{"worker", 2}}, stream
                                                ? std::vector<std::string>{"--data-plane-transports=stream"}
                                                : std::vector<std::string>{});
      const Status started = cluster.StartAll();
      INFO(started.ToString());
      REQUIRE(started.ok());
      auto client = cluster.Connect("worker", 0);
      REQUIRE(client.ok());
      // Feeds and fetches live on the master (worker:0): the fed tensor is
      // pushed to worker:1 for y, and y pushed back.
      GraphDef g;
      g.nodes = {Node("f", "Placeholder", {}, kWorker0,
                      {{"dtype", DType::kUInt8}, {"shape", PartialShape::Unknown()}}),
                 Node("y", "Identity", {"f"}, kWorker1)};
      REQUIRE((*client)->CreateSession(g, 60s).ok());
      for (int64_t size : sizes) {
        INFO(size << " bytes");
        const Tensor sent = Pattern(size);
        auto out = (*client)->Run({{"f", sent}}, {"y"}, {}, {});
        INFO(out.status().ToString() << "\nworker:1 log: " << cluster.Log("worker", 1));
        REQUIRE(out.ok());
        CHECK(SameBytes(out->fetches[0], sent));
      }
      // Strings travel serialized.
      Tensor strings = Tensor::FromVector<std::string>({"", "a", std::string(100000, 'z')});
      GraphDef gs;
      gs.nodes = {Node("s", "Placeholder", {}, kWorker0,
                       {{"dtype", DType::kString}, {"shape", PartialShape::Unknown()}}),
                  Node("t", "Identity", {"s"}, kWorker1)};
      REQUIRE((*client)->CreateSession(gs, 60s).ok());
      auto out = (*client)->Run({{"s", strings}}, {"t"}, {}, {});
      REQUIRE(out.ok());
      CHECK(TensorsEqual(out->fetches[0], strings));
      auto st = (*client)->GetStatus(5s);
      REQUIRE(st.ok());
      CHECK(st->data_plane.pushes_received >= sizes.size() + 1);
      CHECK(st->data_plane.transports ==
            (stream ? "streams" : "shared memory (UCX) and streams"));
      CHECK(WaitReleased(cluster, "worker", 0).bytes_held == 0);
      // The log says which link carries the tensors: shared memory (posix
      // segments, never SysV or TCP) between tasks of one host unless
      // streams are asked for.
      const std::string log = cluster.Log("worker", 1);
      INFO(log);
      if (stream) {
        CHECK(log.find("data plane to /job:worker/replica:0/task:0 over a stream") !=
              std::string::npos);
        CHECK(log.find("over UCX") == std::string::npos);
      } else {
        CHECK(log.find("data plane to /job:worker/replica:0/task:0 over UCX shared memory") !=
              std::string::npos);
        CHECK(log.find("posix/memory") != std::string::npos);
        CHECK(log.find("tcp/") == std::string::npos);
        CHECK(log.find("sysv/") == std::string::npos);
      }
    }
  }
}

TEST_CASE("many tensors in flight between several task pairs at once all arrive") {
  // Each of three workers fills eight tensors that the next worker sums; the
  // master fetches all 24 sums of one step.
  LocalCluster cluster({{"worker", 3}});
  REQUIRE(cluster.StartAll().ok());
  GraphDef g;
  std::vector<std::string> fetches;
  std::vector<float> expected;
  const int64_t n = 300000;  // 1.2 MB: the rendezvous protocol
  for (int w = 0; w < 3; ++w) {
    const std::string from = "/job:worker/replica:0/task:" + std::to_string(w);
    const std::string to = "/job:worker/replica:0/task:" + std::to_string((w + 1) % 3);
    g.nodes.push_back(Dims("dims" + std::to_string(w), {n}, from));
    g.nodes.push_back(AllAxes("axes" + std::to_string(w), to));
    for (int k = 0; k < 8; ++k) {
      const std::string id = std::to_string(w) + "_" + std::to_string(k);
      const float value = static_cast<float>(w * 8 + k + 1);
      g.nodes.push_back(Const("v" + id, value, from));
      g.nodes.push_back(Node("x" + id, "Fill", {"dims" + std::to_string(w), "v" + id}, from));
      g.nodes.push_back(Node("s" + id, "Max", {"x" + id, "axes" + std::to_string(w)}, to));
      fetches.push_back("s" + id);
      expected.push_back(value);
    }
  }
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  REQUIRE((*client)->CreateSession(g, 60s).ok());
  for (int step = 0; step < 3; ++step) {
    auto out = (*client)->Run({}, fetches, {}, {});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    for (size_t i = 0; i < fetches.size(); ++i) {
      INFO(fetches[i]);
      CHECK(out->fetches[i].scalar<float>() == expected[i]);
    }
  }
  for (int w = 0; w < 3; ++w) CHECK(WaitReleased(cluster, "worker", w).bytes_held == 0);
}

TEST_CASE("a tensor larger than 2 GiB crosses tasks intact", "[slow]") {
  LocalCluster cluster({{"worker", 2}});
  REQUIRE(cluster.StartAll().ok());
  // 2^29 + 1024 floats: 2 GiB and 4 KiB. Min and Max both 1 on the receiver
  // means every element arrived as sent.
  const int64_t n = (int64_t{1} << 29) + 1024;
  GraphDef g;
  g.nodes = {Dims("dims", {n}, kWorker1),
             Const("one", 1.0f, kWorker1),
             Node("x", "Fill", {"dims", "one"}, kWorker1),
             AllAxes("axes", kWorker0),
             Node("lo", "Min", {"x", "axes"}, kWorker0),
             Node("hi", "Max", {"x", "axes"}, kWorker0),
             Node("shape", "Shape", {"x"}, kWorker0, {{"out_type", DType::kInt64}})};
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  REQUIRE((*client)->CreateSession(g, 120s).ok());
  auto out = (*client)->Run({}, {"lo", "hi", "shape"}, {}, {});
  INFO(out.status().ToString() << "\nworker:0 log: " << cluster.Log("worker", 0));
  REQUIRE(out.ok());
  CHECK(out->fetches[0].scalar<float>() == 1.0f);
  CHECK(out->fetches[1].scalar<float>() == 1.0f);
  CHECK(out->fetches[2].data<int64_t>()[0] == n);
  CHECK(WaitReleased(cluster, "worker", 0).bytes_held == 0);
}

TEST_CASE("a sender killed mid-transfer fails the step naming it; twice; then steps work again") {
  for (const std::string way : {"", "stream"}) {
    DYNAMIC_SECTION("transports '" << way << "'") {
      LocalCluster cluster({{"worker", 2}}, way == "stream"
                                                ? std::vector<std::string>{"--data-plane-transports=stream"}
                                                : std::vector<std::string>{});
      const Status started = cluster.StartAll();
      INFO(started.ToString());
      REQUIRE(started.ok());
      // 512 MiB made on worker:1 and reduced on worker:0: the kill lands
      // while it is being filled or while it moves.
      GraphDef g;
      g.nodes = {Dims("dims", {int64_t{1} << 27}, kWorker1), Const("one", 1.0f, kWorker1),
                 Node("x", "Fill", {"dims", "one"}, kWorker1), AllAxes("axes", kWorker0),
                 Node("hi", "Max", {"x", "axes"}, kWorker0)};
      auto client = cluster.Connect("worker", 0);
      REQUIRE(client.ok());
      REQUIRE((*client)->CreateSession(g, 30s).ok());
      auto first = (*client)->Run({}, {"hi"}, {}, {});
      INFO(first.status().ToString());
      REQUIRE(first.ok());
      for (auto delay : {150ms, 400ms}) {
        INFO("killed after " << delay.count() << " ms");
        auto run = std::async(std::launch::async, [&] {
          // A client of its own: the test thread's is not thread-safe.
          kj::AsyncIoContext io = kj::setupAsyncIo();
          auto c = Client::Connect(io, cluster.Address("worker", 0), "", 10s);
          if (!c.ok()) return c.status();
          if (Status s = (*c)->CreateSession(g, 30s); !s.ok()) return s;
          StatusOr<Client::RunOutput> last = errors::Internal("no run");
          // Steps until one fails (the kill) or a bound of steps.
          for (int i = 0; i < 50; ++i) {
            last = (*c)->Run({}, {"hi"}, {}, {});
            if (!last.ok()) break;
          }
          return last.status();
        });
        std::this_thread::sleep_for(delay);
        cluster.Kill("worker", 1);
        const Status failed = run.get();
        INFO(failed.ToString() << "\nworker:0 log: " << cluster.Log("worker", 0));
        CHECK(failed.code() == Code::kUnavailable);
        CHECK(failed.message().find(kWorker1) != std::string::npos);
        // worker:0 lived through it and let go of what it was receiving.
        CHECK(cluster.Pid("worker", 0) > 0);
        CHECK(WaitReleased(cluster, "worker", 0).bytes_held == 0);
        REQUIRE(cluster.Start("worker", 1).ok());
        auto again = (*client)->Run({}, {"hi"}, {}, {});
        INFO(again.status().ToString());
        REQUIRE(again.ok());
        CHECK(again->fetches[0].scalar<float>() == 1.0f);
      }
    }
  }
}

TEST_CASE("what a sender pushed for a step that aborted is released on the receiver") {
  LocalCluster cluster({{"worker", 2}});
  REQUIRE(cluster.StartAll().ok());
  // worker:0 fails at once (a fed reshape that cannot be), so its partition
  // ends before worker:1's 256 MiB arrives for it; the push must then be
  // dropped.
  GraphDef g;
  g.nodes = {Dims("dims", {int64_t{1} << 26}, kWorker1), Const("one", 1.0f, kWorker1),
             Node("x", "Fill", {"dims", "one"}, kWorker1), AllAxes("axes", kWorker0),
             Node("hi", "Max", {"x", "axes"}, kWorker0),
             Node("p", "Placeholder", {}, kWorker0,
                  {{"dtype", DType::kFloat32}, {"shape", PartialShape::Unknown()}}),
             Dims("bad_shape", {7}, kWorker0), Node("bad", "Reshape", {"p", "bad_shape"}, kWorker0)};
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  REQUIRE((*client)->CreateSession(g, 30s).ok());
  for (int i = 0; i < 2; ++i) {
    auto out = (*client)->Run({{"p", Tensor::FromVector<float>({1, 2, 3})}}, {"hi", "bad"}, {}, {});
    INFO(out.status().ToString());
    CHECK(out.status().code() == Code::kInvalidArgument);
    const DataPlaneInfo held = WaitReleased(cluster, "worker", 0);
    CHECK(held.bytes_held == 0);
    CHECK(held.steps_held == 0);
  }
  // The session still runs what can run.
  auto ok = (*client)->Run({}, {"hi"}, {}, {});
  INFO(ok.status().ToString());
  REQUIRE(ok.ok());
}

TEST_CASE("a traced step shows each transfer's bytes, and the trace file an arrow per transfer") {
  LocalCluster cluster({{"worker", 2}});
  REQUIRE(cluster.StartAll().ok());
  GraphDef g;
  g.nodes = {Dims("dims", {1 << 20}, kWorker1), Const("one", 1.0f, kWorker1),
             Node("x", "Fill", {"dims", "one"}, kWorker1), AllAxes("axes", kWorker0),
             Node("y", "Max", {"x", "axes"}, kWorker0)};
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  REQUIRE((*client)->CreateSession(g, 30s).ok());
  auto out = (*client)->Run({}, {"y"}, {}, {.trace = true});
  REQUIRE(out.ok());
  std::string send_label, recv_label;
  for (const NodeExecStats& n : out->stats.nodes) {
    if (n.op == "_Send" && n.device.find(kWorker1) == 0) send_label = n.label;
    if (n.op == "_Recv" && n.device.find(kWorker0) == 0 && n.label.find("4194304") == 0) {
      recv_label = n.label;
    }
  }
  CHECK(send_label == std::string("4194304 bytes to ") + kWorker0 + "/device:CPU:0");
  CHECK(recv_label == std::string("4194304 bytes from ") + kWorker1 + "/device:CPU:0");

  // tfctl submit --trace-file: a flow from worker:1's _Send to worker:0's
  // _Recv, each end inside its slice.
  testing::TempDir dir;
  const std::string graph_file = dir.path() + "/graph.txt";
  const std::string trace_file = dir.path() + "/trace.json";
  REQUIRE(SaveGraph(g, graph_file, GraphFormat::kText).ok());
  auto run = testing::RunProcess({testing::TfctlBinary(), "submit", graph_file, "--target",
                                  cluster.Address("worker", 0), "--fetch", "y", "--trace-file",
                                  trace_file, "--timeout", "30"},
                                 60s);
  REQUIRE(run.ok());
  INFO(run->err);
  REQUIRE(run->exit_status == 0);
  std::ifstream in(trace_file);
  const nlohmann::json trace = nlohmann::json::parse(in, nullptr, false);
  REQUIRE(trace.is_object());
  std::map<int, std::string> process;  // pid -> device
  std::map<int, nlohmann::json> starts, ends;
  // Every track a slice is drawn on is named after the daemon's thread.
  std::map<std::pair<int, uint64_t>, std::string> thread_names;
  std::set<std::pair<int, uint64_t>> tracks;
  for (const auto& e : trace["traceEvents"]) {
    const bool named_thread = e["ph"] == "M" && e["name"] == "thread_name";
    if (named_thread) {
      thread_names[{e["pid"].get<int>(), e["tid"].get<uint64_t>()}] = e["args"]["name"];
    }
    if (e["ph"] == "X") tracks.insert({e["pid"].get<int>(), e["tid"].get<uint64_t>()});
    if (e["ph"] == "M" && !named_thread) {
      process[e["pid"].get<int>()] = e["args"]["name"].get<std::string>();
    }
    if (e["ph"] == "s") starts[e["id"].get<int>()] = e;
    if (e["ph"] == "f") ends[e["id"].get<int>()] = e;
  }
  REQUIRE(!starts.empty());
  bool crossing = false;
  for (const auto& [id, s] : starts) {
    REQUIRE(ends.count(id) == 1);
    const auto& f = ends[id];
    CHECK(f["ts"].get<int64_t>() >= s["ts"].get<int64_t>());
    if (process[s["pid"].get<int>()].find(kWorker1) == 0 &&
        process[f["pid"].get<int>()].find(kWorker0) == 0 &&
        s["name"].get<std::string>().find("4194304 bytes") == 0) {
      crossing = true;
    }
  }
  CHECK(crossing);
  REQUIRE(!tracks.empty());
  for (const auto& track : tracks) {
    const std::string& name = thread_names[track];
    INFO("track " << track.first << "/" << track.second << " named '" << name << "'");
    CHECK((name == "event loop" || name.rfind("compute ", 0) == 0));
  }
}

}  // namespace
}  // namespace tfd
