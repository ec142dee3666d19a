// Placement and partitioning: where nodes run and how edges between tasks
// are cut — the rules distributed-TF users rely on.
#include "daemon/runtime/placement.h"

#include <catch2/catch.hpp>

#include "common/graph_io.h"
#include "daemon/runtime/partition.h"
#include "tests/util/test_ops.h"

namespace tfd {
namespace {

struct Fixture {
  Fixture() {
    REQUIRE(testing::RegisterTestOps(registry).ok());
    options.cluster = *ClusterSpec::FromJson(
        R"({"ps": ["h:1", "h:2"], "worker": ["h:3", "h:4", "h:5"]})");
    options.master = *DeviceName::Parse("/job:worker/task:1");
  }
  Graph Build(const std::string& nodes) {
    auto def = ParseGraph("(nodes = [" + nodes + "])", "test.txt");
    INFO(def.status().ToString());
    REQUIRE(def.ok());
    auto g = Graph::Build(*def, registry);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    return std::move(g).value();
  }
  std::string DeviceOf(const Graph& g, const std::vector<std::string>& d, const std::string& n) {
    return d[g.FindNode(n)];
  }
  OpRegistry registry;
  PlacementOptions options;
};

const char* kConst = R"g((name = "%s", op = "TConst", device = "%s", attrs = [
   (name = "value", value = (tensor = (dtype = float32, floatVal = [1]))),
   (name = "dtype", value = (type = float32))]))g";

std::string Const(const std::string& name, const std::string& device) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), kConst, name.c_str(), device.c_str());
  return buf;
}

const char* kAdd = R"g((name = "%s", op = "TAdd", device = "%s", inputs = ["%s", "%s"]))g";

std::string Add(const std::string& name, const std::string& device, const std::string& x,
                const std::string& y) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), kAdd, name.c_str(), device.c_str(), x.c_str(), y.c_str());
  return buf;
}

TEST_CASE("explicit, partial and missing requests are resolved as the design says") {
  Fixture f;
  Graph g = f.Build(Const("pinned", "/job:ps/task:1") + "," + Const("ps_job", "/job:ps") + "," +
                    Const("own_job", "/job:worker") + "," + Const("task_only", "/task:2") + "," +
                    Const("cpu_only", "/cpu:0") + "," + Const("none", "") + "," +
                    Const("gpu", "/job:worker/task:0/gpu:0"));
  f.options.allow_soft_placement = true;  // no task has a GPU: "gpu" runs on the CPU
  auto d = Place(g, f.options);
  REQUIRE(d.ok());
  CHECK(f.DeviceOf(g, *d, "pinned") == "/job:ps/replica:0/task:1/device:CPU:0");
  CHECK(f.DeviceOf(g, *d, "ps_job") == "/job:ps/replica:0/task:0/device:CPU:0");
  CHECK(f.DeviceOf(g, *d, "own_job") == "/job:worker/replica:0/task:1/device:CPU:0");
  CHECK(f.DeviceOf(g, *d, "task_only") == "/job:worker/replica:0/task:2/device:CPU:0");
  CHECK(f.DeviceOf(g, *d, "cpu_only") == "/job:worker/replica:0/task:1/device:CPU:0");
  CHECK(f.DeviceOf(g, *d, "none") == "/job:worker/replica:0/task:1/device:CPU:0");
  CHECK(f.DeviceOf(g, *d, "gpu") == "/job:worker/replica:0/task:0/device:CPU:0");
}

TEST_CASE("unknown jobs and tasks are errors naming the node and the request") {
  Fixture f;
  auto d = Place(f.Build(Const("x", "/job:chief")), f.options);
  CHECK(d.status().code() == Code::kInvalidArgument);
  CHECK(d.status().message().find("node 'x'") != std::string::npos);
  CHECK(d.status().message().find("'chief'") != std::string::npos);
  d = Place(f.Build(Const("y", "/job:ps/task:7")), f.options);
  CHECK(d.status().message().find("/job:ps/task:7") != std::string::npos);
  d = Place(f.Build(Const("z", "/job:ps/color:red")), f.options);
  CHECK(d.status().message().find("color") != std::string::npos);
}

TEST_CASE("ops taking a resource by reference run where the resource lives") {
  Fixture f;
  Graph g = f.Build(std::string(R"g((name = "v", op = "TVar", device = "/job:ps/task:1"),
                      (name = "set", op = "TSet", inputs = ["v", "one"], device = "/job:worker"),)g") +
                    Const("one", "/job:worker/task:2"));
  auto d = Place(g, f.options);
  REQUIRE(d.ok());
  CHECK(f.DeviceOf(g, *d, "set") == "/job:ps/replica:0/task:1/device:CPU:0");
  CHECK(f.DeviceOf(g, *d, "one") == "/job:worker/replica:0/task:2/device:CPU:0");
}

TEST_CASE("nodes without a device run on the master's own task, as in TF1") {
  // Between-graph replication of a graph that forgot its devices: worker 1's
  // step must involve worker 1 and the ps only, never worker 0.
  Fixture f;
  Graph g = f.Build(Const("a", "") + "," + Const("b", "") + "," + Add("sum", "", "a", "b") + "," +
                    R"g((name = "w", op = "TVar", device = "/job:ps/task:1"),
                        (name = "update", op = "TSet", inputs = ["w", "sum"]),
                        (name = "local", op = "TVar"),
                        (name = "set_local", op = "TSet", inputs = ["local", "a"],
                         device = "/job:worker/task:2"))g");
  auto d = Place(g, f.options);
  INFO(d.status().ToString());
  REQUIRE(d.ok());
  for (const char* node : {"a", "b", "sum", "local", "set_local"}) {
    INFO(node);
    CHECK(f.DeviceOf(g, *d, node) == "/job:worker/replica:0/task:1/device:CPU:0");
  }
  // An op taking a variable on the ps by reference runs there.
  CHECK(f.DeviceOf(g, *d, "w") == "/job:ps/replica:0/task:1/device:CPU:0");
  CHECK(f.DeviceOf(g, *d, "update") == "/job:ps/replica:0/task:1/device:CPU:0");

  // A session on a ps task (a checkpoint or inspection step) keeps them there.
  f.options.master = *DeviceName::Parse("/job:ps/task:1");
  d = Place(g, f.options);
  REQUIRE(d.ok());
  CHECK(f.DeviceOf(g, *d, "sum") == "/job:ps/replica:0/task:1/device:CPU:0");
  CHECK(f.DeviceOf(g, *d, "set_local") == "/job:ps/replica:0/task:1/device:CPU:0");
}

TEST_CASE("partitioning cuts every cross-task edge with one Send/Recv pair per tensor and task") {
  Fixture f;
  Graph g = f.Build(Const("a", "/job:ps/task:0") + "," +
                    R"g((name = "b", op = "TAdd", inputs = ["a", "a"], device = "/job:worker/task:0"),
                        (name = "c", op = "TAdd", inputs = ["a", "b"], device = "/job:worker/task:0"),
                        (name = "r", op = "TRecord", inputs = ["^c"], device = "/job:ps/task:1"))g");
  auto d = Place(g, f.options);
  REQUIRE(d.ok());
  auto parts = PartitionGraph(g, *d);
  REQUIRE(parts.ok());
  REQUIRE(parts->size() == 3);
  const GraphDef& ps0 = parts->at("/job:ps/replica:0/task:0");
  const GraphDef& w0 = parts->at("/job:worker/replica:0/task:0");
  const GraphDef& ps1 = parts->at("/job:ps/replica:0/task:1");
  auto count = [](const GraphDef& gd, const std::string& op) {
    return std::count_if(gd.nodes.begin(), gd.nodes.end(),
                         [&](const NodeDef& n) { return n.op == op; });
  };
  CHECK(count(ps0, "_Send") == 1);   // a -> worker 0, once for three uses
  CHECK(count(w0, "_Recv") == 1);
  CHECK(count(w0, "_Signal") == 1);  // ^c -> ps 1
  CHECK(count(w0, "_Send") == 1);
  CHECK(count(ps1, "_Recv") == 1);
  // Every partition carries the versions of the graph it was cut from (this
  // one, from a text file without them, producer 0), for its task to check.
  REQUIRE(g.versions() == GraphVersions{.producer = 0, .min_consumer = 0});
  for (auto& [task, def] : *parts) CHECK(def.versions == g.versions());
  // Every partition is a valid graph on its own.
  for (auto& [task, def] : *parts) {
    auto pg = Graph::Build(def, f.registry);
    INFO(task << ": " << pg.status().ToString());
    CHECK(pg.ok());
  }
  // The pair's keys agree.
  const NodeDef* send = nullptr;
  const NodeDef* recv = nullptr;
  for (const NodeDef& n : ps0.nodes) if (n.op == "_Send") send = &n;
  for (const NodeDef& n : w0.nodes) if (n.op == "_Recv") recv = &n;
  REQUIRE((send && recv));
  CHECK(std::get<std::string>(send->attrs.at("tensor_name")) ==
        std::get<std::string>(recv->attrs.at("tensor_name")));
  CHECK(std::get<std::string>(send->attrs.at("recv_device")) ==
        "/job:worker/replica:0/task:0/device:CPU:0");
}

// TAdd, TVar and TSet get a GPU kernel (their CPU one: placement only
// looks at whether there is one); TConst has none.
void GiveGpuKernels(OpRegistry& r) {
  for (const char* op : {"TAdd", "TVar", "TSet"}) {
    REQUIRE(r.RegisterKernel(op, kDeviceGpu, r.Find(op)->kernels.at(kDeviceCpu)).ok());
  }
}

TEST_CASE("a GPU request is met on the master's task, and refused or soft-placed elsewhere") {
  Fixture f;
  GiveGpuKernels(f.registry);
  f.options.master_gpus = 1;
  Graph g = f.Build(Const("a", "") + "," + Const("b", "") + "," +
                    Add("own", "/job:worker/gpu:0", "a", "b") + "," +
                    Add("explicit", "/job:worker/task:1/device:GPU:0", "a", "b"));
  auto d = Place(g, f.options);
  INFO(d.status().ToString());
  REQUIRE(d.ok());
  // The master is worker task 1: "/job:worker" is its own task.
  CHECK(f.DeviceOf(g, *d, "own") == "/job:worker/replica:0/task:1/device:GPU:0");
  CHECK(f.DeviceOf(g, *d, "explicit") == "/job:worker/replica:0/task:1/device:GPU:0");
  CHECK(f.DeviceOf(g, *d, "a") == "/job:worker/replica:0/task:1/device:CPU:0");  // asked for none

  // What cannot be met is an error naming the node, the device and why.
  struct Refused {
    std::string graph, node, why;
  };
  for (const Refused& r : std::vector<Refused>{
           {Add("second", "/job:worker/gpu:1", "a", "b"), "second", "has 1 GPU"},
           {Add("other", "/job:worker/task:0/gpu:0", "a", "b"), "other",
            "knows only its own task's GPUs"},
           {Const("c", "/job:worker/gpu:0"), "c", "op TConst has no GPU kernel"}}) {
    Graph bad = f.Build(Const("a", "") + "," + Const("b", "") + "," + r.graph);
    f.options.allow_soft_placement = false;
    auto refused = Place(bad, f.options);
    INFO(refused.status().ToString());
    CHECK(refused.status().code() == Code::kInvalidArgument);
    CHECK(refused.status().message().find("node '" + r.node + "'") != std::string::npos);
    CHECK(refused.status().message().find(r.why) != std::string::npos);
    CHECK(refused.status().message().find("--allow-soft-placement") != std::string::npos);
    // With soft placement it runs on its task's CPU.
    f.options.allow_soft_placement = true;
    auto soft = Place(bad, f.options);
    REQUIRE(soft.ok());
    CHECK(f.DeviceOf(bad, *soft, r.node).find("/device:CPU:0") != std::string::npos);
  }
}

TEST_CASE("a master without a GPU says why when a node asks for one") {
  Fixture f;
  GiveGpuKernels(f.registry);
  f.options.gpus_unavailable = "no CUDA device";
  auto refused = Place(f.Build(Const("a", "") + "," + Add("x", "/job:worker/gpu:0", "a", "a")),
                       f.options);
  INFO(refused.status().ToString());
  CHECK(refused.status().code() == Code::kInvalidArgument);
  CHECK(refused.status().message().find("no usable GPU: no CUDA device") != std::string::npos);
}

TEST_CASE("a resource and the ops taking it go to the GPU together or not at all") {
  Fixture f;
  GiveGpuKernels(f.registry);
  f.options.master_gpus = 1;
  const std::string set =
      R"g((name = "set", op = "TSet", inputs = ["v", "a"]))g";
  Graph g = f.Build(R"g((name = "v", op = "TVar", device = "/job:worker/gpu:0"))g" "," +
                    Const("a", "") + "," + set);
  auto d = Place(g, f.options);
  INFO(d.status().ToString());
  REQUIRE(d.ok());
  CHECK(f.DeviceOf(g, *d, "v") == "/job:worker/replica:0/task:1/device:GPU:0");
  CHECK(f.DeviceOf(g, *d, "set") == "/job:worker/replica:0/task:1/device:GPU:0");
  // A member without a GPU kernel keeps the whole group off the GPU.
  REQUIRE(f.registry.Register(OpDefBuilder("TPeek").Input("ref: Ref(float32)"),
                              shape_fns::NoOutputs).ok());
  REQUIRE(f.registry.RegisterKernel("TPeek", kDeviceCpu, f.registry.Find("TSet")->kernels.at(kDeviceCpu)).ok());
  Graph peek = f.Build(R"g((name = "v", op = "TVar", device = "/job:worker/gpu:0"),
                          (name = "peek", op = "TPeek", inputs = ["v"]))g");
  auto refused = Place(peek, f.options);
  INFO(refused.status().ToString());
  CHECK(refused.status().code() == Code::kInvalidArgument);
  CHECK(refused.status().message().find("runs with node 'peek' (TPeek)") != std::string::npos);

  // The same in a step that prunes TPeek away: the session's whole graph
  // decides, so the variable is on the same device in every step (a step
  // that initializes it must not put it on the GPU when another step reads
  // it on the CPU).
  Graph whole = f.Build(R"g((name = "v", op = "TVar", device = "/job:worker/gpu:0"),
                           (name = "peek", op = "TPeek", inputs = ["v"]))g" "," +
                        Const("a", "") + "," + set);
  Graph step = f.Build(R"g((name = "v", op = "TVar", device = "/job:worker/gpu:0"))g" "," +
                       Const("a", "") + "," + set);
  f.options.whole_graph = &whole;
  auto in_step = Place(step, f.options);
  INFO(in_step.status().ToString());
  CHECK(in_step.status().code() == Code::kInvalidArgument);
  CHECK(in_step.status().message().find("runs with node 'peek' (TPeek)") != std::string::npos);
  f.options.allow_soft_placement = true;
  auto soft = Place(step, f.options);
  REQUIRE(soft.ok());
  CHECK(f.DeviceOf(step, *soft, "v") == "/job:worker/replica:0/task:1/device:CPU:0");
  CHECK(f.DeviceOf(step, *soft, "set") == "/job:worker/replica:0/task:1/device:CPU:0");
}

}  // namespace
}  // namespace tfd
