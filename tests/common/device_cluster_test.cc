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

}  // namespace
}  // namespace tfd
