// The Chrome trace of a step, as tfctl run and submit write it: Perfetto
// needs every track named, flows paired by id, and each flow's head at or
// after its tail.
#include "cli/chrome_trace.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>

#include "daemon/runtime/partition.h"
#include "tests/integration/temp_dir.h"

namespace tfd::cli {
namespace {

constexpr const char* kPs = "/job:ps/replica:0/task:0/device:CPU:0";
constexpr const char* kWorker = "/job:worker/replica:0/task:0/device:CPU:0";

// A step that moved `w` from the ps to the worker: the _Recv started waiting
// before the _Send ran, on the worker's event loop.
StepStats TwoTaskStep() {
  const std::string recv = "_recv/w_0";
  StepStats stats;
  stats.nodes.push_back({"w", "VariableV2", kPs, 100, 101, 3, "compute 0", ""});
  stats.nodes.push_back({SendNodeFor(recv, kWorker), "_Send", kPs, 102, 104, 3, "compute 0",
                         "400 bytes to /job:worker/replica:0/task:0"});
  stats.nodes.push_back({recv, "_Recv", kWorker, 90, 110, 1, "event loop",
                         "400 bytes from /job:ps/replica:0/task:0"});
  stats.nodes.push_back({"y", "MatMul", kWorker, 111, 130, 2, "compute 1", ""});
  stats.nodes.push_back({"z", "Relu", kWorker, 131, 132, 2, "compute 1", ""});
  return stats;
}

TEST_CASE("chrome trace: a process per device, each thread named once") {
  const Json trace = ChromeTrace(TwoTaskStep());
  std::map<int, std::string> processes;
  std::map<std::pair<int, uint64_t>, std::string> threads;
  int thread_names = 0;
  std::set<std::pair<int, uint64_t>> used;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") {
      processes[e["pid"].get<int>()] = e["args"]["name"];
    } else if (e["ph"] == "M" && e["name"] == "thread_name") {
      threads[{e["pid"].get<int>(), e["tid"].get<uint64_t>()}] = e["args"]["name"];
      ++thread_names;
    } else if (e["ph"] == "X") {
      used.insert({e["pid"].get<int>(), e["tid"].get<uint64_t>()});
    }
  }
  CHECK(processes.size() == 2);
  CHECK(thread_names == 3);  // compute 0 on the ps; event loop and compute 1 on the worker
  for (const auto& track : used) {
    INFO("pid " << track.first << " tid " << track.second);
    CHECK(threads.count(track) == 1);
  }
  int worker = -1;
  for (const auto& [pid, name] : processes) {
    if (name == kWorker) worker = pid;
  }
  CHECK(threads[{worker, 1}] == "event loop");
  CHECK(threads[{worker, 2}] == "compute 1");
}

TEST_CASE("chrome trace: a flow from the _Send to its _Recv, head never before tail") {
  const Json trace = ChromeTrace(TwoTaskStep());
  std::vector<Json> starts, finishes;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "s") starts.push_back(e);
    if (e["ph"] == "f") finishes.push_back(e);
  }
  REQUIRE(starts.size() == 1);
  REQUIRE(finishes.size() == 1);
  CHECK(starts[0]["id"] == finishes[0]["id"]);
  CHECK(starts[0]["ts"] == 102);     // the _Send's start, inside its slice
  CHECK(finishes[0]["ts"] == 102);   // the _Recv waited from 90: not before the tail
  CHECK(finishes[0]["bp"] == "e");
  CHECK(finishes[0]["tid"] == 1);
  CHECK(starts[0]["name"] == "400 bytes from /job:ps/replica:0/task:0");
}

TEST_CASE("chrome trace: a _Recv without its _Send in the trace draws no flow") {
  StepStats stats = TwoTaskStep();
  stats.nodes.erase(stats.nodes.begin() + 1);
  stats.nodes.push_back({"_recv/odd", "_Recv", kWorker, 1, 2, 1, "event loop", ""});
  for (const auto& e : ChromeTrace(stats)["traceEvents"]) {
    CHECK(e["ph"] != "s");
    CHECK(e["ph"] != "f");
  }
}

TEST_CASE("chrome trace: written whole, or an error naming the path") {
  testing::TempDir dir;
  const std::string path = dir.path() + "/step.json";
  REQUIRE(WriteChromeTrace(TwoTaskStep(), path).ok());
  std::ifstream in(path);
  const Json back = Json::parse(in, nullptr, false);
  REQUIRE(!back.is_discarded());
  CHECK(back == ChromeTrace(TwoTaskStep()));

  for (const std::string& bad : {dir.path() + "/no/such/dir/step.json", std::string("/dev/full")}) {
    Status s = WriteChromeTrace(TwoTaskStep(), bad);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find(bad) != std::string::npos);
  }
}

}  // namespace
}  // namespace tfd::cli
