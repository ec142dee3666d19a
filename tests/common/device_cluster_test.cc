#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "common/cluster_spec.h"
#include "common/device_name.h"

namespace tfd {
namespace {

TEST_CASE("device names parse in every partial form and print canonically") {
  auto full = DeviceName::Parse("/job:ps/replica:0/task:1/device:CPU:0");
  REQUIRE(full.ok());
  CHECK(full->fully_specified());
  CHECK(full->ToString() == "/job:ps/replica:0/task:1/device:CPU:0");
  CHECK(DeviceName::Parse("/cpu:0")->ToString() == "/device:CPU:0");
  CHECK(DeviceName::Parse("/gpu:1")->ToString() == "/device:GPU:1");
  CHECK(DeviceName::Parse("/device:gpu:0")->ToString() == "/device:GPU:0");
  CHECK(DeviceName::Parse("/job:worker/task:1/cpu:0")->ToString() ==
        "/job:worker/task:1/device:CPU:0");
  CHECK(DeviceName::Parse("")->ToString().empty());
  for (const char* bad : {"job:ps", "/job:", "/task:x", "/device:TPU:0", "/gpu:-1", "/color:red"}) {
    auto d = DeviceName::Parse(bad);
    CHECK(d.status().code() == Code::kInvalidArgument);
    CHECK(d.status().message().find(bad) != std::string::npos);
  }
}

TEST_CASE("merging device specs: the request's parts win") {
  auto base = *DeviceName::Parse("/job:worker/replica:0/task:1/device:CPU:0");
  auto merged = DeviceName::Merge(base, *DeviceName::Parse("/job:ps"));
  CHECK(merged.ToString() == "/job:ps/replica:0/task:1/device:CPU:0");
  merged = DeviceName::Merge(base, *DeviceName::Parse("/device:GPU"));
  CHECK(merged.ToString() == "/job:worker/replica:0/task:1/device:GPU");
  CHECK(DeviceName::Parse("/job:ps")->CompatibleWith(*DeviceName::Parse("/task:3")));
  CHECK(!DeviceName::Parse("/job:ps")->CompatibleWith(*DeviceName::Parse("/job:worker")));
}

TEST_CASE("cluster specs from JSON and TF_CONFIG") {
  auto spec = ClusterSpec::FromJson(R"({"ps": ["h:2222"], "worker": ["h:2223", "h:2224"]})");
  REQUIRE(spec.ok());
  CHECK(spec->NumTasks("worker") == 2);
  CHECK(*spec->TaskAddress("worker", 1) == "h:2224");
  CHECK(spec->TaskAddress("worker", 2).status().code() == Code::kNotFound);
  CHECK(spec->TaskAddress("chief", 0).status().message().find("chief") != std::string::npos);
  CHECK(spec->TaskNames().front() == "/job:ps/replica:0/task:0");

  auto config = ParseTfConfig(
      R"({"cluster": {"ps": ["a:1"], "worker": {"0": "b:2", "1": "c:3"}},
          "task": {"type": "worker", "index": 1}})");
  REQUIRE(config.ok());
  CHECK(config->task_type == "worker");
  CHECK(config->task_index == 1);
  CHECK(*config->cluster.TaskAddress("worker", 1) == "c:3");

  CHECK(ClusterSpec::FromJson("{nope").status().code() == Code::kInvalidArgument);
  CHECK(ClusterSpec::FromJson(R"({"ps": ["nohostport"]})").status().message().find("nohostport") !=
        std::string::npos);
  CHECK(ClusterSpec::FromFlag("/no/such/spec.json").status().code() == Code::kNotFound);
}

TEST_CASE("the chief: chief:0 when the cluster has a chief job, else worker:0") {
  auto with_chief = ClusterSpec::FromJson(R"({"chief": ["c:1"], "ps": ["p:1"], "worker": ["w:1"]})");
  REQUIRE(with_chief.ok());
  CHECK(with_chief->ChiefTask() == "/job:chief/replica:0/task:0");
  auto workers = ClusterSpec::FromJson(R"({"ps": ["p:1"], "worker": ["w:1", "w:2"]})");
  REQUIRE(workers.ok());
  CHECK(workers->ChiefTask() == "/job:worker/replica:0/task:0");
  auto neither = ClusterSpec::FromJson(R"({"ps": ["p:1"], "trainer": ["t:1"]})");
  REQUIRE(neither.ok());
  CHECK(neither->ChiefTask().empty());
}

// The INVALID_ARGUMENT `text` is refused with; fails the test otherwise.
std::string Refusal(const std::string& text) {
  auto spec = ClusterSpec::FromFlag(text);
  INFO(text);
  REQUIRE_FALSE(spec.ok());
  CHECK(spec.status().code() == Code::kInvalidArgument);
  return spec.status().message();
}

bool Has(const std::string& message, const std::string& part) {
  INFO(message << " should name " << part);
  return message.find(part) != std::string::npos;
}

TEST_CASE("cluster spec addresses: a host, and a port from 1 to 65535") {
  for (const char* good : {"h:1", "127.0.0.1:65535", "[::1]:2222", "node-3.example.org:02222"}) {
    INFO(good);
    CHECK(CheckTaskAddress(good).ok());
  }
  const std::string port = Refusal(R"({"ps": ["127.0.0.1:99999"]})");
  CHECK(Has(port, "job 'ps' task 0"));
  CHECK(Has(port, "'127.0.0.1:99999'"));
  CHECK(Has(port, "1 to 65535"));
  CHECK(Has(Refusal(R"({"ps": ["127.0.0.1:abc"]})"), "port 'abc'"));
  CHECK(Has(Refusal(R"({"ps": ["h:1", "127.0.0.1:0"]})"), "job 'ps' task 1"));
  CHECK(Has(Refusal(R"({"ps": ["127.0.0.1:-5"]})"), "port '-5'"));
  CHECK(Has(Refusal(R"({"ps": [":31001"]})"), "no host"));
  CHECK(Has(Refusal(R"({"ps": ["127.0.0.1:"]})"), "no port"));
  CHECK(Has(Refusal(R"({"ps": ["my host:1"]})"), "space"));
  CHECK(Has(Refusal(R"({"ps": ["::1]:1"]})"), "[::1]"));
  CHECK(Has(Refusal(R"({"ps": [")" + std::string(300, 'h') + R"(:1"]})"), "300 bytes"));
}

TEST_CASE("cluster spec: an address is one task's, a task index one key's") {
  const std::string same_job = Refusal(R"({"ps": ["h:1", "h:1"]})");
  CHECK(Has(same_job, "job 'ps' task 1"));
  CHECK(Has(same_job, "'h:1' is also job 'ps' task 0's"));
  const std::string two_jobs = Refusal(R"({"ps": ["h:1"], "worker": ["h:2", "h:1"]})");
  CHECK(Has(two_jobs, "job 'worker' task 1"));
  CHECK(Has(two_jobs, "job 'ps' task 0's"));
  // The same host and port are one address however the task is found.
  CHECK(Has(Refusal(R"({"ps": {"0": "h:1"}, "worker": ["h:1"]})"), "'h:1'"));

  const std::string twice = Refusal(R"({"ps": {"0": "h:1", "00": "h:2"}})");
  CHECK(Has(twice, "job 'ps'"));
  CHECK(Has(twice, "task 0 twice"));
  CHECK(Has(Refusal(R"({"ps": {"1x": "h:1"}})"), "'1x'"));
  CHECK(Has(Refusal(R"({"ps": {"-1": "h:1"}})"), "'-1'"));
  CHECK(Has(Refusal(R"({"ps": {"0": "h:1", "2": "h:2"}})"), "skips task 1"));
  auto sparse = ClusterSpec::FromJson(R"({"ps": {"1": "h:2", "0": "h:1"}})");
  REQUIRE(sparse.ok());
  CHECK(*sparse->TaskAddress("ps", 1) == "h:2");
}

TEST_CASE("cluster spec job names: a letter, then letters, digits, '_' and '-'") {
  // param-server: the job docs/operations.md's systemd instances name.
  CHECK(ClusterSpec::FromJson(R"({"ps_2": ["h:1"], "Worker9": ["h:2"], "param-server": ["h:3"]})")
            .ok());
  for (const char* bad : {"a/b", "", "2ps", "-ps", "job:ps", "p s", "ps.0"}) {
    const std::string message = Refusal(std::string(R"({")") + bad + R"(": ["h:1"]})");
    CHECK(Has(message, std::string("job name '") + bad + "'"));
  }
}

TEST_CASE("cluster spec flags: JSON other than an object is no file name") {
  for (const char* bad : {"[]", " [\"h:1\"]", "null", "3", "\"ps\""}) {
    CHECK(Has(Refusal(bad), "must be a JSON object of jobs"));
  }
  auto none = ClusterSpec::FromFlag("/no/such/spec.json");
  CHECK(none.status().code() == Code::kNotFound);
  CHECK(Has(none.status().message(), "/no/such/spec.json"));
  auto empty = ClusterSpec::FromFlag("{}");
  REQUIRE(empty.ok());
  CHECK(empty->NumTasks() == 0);
  CHECK(ClusterSpec::FromFlag(R"({"ps": ["h:1"], "worker": ["h:2", "h:3"]})")->NumTasks() == 3);
}

// A file of its own, removed at the end.
struct TempFile {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("cluster_spec_test." + std::to_string(getpid()));
  ~TempFile() { std::filesystem::remove(path); }
};

TEST_CASE("cluster spec files: over 16 MiB refused unread, naming path and size") {
  TempFile huge;
  { std::ofstream(huge.path) << "{}"; }
  // Sparse: 2 GiB on paper, nothing on disk.
  std::filesystem::resize_file(huge.path, uint64_t{2} << 30);
  const std::string message = Refusal(huge.path.string());
  CHECK(Has(message, huge.path.string()));
  CHECK(Has(message, "2147483648 bytes"));
  CHECK(Has(message, std::to_string(kMaxClusterSpecFileBytes)));
  // A device has no size to check first: reading stops past the limit.
  CHECK(Has(Refusal("/dev/zero"), "over " + std::to_string(kMaxClusterSpecFileBytes)));
  // A directory is not a file to read.
  CHECK(Has(Refusal(std::filesystem::temp_directory_path().string()), "directory"));
}

TEST_CASE("cluster spec JSON errors give the place and a short printable excerpt") {
  TempFile bad;
  std::string text = "{\"ps\": [\"h:1\"],\n \"w\": \x01\xff";
  text += std::string(100000, 'x');
  { std::ofstream(bad.path, std::ios::binary) << text; }
  const std::string message = Refusal(bad.path.string());
  CHECK(Has(message, "not valid JSON"));
  CHECK(Has(message, "line 2, column 7"));
  CHECK(Has(message, "\\x01"));
  CHECK(message.size() < 400);
  CHECK(std::all_of(message.begin(), message.end(), [](char c) { return c >= 0x20 && c < 0x7f; }));
  const std::string nope = Refusal("{nope");
  CHECK(Has(nope, "line 1, column 3"));  // the "o" that "null" cannot have
  CHECK(Has(nope, "'{nope'"));
}

}  // namespace
}  // namespace tfd
