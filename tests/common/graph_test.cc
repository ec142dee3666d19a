// Graph files and validation: what a user writing graphs by hand relies on.
#include "common/graph.h"

#include <catch2/catch.hpp>

#include "common/graph_io.h"
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
