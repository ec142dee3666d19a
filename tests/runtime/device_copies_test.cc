// Copies between host and device memory: where the runtime puts them in a
// placed graph. Pure graph rewriting, so it runs without a GPU (the test ops
// get GPU kernels that are never run).
#include "daemon/runtime/device_copies.h"

#include <catch2/catch.hpp>

#include "common/graph_io.h"
#include "tests/util/test_ops.h"

namespace tfd {
namespace {

constexpr const char* kGpu = "/job:w/replica:0/task:0/device:GPU:0";
constexpr const char* kCpu = "/job:w/replica:0/task:0/device:CPU:0";

struct Fixture {
  Fixture() {
    REQUIRE(testing::RegisterTestOps(registry).ok());
    for (const char* op : {"TAdd", "TVar", "TSet"}) {
      REQUIRE(registry.RegisterKernel(op, kDeviceGpu, registry.Find(op)->kernels.at(kDeviceCpu)).ok());
    }
    // A GPU op whose second input stays on the host (an axis, a shape).
    REQUIRE(registry.Register(OpDefBuilder("TScale").Input("x: float32").Input("by: float32")
                                  .Output("y: float32"), shape_fns::UnchangedShape).ok());
    REQUIRE(registry.RegisterKernel("TScale", kDeviceGpu, registry.Find("TAdd")->kernels.at(kDeviceCpu),
                                    {.inputs = 1u << 1}).ok());
  }
  GraphDef Rewrite(const std::string& nodes) {
    auto def = ParseGraph("(nodes = [" + nodes + "])", "test.txt");
    INFO(def.status().ToString());
    REQUIRE(def.ok());
    auto g = Graph::Build(*def, registry);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    auto out = InsertDeviceCopies(*g);
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    // What comes out is a graph the runtime can build.
    auto rebuilt = Graph::Build(*out, registry);
    INFO(rebuilt.status().ToString());
    REQUIRE(rebuilt.ok());
    return *out;
  }
  OpRegistry registry;
};

std::string Const(const std::string& name, const std::string& device) {
  return "(name = \"" + name + "\", op = \"TConst\", device = \"" + device +
         "\", attrs = [(name = \"value\", value = (tensor = (dtype = float32, floatVal = [1]))),"
         " (name = \"dtype\", value = (type = float32))])";
}
std::string Node(const std::string& name, const std::string& op, const std::string& device,
                 const std::vector<std::string>& inputs) {
  std::string in;
  for (const std::string& i : inputs) in += (in.empty() ? "\"" : ", \"") + i + "\"";
  return "(name = \"" + name + "\", op = \"" + op + "\", device = \"" + device + "\", inputs = [" +
         in + "])";
}
const NodeDef* Find(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}
int Count(const GraphDef& g, const std::string& op) {
  int k = 0;
  for (const NodeDef& n : g.nodes) k += n.op == op;
  return k;
}

TEST_CASE("a graph without GPU nodes comes back unchanged") {
  Fixture f;
  GraphDef g = f.Rewrite(Const("a", kCpu) + "," + Node("s", "TAdd", kCpu, {"a", "a"}));
  CHECK(g.nodes.size() == 2);
}

TEST_CASE("tensors crossing to and from a GPU get one copy each, on the GPU side") {
  Fixture f;
  GraphDef g = f.Rewrite(Const("a", kCpu) + "," + Node("s", "TAdd", kGpu, {"a", "a"}) + "," +
                         Node("t", "TAdd", kGpu, {"s", "a"}) + "," +
                         Node("u", "TAdd", kCpu, {"t", "t"}) + "," +
                         Node("v", "TAdd", kCpu, {"t", "s"}));
  // a goes up once for its three GPU uses; t and s come down once each.
  CHECK(Count(g, "_CopyToDevice") == 1);
  CHECK(Count(g, "_CopyToHost") == 2);
  const NodeDef* up = Find(g, "a/_0_to_GPU_0");
  REQUIRE(up != nullptr);
  CHECK(up->device == kGpu);
  CHECK(up->inputs == std::vector<std::string>{"a"});
  CHECK(Find(g, "s")->inputs == std::vector<std::string>{"a/_0_to_GPU_0", "a/_0_to_GPU_0"});
  CHECK(Find(g, "t")->inputs == std::vector<std::string>{"s", "a/_0_to_GPU_0"});
  CHECK(Find(g, "u")->inputs == std::vector<std::string>{"t/_0_to_host", "t/_0_to_host"});
  CHECK(Find(g, "v")->inputs == std::vector<std::string>{"t/_0_to_host", "s/_0_to_host"});
  CHECK(Find(g, "t/_0_to_host")->device == kGpu);
  CHECK(std::get<DType>(Find(g, "t/_0_to_host")->attrs.at("T")) == DType::kFloat32);
}

TEST_CASE("arguments a GPU kernel keeps on the host are not copied, and are fetched back") {
  Fixture f;
  GraphDef g = f.Rewrite(Const("a", kCpu) + "," + Node("s", "TAdd", kGpu, {"a", "a"}) + "," +
                         Node("by_host", "TScale", kGpu, {"s", "a"}) + "," +
                         Node("by_gpu", "TScale", kGpu, {"s", "s"}));
  CHECK(Find(g, "by_host")->inputs == std::vector<std::string>{"s", "a"});
  CHECK(Find(g, "by_gpu")->inputs == std::vector<std::string>{"s", "s/_0_to_host"});
}

TEST_CASE("references are never copied, and the runtime's own nodes move to the CPU") {
  Fixture f;
  GraphDef g = f.Rewrite(Node("v", "TVar", kGpu, {}) + "," + Const("a", kCpu) + "," +
                         Node("set", "TSet", kGpu, {"v", "a"}) + "," +
                         "(name = \"send\", op = \"_Retval\", device = \"" + kGpu +
                         "\", inputs = [\"a\"], attrs = [(name = \"index\", value = (i = 0))])");
  CHECK(Find(g, "set")->inputs == std::vector<std::string>{"v", "a/_0_to_GPU_0"});
  CHECK(Find(g, "send")->device == kCpu);
  CHECK(Find(g, "send")->inputs == std::vector<std::string>{"a"});
}

TEST_CASE("a tensor moving between two GPUs is refused, naming both") {
  Fixture f;
  auto def = ParseGraph("(nodes = [" + Const("a", kCpu) + "," + Node("s", "TAdd", kGpu, {"a", "a"}) +
                            "," + Node("t", "TAdd", "/job:w/replica:0/task:0/device:GPU:1", {"s", "s"}) +
                            "])",
                        "test.txt");
  REQUIRE(def.ok());
  auto graph = Graph::Build(*def, f.registry);
  REQUIRE(graph.ok());
  auto out = InsertDeviceCopies(*graph);
  CHECK(out.status().code() == Code::kInvalidArgument);
  CHECK(out.status().message().find("node 't'") != std::string::npos);
  CHECK(out.status().message().find("GPU:0") != std::string::npos);
}

}  // namespace
}  // namespace tfd
