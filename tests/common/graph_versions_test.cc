// Graph versions: what an operator relies on during a rolling upgrade. A
// graph records which tfd wrote it and which may run it; an older tfd runs
// a newer one's graph when it sets nothing the older lacks, and a graph
// this tfd may not run is refused naming both versions.
#include "common/graph_versions.h"

#include <capnp/message.h>
#include <catch2/catch.hpp>

#include "common/graph.h"
#include "common/graph_io.h"

namespace tfd {
namespace {

// Widget as a newer tfd defines it (with `fancy`) and as an older one did.
struct Registries {
  Registries() {
    REQUIRE(newer.Register(OpDefBuilder("Widget").Output("y: float32").Attr("size: int")
                               .Attr("fancy: bool = false"), shape_fns::Unknown).ok());
    REQUIRE(older.Register(OpDefBuilder("Widget").Output("y: float32").Attr("size: int"),
                           shape_fns::Unknown).ok());
  }
  OpRegistry newer, older;
};

// A graph written by a tfd one graph version newer than this build.
GraphVersions FromNewerTfd() { return {.producer = kGraphVersion + 1, .min_consumer = 0}; }

GraphDef WidgetGraph(const AttrMap& attrs, GraphVersions versions) {
  GraphDef g;
  g.nodes.push_back({.name = "w", .op = "Widget", .attrs = attrs});
  g.versions = std::move(versions);
  return g;
}

// What the file would hold: the graph through its binary form and back.
GraphDef ThroughFile(const GraphDef& g) {
  auto back = ParseGraph(SerializeGraph(g, GraphFormat::kBinary), "g.capnp");
  INFO(back.status().ToString());
  REQUIRE(back.ok());
  return std::move(back).value();
}

bool Has(const Status& s, const std::string& needle) {
  return s.message().find(needle) != std::string::npos;
}

std::string Version(int32_t v) { return "graph version " + std::to_string(v); }

TEST_CASE("a graph carries its versions through both file forms; one without them is producer 0") {
  GraphDef g = WidgetGraph({{"size", int64_t{3}}}, {.producer = 7, .min_consumer = 1,
                                                    .bad_consumers = {4, 5}});
  CHECK(ThroughFile(g).versions == g.versions);
  auto text = ParseGraph(SerializeGraph(g, GraphFormat::kText), "g.txt");
  REQUIRE(text.ok());
  CHECK(text->versions == g.versions);
  // Built in this process: this build's versions.
  CHECK(GraphDef{}.versions == GraphVersions{.producer = kGraphVersion,
                                             .min_consumer = kGraphMinConsumer});
  // Written before tfd recorded versions, in either form: producer 0, and run.
  auto old_text = ParseGraph(R"((nodes = [(name = "w", op = "Widget",
                                  attrs = [(name = "size", value = (i = 3))])]))", "old.txt");
  REQUIRE(old_text.ok());
  CHECK(old_text->versions == GraphVersions{.producer = 0, .min_consumer = 0});
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<proto::GraphDef>();
  auto node = root.initNodes(1)[0];
  node.setName("w");
  node.setOp("Widget");
  auto attr = node.initAttrs(1)[0];
  attr.setName("size");
  attr.initValue().setI(3);
  auto old_binary = GraphFromProto(root.asReader());
  REQUIRE(old_binary.ok());
  CHECK(old_binary->versions == GraphVersions{.producer = 0, .min_consumer = 0});
  Registries r;
  for (const GraphDef* old : {&*old_text, &*old_binary}) {
    auto built = Graph::Build(*old, r.older);
    INFO(built.status().ToString());
    CHECK(built.ok());
  }
}

TEST_CASE("a graph that needs a newer tfd is refused first, naming both versions") {
  Registries r;
  // Otherwise wrong too (an unknown op): the versions are what is reported.
  GraphDef g;
  g.nodes.push_back({.name = "x", .op = "NoSuchOp"});
  g.versions = {.producer = kGraphVersion + 2, .min_consumer = kGraphVersion + 1};
  const Status refused = Graph::Build(ThroughFile(g), r.newer).status();
  INFO(refused.ToString());
  CHECK(refused.code() == Code::kFailedPrecondition);
  CHECK(Has(refused, "needs tfd " + Version(kGraphVersion + 1) + " or newer"));
  CHECK(Has(refused, "this tfd is " + Version(kGraphVersion)));
  CHECK(Has(refused, "written by tfd " + Version(kGraphVersion + 2)));
  // min_consumer up to this build's version is fine.
  GraphDef ok = WidgetGraph({{"size", int64_t{3}}}, {.producer = 0, .min_consumer = kGraphVersion});
  CHECK(Graph::Build(ThroughFile(ok), r.newer).ok());
}

TEST_CASE("a graph that names this version a bad consumer, or is too old, is refused") {
  Registries r;
  GraphDef bad = WidgetGraph({{"size", int64_t{3}}},
                             {.producer = kGraphVersion, .min_consumer = 0,
                              .bad_consumers = {kGraphVersion + 5, kGraphVersion}});
  Status refused = Graph::Build(ThroughFile(bad), r.newer).status();
  INFO(refused.ToString());
  CHECK(refused.code() == Code::kFailedPrecondition);
  CHECK(Has(refused, "may not run on tfd " + Version(kGraphVersion)));
  bad.versions.bad_consumers = {kGraphVersion + 5};
  CHECK(Graph::Build(ThroughFile(bad), r.newer).ok());

  GraphDef ancient = WidgetGraph({{"size", int64_t{3}}},
                                 {.producer = kGraphMinProducer - 1, .min_consumer = 0});
  refused = Graph::Build(ThroughFile(ancient), r.newer).status();
  INFO(refused.ToString());
  CHECK(refused.code() == Code::kFailedPrecondition);
  CHECK(Has(refused, "written by tfd " + Version(kGraphMinProducer - 1)));
  CHECK(Has(refused, "from " + Version(kGraphMinProducer) + " on"));
}

// The rolling upgrade: a newer tfd's file reaches this (older) one, whose
// Widget lacks `fancy`.
TEST_CASE("an older tfd runs a newer one's graph written without defaults, and says why not") {
  Registries r;
  GraphDef written = WidgetGraph({{"size", int64_t{3}}, {"fancy", false}}, FromNewerTfd());
  StripDefaultAttrs(r.newer, written);  // what every writer does
  const GraphDef stripped = ThroughFile(written);
  CHECK(stripped.nodes[0].attrs.count("fancy") == 0);
  auto built = Graph::Build(stripped, r.older);
  INFO(built.status().ToString());
  CHECK(built.ok());
  // The same graph with the attr written out: refused, as a version problem.
  const GraphDef unstripped =
      ThroughFile(WidgetGraph({{"size", int64_t{3}}, {"fancy", false}}, FromNewerTfd()));
  const Status refused = Graph::Build(unstripped, r.older).status();
  INFO(refused.ToString());
  CHECK(refused.code() == Code::kFailedPrecondition);
  CHECK(Has(refused, "node 'w' (Widget): op Widget has no attr 'fancy' in this tfd"));
  CHECK(Has(refused, "written by tfd " + Version(kGraphVersion + 1)));
  CHECK(Has(refused, "this tfd is " + Version(kGraphVersion)));
  CHECK(Has(refused, "upgrade this tfd"));
  // From this build or an older one the attr is a mistake in the graph.
  GraphDef same = unstripped;
  same.versions = {};
  const Status mistake = Graph::Build(same, r.older).status();
  CHECK(mistake.code() == Code::kInvalidArgument);
  CHECK(Has(mistake, "op Widget has no attr 'fancy'"));
  CHECK(!Has(mistake, "graph version"));
}

TEST_CASE("an op or attr value unknown here is a version problem in a newer tfd's graph") {
  Registries r;
  GraphDef g;
  g.nodes.push_back({.name = "x", .op = "Gadget"});
  g.versions = FromNewerTfd();
  Status refused = Graph::Build(ThroughFile(g), r.older).status();
  INFO(refused.ToString());
  CHECK(refused.code() == Code::kFailedPrecondition);
  CHECK(Has(refused, "node 'x' (Gadget): this tfd has no op Gadget"));
  CHECK(Has(refused, "written by tfd " + Version(kGraphVersion + 1)));
  g.versions = {};
  CHECK(Graph::Build(g, r.older).status().code() == Code::kNotFound);

  // A dtype this build has no name for, as a newer schema might add.
  for (int32_t producer : {kGraphVersion + 1, kGraphVersion}) {
    capnp::MallocMessageBuilder message;
    auto root = message.initRoot<proto::GraphDef>();
    root.initVersions().setProducer(producer);
    auto node = root.initNodes(1)[0];
    node.setName("x");
    node.setOp("Widget");
    auto attr = node.initAttrs(1)[0];
    attr.setName("dtype");
    attr.initValue().setType(static_cast<proto::DType>(250));
    const Status s = GraphFromProto(root.asReader()).status();
    INFO(s.ToString());
    CHECK(Has(s, "node 'x' attr 'dtype'"));
    if (producer > kGraphVersion) {
      CHECK(s.code() == Code::kFailedPrecondition);
      CHECK(Has(s, "written by tfd " + Version(producer)));
    } else {
      CHECK(s.code() == Code::kInvalidArgument);
    }
  }
}

TEST_CASE("a graph extended by another needs what either needs") {
  const GraphVersions a{.producer = 3, .min_consumer = 1, .bad_consumers = {2}};
  const GraphVersions b{.producer = 0, .min_consumer = 2, .bad_consumers = {2, 4}};
  CHECK(CombineGraphVersions(a, b) ==
        GraphVersions{.producer = 3, .min_consumer = 2, .bad_consumers = {2, 4}});
  CHECK(GraphVersionsToString(a) == "producer 3, min consumer 1, bad consumers 2");
}

}  // namespace
}  // namespace tfd
