// The graph builder (common/scope.h) through the typed wrappers:
// names, devices, control dependencies, inferred dtypes and shapes, errors
// that accumulate, and graphs that survive a file round trip.
#include "common/scope.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include <catch2/catch.hpp>

#include "api/graph_file.h"
#include "api/ops.h"
#include "api/variables.h"
#include "common/graph_io.h"
#include "common/summary_proto.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::AllOps;

const NodeDef& NodeNamed(const Scope& s, const std::string& name) {
  const int id = s.FindNode(name);
  INFO("node " << name);
  REQUIRE(id >= 0);
  return s.node(id);
}

TEST_CASE("nodes are named after their op under the scope's prefix, uniquely") {
  const Scope root = Scope::NewRootScope(AllOps());
  const Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat32, {2, 2});
  const Scope layer = root.WithName("layer1");
  const Output a = ops::MatMul(layer, x, x);
  const Output b = ops::MatMul(layer, a, x);
  const Output c = ops::Relu(layer.WithName("act").WithOpName("out"), b);
  const Output d = ops::Relu(layer.WithName("act").WithOpName("out"), c);
  REQUIRE(root.ok());
  CHECK(x.node == "x");
  CHECK(a.node == "layer1/MatMul");
  CHECK(b.node == "layer1/MatMul_1");
  CHECK(c.node == "layer1/act/out");
  CHECK(d.node == "layer1/act/out_1");
  // A literal operand becomes its own Const, not a node with the op's name.
  const Output e = ops::Mul(root.WithOpName("scaled"), x, 2);
  CHECK(e.node == "scaled");
  CHECK(NodeNamed(root, "scaled").inputs == std::vector<std::string>{"x", "Const"});
}

TEST_CASE("outputs carry the dtype and shape inference gives them") {
  const Scope root = Scope::NewRootScope(AllOps());
  const Output x = ops::Placeholder(root, DType::kFloat32, {-1, 784});
  const Output w = ops::Const(root, Tensor::FromVector<float>(std::vector<float>(7840),
                                                              TensorShape{784, 10}));
  const Output y = ops::MatMul(root, x, w);
  const Output m = ops::Mean(root, y, {0, 1});
  const auto parts = ops::Unstack(root, ops::Const(root, {{1.0f, 2.0f}, {3.0f, 4.0f}}), 2);
  REQUIRE(root.ok());
  CHECK(y.dtype == DType::kFloat32);
  CHECK(y.shape == PartialShape({-1, 10}));
  CHECK(m.shape == PartialShape({}));
  REQUIRE(parts.size() == 2);
  CHECK(parts[1].name() == "Unpack:1");
  CHECK(parts[1].shape == PartialShape({2}));
  // A literal beside a tensor takes the tensor's dtype.
  const Output z = ops::Add(root, y, 1);
  CHECK(z.dtype == DType::kFloat32);
  CHECK(root.ok());
}

TEST_CASE("devices merge like nested tf.device blocks") {
  const Scope root = Scope::NewRootScope(AllOps());
  const Scope ps = root.WithDevice("/job:ps");
  const Output a = ops::Const(ps.WithDevice("/task:1"), 1.0f);
  const Output b = ops::Const(ps.WithDevice("/job:worker/task:2").WithDevice("/cpu:0"), 1.0f);
  const Output c = ops::Const(root, 1.0f);
  REQUIRE(root.ok());
  CHECK(NodeNamed(root, a.node).device == "/job:ps/task:1");
  CHECK(NodeNamed(root, b.node).device == "/job:worker/task:2/device:CPU:0");
  CHECK(NodeNamed(root, c.node).device.empty());
  // A malformed spec is the scope's error.
  root.WithDevice("job:ps");
  CHECK(root.status().code() == Code::kInvalidArgument);
  CHECK(root.status().message().find("job:ps") != std::string::npos);
}

TEST_CASE("control dependencies become ^inputs of every node in the scope") {
  const Scope root = Scope::NewRootScope(AllOps());
  const Operation first = ops::NoOp(root.WithOpName("first"));
  const Output v = ops::Const(root.WithOpName("v"), 1.0f);
  const Scope after = root.WithControlDependencies({first}).WithControlDependencies({v});
  const Output y = ops::Identity(after.WithOpName("y"), v);
  const Output z = ops::Identity(after.WithNoControlDependencies().WithOpName("z"), v);
  const Operation group = ops::Group(root.WithOpName("group"), {first, Operation{y.node, {}}});
  REQUIRE(root.ok());
  CHECK(NodeNamed(root, "y").inputs == std::vector<std::string>{"v", "^first", "^v"});
  CHECK(NodeNamed(root, "z").inputs == std::vector<std::string>{"v"});
  CHECK(NodeNamed(root, group.name).inputs == std::vector<std::string>{"^first", "^y"});
}

TEST_CASE("the first error is kept and later ops become no-ops") {
  const Scope root = Scope::NewRootScope(AllOps());
  const Output a = ops::Const(root, {{1.0f, 2.0f, 3.0f}});     // [1, 3]
  const Output bad = ops::MatMul(root.WithOpName("bad"), a, a);  // [1, 3] x [1, 3]
  CHECK(!bad.valid());
  const Status first = root.status();
  CHECK(first.code() == Code::kInvalidArgument);
  CHECK(first.message().find("node 'bad' (MatMul)") != std::string::npos);
  // Later wrappers given the invalid output add nothing and keep the error.
  const Output later = ops::Relu(root, bad);
  CHECK(!later.valid());
  root.AddOp("NoSuchOp", {});
  CHECK(root.status() == first);
  CHECK(root.FindNode("Relu") < 0);
  CHECK(root.ToGraphDef().nodes.size() == 1);
}

TEST_CASE("an unknown op is NOT_FOUND, a dtype mismatch INVALID_ARGUMENT") {
  const Scope r1 = Scope::NewRootScope(AllOps());
  r1.AddOp("MatMull", {});
  CHECK(r1.status().code() == Code::kNotFound);
  CHECK(r1.status().message().find("MatMul") != std::string::npos);

  const Scope r2 = Scope::NewRootScope(AllOps());
  ops::Add(r2, ops::Const(r2, 1.0f), ops::Const(r2, 1.0));
  CHECK(r2.status().code() == Code::kInvalidArgument);
  CHECK(r2.status().message().find("float64") != std::string::npos);
}

TEST_CASE("a built graph round-trips through graph files and validates") {
  const Scope root = Scope::NewRootScope(AllOps());
  const Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat32, {-1, 3});
  ops::Variable w(root.WithOpName("w"), {3, 2}, DType::kFloat32,
                  ops::Initializer::RandomNormal(0.1, 7));
  ops::Variable b(root.WithOpName("b"), {2}, DType::kFloat32, ops::Initializer::Zeros());
  const Output y = ops::Add(root.WithOpName("y"), ops::MatMul(root, x, w), b);
  ops::GlobalVariablesInitializer(root);
  REQUIRE(root.ok());
  const GraphDef built = root.ToGraphDef();
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tfd_api_roundtrip_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (GraphFormat format : {GraphFormat::kBinary, GraphFormat::kText}) {
    const std::string path = (dir / (format == GraphFormat::kBinary ? "g.capnp" : "g.txt"));
    const Status written = WriteGraphFile(root, path, format);
    INFO(written.ToString());
    REQUIRE(written.ok());
    auto loaded = LoadGraph(path);
    INFO(loaded.status().ToString());
    REQUIRE(loaded.ok());
    // What was built, less the attrs equal to their defaults.
    GraphDef stripped = built;
    StripDefaultAttrs(AllOps(), stripped);
    CHECK(SerializeGraph(*loaded, GraphFormat::kBinary) ==
          SerializeGraph(stripped, GraphFormat::kBinary));
    auto graph = Graph::Build(*loaded, AllOps());
    INFO(graph.status().ToString());
    REQUIRE(graph.ok());
    CHECK(graph->FindNode("w/read") >= 0);
    CHECK(graph->node(graph->FindNode("y")).output_shapes[0] == PartialShape({-1, 2}));
  }
  // A scope holding an error writes nothing.
  ops::MatMul(root, x, ops::Const(root, 1.0f));
  REQUIRE(!root.ok());
  const std::string refused = dir / "refused.capnp";
  CHECK(WriteGraphFile(root, refused).code() == Code::kInvalidArgument);
  CHECK(!std::filesystem::exists(refused));
  std::filesystem::remove_all(dir);
}

// A rolling upgrade: graphs written by a newer mnist-graph reach tasks still
// on the older tfd, whose op lacks an attr the newer one added.
TEST_CASE("a graph written without its default attrs loads where the op lacks a newer attr") {
  OpRegistry newer, older;
  REQUIRE(newer.Register(OpDefBuilder("Widget").Output("y: float32").Attr("size: int")
                             .Attr("fancy: bool = false"), shape_fns::Unknown).ok());
  REQUIRE(older.Register(OpDefBuilder("Widget").Output("y: float32").Attr("size: int"),
                         shape_fns::Unknown).ok());
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tfd_api_strip_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](bool fancy) -> StatusOr<GraphDef> {
    const Scope root = Scope::NewRootScope(newer);
    root.WithOpName("w").AddOp("Widget", {}, {{"size", int64_t{3}}, {"fancy", fancy}});
    const std::string path = dir / (fancy ? "fancy.capnp" : "plain.capnp");
    TFD_RETURN_IF_ERROR(WriteGraphFile(root, path));
    return LoadGraph(path);
  };
  auto plain = write(false);
  REQUIRE(plain.ok());
  CHECK(plain->nodes[0].attrs.size() == 1);  // size alone: fancy = false is the default
  CHECK(Graph::Build(*plain, older).ok());
  // An attr set to something else is kept, and the older tfd says which.
  auto fancy = write(true);
  REQUIRE(fancy.ok());
  const Status refused = Graph::Build(*fancy, older).status();
  CHECK(refused.code() == Code::kInvalidArgument);
  CHECK(refused.message().find("op Widget has no attr 'fancy'") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a built graph runs: variables initialize and compute") {
  testing::ApiEnv env;
  const Scope root = env.Root();
  ops::Variable w(root.WithOpName("w"), {2}, DType::kFloat32, ops::Initializer::Constant(3));
  ops::Variable n(root.WithOpName("n"), {2, 2}, DType::kFloat64,
                  ops::Initializer::RandomNormal(2.0, 5, 10.0));
  const Output y = ops::Mul(root.WithOpName("y"), w, ops::Placeholder(root.WithOpName("x"),
                                                                       DType::kFloat32, {2}));
  ops::ScalarSummary(root, "total", ops::Sum(root, y, 0));
  ops::GlobalVariablesInitializer(root);
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {"init"}).ok());
  auto out = session->Run({{"x", Tensor::FromVector<float>({1, 2})}},
                          {"y", "summaries/total", "n/read"}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(TensorsEqual(out->fetches[0], Tensor::FromVector<float>({3, 6})));
  CHECK(out->fetches[1].scalar<float>() == 9.0f);
  // N(10, 2): four draws all within 10 standard deviations of the mean.
  for (int i = 0; i < 4; ++i) {
    CHECK(std::abs(out->fetches[2].data<double>()[i] - 10.0) < 20.0);
  }
  CHECK(out->fetches[2].data<double>()[0] != out->fetches[2].data<double>()[1]);
}

TEST_CASE("summaries: the node a trainer reads, and the op's serialized Summary") {
  testing::ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat32, {3});
  const Output total = ops::ScalarSummary(root, "total", ops::Sum(root, x, 0));
  const Output spread = ops::HistogramSummary(root, "x", x);
  ops::MergeSummary(root.WithOpName("merged"), {total, spread});
  auto session = env.Session(root);
  auto out = session->Run({{"x", Tensor::FromVector<float>({1, 2, 4})}},
                          {"summaries/total", "histogram_summaries/x", "merged"}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->fetches[0].scalar<float>() == 7.0f);
  CHECK(TensorsEqual(out->fetches[1], Tensor::FromVector<float>({1, 2, 4})));
  auto tags = summary::Tags(out->fetches[2].scalar<std::string>());
  REQUIRE(tags.ok());
  CHECK(*tags == std::vector<std::string>{"total", "x"});
}

}  // namespace
}  // namespace tfd
