// Graph files and validation: what a user writing graphs by hand relies on.
#include "common/graph.h"

#include <sys/resource.h>

#include <capnp/message.h>
#include <capnp/serialize-text.h>
#include <capnp/serialize.h>
#include <catch2/catch.hpp>

#include "common/graph_io.h"
#include "common/memory_budget.h"
#include "common/prune.h"
#include "tests/util/test_ops.h"

namespace tfd {
namespace {

OpRegistry& Registry() {
  static OpRegistry registry;
  static const bool filled = testing::RegisterTestOps(registry).ok();
  REQUIRE(filled);
  return registry;
}

const char* kDiamond = R"(
  # a diamond: d = (a + a) + (a + a)
  (nodes = [
    (name = "a", op = "TConst", attrs = [
       (name = "value", value = (tensor = (dtype = float32, shape = [2], floatVal = [1, 2]))),
       (name = "dtype", value = (type = float32))]),
    (name = "b", op = "TAdd", inputs = ["a", "a:0"]),
    (name = "c", op = "TAdd", inputs = ["a", "a"]),
    (name = "d", op = "TAdd", inputs = ["b", "c", "^a"])
  ])
)";

StatusOr<Graph> BuildText(const std::string& text) {
  TFD_ASSIGN_OR_RETURN(GraphDef g, ParseGraph(text, "test.txt"));
  return Graph::Build(std::move(g), Registry());
}

void RequireError(const std::string& text, Code code, const std::string& needle) {
  auto g = BuildText(text);
  INFO(g.status().ToString());
  REQUIRE(!g.ok());
  CHECK(g.status().code() == code);
  CHECK(g.status().message().find(needle) != std::string::npos);
}

TEST_CASE("a text graph parses, validates, infers T and shapes") {
  auto g = BuildText(kDiamond);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  const Graph::Node& d = g->node(g->FindNode("d"));
  CHECK(std::get<DType>(d.def.attrs.at("T")) == DType::kFloat32);
  CHECK(d.output_shapes[0] == PartialShape({2}));
  CHECK(d.control_inputs.size() == 1);
  CHECK(g->topo_order().front() == g->FindNode("a"));
}

TEST_CASE("binary and text forms round trip to the same graph") {
  auto g = ParseGraph(kDiamond, "test.txt");
  REQUIRE(g.ok());
  const std::string binary = SerializeGraph(*g, GraphFormat::kBinary);
  CHECK(LooksLikeBinaryMessage(binary));
  auto back = ParseGraph(binary, "test.capnp");
  REQUIRE(back.ok());
  const std::string text = SerializeGraph(*back, GraphFormat::kText);
  CHECK(!LooksLikeBinaryMessage(text));
  auto again = ParseGraph(text, "again.txt");
  REQUIRE(again.ok());
  CHECK(SerializeGraph(*again, GraphFormat::kBinary) == binary);
  REQUIRE(again->nodes.size() == 4);
  CHECK(again->nodes[3].inputs == std::vector<std::string>{"b", "c", "^a"});
  CHECK(TensorsEqual(std::get<Tensor>(again->nodes[0].attrs.at("value")),
                     Tensor::FromVector<float>({1, 2})));
}

TEST_CASE("malformed files are refused with INVALID_ARGUMENT naming the source") {
  auto g = ParseGraph(kDiamond, "x");
  REQUIRE(g.ok());
  std::string binary = SerializeGraph(*g, GraphFormat::kBinary);
  for (size_t cut : {size_t{8}, binary.size() / 2, binary.size() - 8}) {
    auto r = ParseGraph(binary.substr(0, cut), "cut.capnp");
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK(r.status().message().find("cut.capnp") != std::string::npos);
  }
  std::string noise(4096, '\0');
  uint32_t x = 12345;
  for (char& c : noise) c = static_cast<char>((x = x * 1103515245 + 12345) >> 16);
  CHECK(ParseGraph(noise, "noise").status().code() == Code::kInvalidArgument);
  auto syntax = ParseGraph("(nodes = [(name = \"a\", op = ]", "bad.txt");
  CHECK(syntax.status().code() == Code::kInvalidArgument);
  CHECK(syntax.status().message().find("bad.txt") != std::string::npos);
  auto on_line_3 = ParseGraph("(nodes = [\n  (name = \"a\"),\n  (name = = \"b\")])", "lines.txt");
  // The text parser locates the innermost group that failed to parse (here
  // the node list opened on line 2), as a line and column.
  CHECK(on_line_3.status().message().find("line 2, column 3") != std::string::npos);
  CHECK(LoadGraph("/nonexistent/graph.capnp").status().code() == Code::kNotFound);
}

// A graph of one Const named `name` whose value is `tensor` (the text form
// of a proto::Tensor).
std::string ConstGraph(const std::string& name, const std::string& tensor) {
  return "(nodes = [(name = \"" + name + "\", op = \"Const\", attrs = ["
         "(name = \"dtype\", value = (type = float32)), "
         "(name = \"value\", value = (tensor = " + tensor + "))])])";
}

// This process's peak resident memory so far, in MiB.
int64_t PeakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;  // Linux reports KiB
}

void RequireRefused(const StatusOr<GraphDef>& g, const std::string& needle) {
  INFO(g.status().ToString());
  REQUIRE(!g.ok());
  CHECK(g.status().code() == Code::kInvalidArgument);
  CHECK(g.status().message().find(needle) != std::string::npos);
}

TEST_CASE("graph constants larger than the limit are refused before they are allocated") {
  const int64_t rss_before = PeakRssMiB();
  // 1 GB and 16 GB from a value list of one element, in both file forms.
  for (const char* dims : {"250000000", "4000000000"}) {
    CAPTURE(dims);
    const std::string text = ConstGraph(
        "big", std::string("(dtype = float32, shape = [") + dims + "], floatVal = [1])");
    auto g = ParseGraph(text, "big.txt");
    RequireRefused(g, "node 'big' attr 'value': tensor float32[" + std::string(dims) + "] takes ");
    CHECK(g.status().message().find("more than the 64 MiB allowed for one tensor in a graph "
                                    "(--max-graph-tensor-bytes)") != std::string::npos);
    // The binary form of the same graph, built with a limit that lets it
    // through as long as nothing is allocated: encode the text by hand.
    capnp::MallocMessageBuilder message;
    capnp::TextCodec().decode(kj::StringPtr(text.c_str()), message.initRoot<proto::GraphDef>());
    auto words = capnp::messageToFlatArray(message);
    auto bytes = words.asBytes();
    RequireRefused(ParseGraph(std::string_view(reinterpret_cast<const char*>(bytes.begin()),
                                               bytes.size()),
                              "big.capnp"),
                   "node 'big' attr 'value'");
  }
  // Content shorter than its shape (8 GiB) is refused as short, whatever
  // the limit, and before the shape is allocated.
  SizeLimits generous;
  generous.max_graph_tensor_bytes = generous.max_graph_bytes = uint64_t{1} << 40;
  RequireRefused(ParseGraph(ConstGraph("short", "(dtype = float32, shape = [1073741826, 2], "
                                                "content = 0x\"00112233445566778899aabbccddeeff\")"),
                            "short.txt", generous),
                 "node 'short' attr 'value': tensor float32[1073741826, 2] needs 8589934608 "
                 "content bytes, got 16");
  // A shape whose element count overflows int64.
  RequireRefused(ParseGraph(ConstGraph("wide", "(dtype = float32, shape = [4611686018427387904, 4], "
                                               "floatVal = [1])"),
                            "wide.txt"),
                 "node 'wide' attr 'value': shape [4611686018427387904, 4] has more than");
  CHECK(PeakRssMiB() - rss_before < 64);
}

TEST_CASE("the tensors of one graph together may not pass the graph limit") {
  SizeLimits limits;
  limits.max_graph_tensor_bytes = 4000;
  limits.max_graph_bytes = 10000;
  std::string nodes;
  for (int i = 0; i < 3; ++i) {
    nodes += (i ? ", " : "") + std::string("(name = \"c") + std::to_string(i) +
             "\", op = \"Const\", attrs = [(name = \"value\", value = (tensor = "
             "(dtype = float32, shape = [1000], floatVal = [1])))])";
  }
  auto three = ParseGraph("(nodes = [" + nodes + "])", "three.txt", limits);
  RequireRefused(three, "node 'c2' attr 'value': tensor float32[1000] takes 4000 bytes after 8000 "
                      "bytes of other tensors in this graph, more than the 10000 bytes allowed "
                      "for the tensors of one graph (--max-graph-bytes)");
  limits.max_graph_bytes = 12000;
  CHECK(ParseGraph("(nodes = [" + nodes + "])", "three.txt", limits).ok());
  limits.max_graph_tensor_bytes = 3999;
  RequireRefused(ParseGraph("(nodes = [" + nodes + "])", "three.txt", limits),
                 "node 'c0' attr 'value': tensor float32[1000] takes 4000 bytes, more than the "
                 "3999 bytes allowed for one tensor in a graph");
}

// A graph's Const values decoded with the task's budget: each is charged as
// it is decoded and for as long as a copy of the graph holds it; what does
// not fit is RESOURCE_EXHAUSTED naming the node, and what was charged before
// it is given back.
TEST_CASE("constants decoded with a memory budget are charged while the graph holds them") {
  std::string nodes;
  for (int i = 0; i < 4; ++i) {
    nodes += (i ? ", " : "") + std::string("(name = \"c") + std::to_string(i) +
             "\", op = \"Const\", attrs = [(name = \"value\", value = (tensor = "
             "(dtype = float32, shape = [1000], floatVal = [1])))])";
  }
  capnp::MallocMessageBuilder message;
  capnp::TextCodec codec;
  auto text = "(nodes = [" + nodes + "])";
  message.adoptRoot(codec.decode<proto::GraphDef>(kj::StringPtr(text.c_str()), message.getOrphanage()));
  const auto proto = message.getRoot<proto::GraphDef>().asReader();

  auto budget = std::make_shared<MemoryBudget>(10000);
  {
    auto graph = GraphFromProto(proto, SizeLimits(), budget);
    REQUIRE(!graph.ok());
    INFO(graph.status().ToString());
    CHECK(graph.status().code() == Code::kResourceExhausted);
    CHECK(graph.status().message().find("node 'c2' attr 'value'") != std::string::npos);
    CHECK(graph.status().message().find("--memory-budget") != std::string::npos);
    CHECK(budget->used() == 0);  // c0 and c1 went back
  }
  budget = std::make_shared<MemoryBudget>(16000);
  auto graph = GraphFromProto(proto, SizeLimits(), budget);
  REQUIRE(graph.ok());
  CHECK(budget->used() == 16000);
  GraphDef copy = *graph;  // shares the values: nothing more charged
  CHECK(budget->used() == 16000);
  graph = GraphDef();
  CHECK(budget->used() == 16000);
  copy = GraphDef();
  CHECK(budget->used() == 0);
}

TEST_CASE("structural errors name the culprit") {
  RequireError(R"((nodes = [(name = "x", op = "NoSuchOp")]))", Code::kNotFound, "NoSuchOp");
  RequireError(R"((nodes = [(name = "x", op = "TAdd", inputs = ["ghost", "ghost"])]))",
               Code::kInvalidArgument, "ghost");
  RequireError(R"((nodes = [(name = "x", op = "TRecord"), (name = "x", op = "TRecord")]))",
               Code::kInvalidArgument, "two nodes are named 'x'");
  RequireError(R"((nodes = [(name = "p", op = "TAdd", inputs = ["q", "q"]),
                            (name = "q", op = "TAdd", inputs = ["p", "p"])]))",
               Code::kInvalidArgument, "cycle");
  RequireError(R"((nodes = [(name = "c", op = "TConst", attrs = [
                     (name = "dtype", value = (type = float32))])]))",
               Code::kInvalidArgument, "missing attr 'value'");
  RequireError(R"((nodes = [(name = "c", op = "TConst", attrs = [
                     (name = "dtype", value = (i = 3)),
                     (name = "value", value = (tensor = (dtype = float32)))])]))",
               Code::kInvalidArgument, "attr 'dtype'");
}

TEST_CASE("port, dtype and shape mismatches are found before running") {
  const std::string consts = R"(
    (name = "f", op = "TConst", attrs = [
       (name = "value", value = (tensor = (dtype = float32, shape = [2], floatVal = [1]))),
       (name = "dtype", value = (type = float32))]),
    (name = "g", op = "TConst", attrs = [
       (name = "value", value = (tensor = (dtype = float32, shape = [3], floatVal = [1]))),
       (name = "dtype", value = (type = float32))]),
    (name = "i", op = "TConst", attrs = [
       (name = "value", value = (tensor = (dtype = int32, shape = [2], int32Val = [1]))),
       (name = "dtype", value = (type = int32))]))";
  RequireError("(nodes = [" + consts + R"(, (name = "x", op = "TAdd", inputs = ["f:1", "f"])]))",
               Code::kInvalidArgument, "output 1 of 'f'");
  RequireError("(nodes = [" + consts + R"(, (name = "x", op = "TAdd", inputs = ["i", "i"])]))",
               Code::kInvalidArgument, "node 'x' (TAdd)");
  RequireError("(nodes = [" + consts + R"(, (name = "x", op = "TAdd", inputs = ["f", "i"])]))",
               Code::kInvalidArgument, "input 1 ('i') is int32");
  RequireError("(nodes = [" + consts + R"(, (name = "x", op = "TAdd", inputs = ["f", "g"])]))",
               Code::kInvalidArgument, "cannot be broadcast");
}

TEST_CASE("pruning keeps exactly what the roots need") {
  auto g = ParseGraph(kDiamond, "x");
  REQUIRE(g.ok());
  auto p = PruneGraph(*g, {"b"});
  REQUIRE(p.ok());
  REQUIRE(p->nodes.size() == 2);
  CHECK(p->nodes[0].name == "a");
  CHECK(p->nodes[1].name == "b");
  CHECK(PruneGraph(*g, {"zz"}).status().code() == Code::kNotFound);
}

}  // namespace
}  // namespace tfd
