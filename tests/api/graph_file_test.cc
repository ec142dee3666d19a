// Graph files for a rolling upgrade: what WriteGraphFile leaves out, the
// versions it records, and an in-process session's check of them.
#include "api/graph_file.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "api/data.h"
#include "api/ops.h"
#include "tests/api/api_test_util.h"
#include "tests/integration/temp_dir.h"

namespace tfd {
namespace {

using testing::AllOps;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// A dataset and one IdxNextBatch node, "batch", written to `path`.
void WriteBatchGraph(const std::string& path, bool prefetch, GraphFormat format) {
  const Scope root = Scope::NewRootScope(AllOps());
  const Output data = ops::IdxDataset(root.WithOpName("data"),
                                      {.images_path = "images", .labels_path = "labels"});
  ops::IdxNextBatch(root.WithOpName("batch"), data, {.batch_size = 10, .prefetch = prefetch});
  const Status written = WriteGraphFile(root, path, format);
  INFO(written.ToString());
  REQUIRE(written.ok());
}

const NodeDef& BatchNode(const GraphDef& g) {
  for (const NodeDef& n : g.nodes) {
    if (n.name == "batch") return n;
  }
  FAIL("no node 'batch'");
  throw;
}

TEST_CASE("IdxNextBatch's prefetch at its default is left out of the file, and kept otherwise") {
  testing::TempDir dir;
  const std::string text = dir.path() + "/default.txt";
  WriteBatchGraph(text, /*prefetch=*/true, GraphFormat::kText);
  CHECK(ReadFile(text).find("prefetch") == std::string::npos);
  const std::string binary = dir.path() + "/default.capnp";
  WriteBatchGraph(binary, /*prefetch=*/true, GraphFormat::kBinary);
  auto loaded = LoadGraph(binary);
  REQUIRE(loaded.ok());
  const NodeDef& batch = BatchNode(*loaded);
  CHECK(batch.attrs.count("prefetch") == 0);
  CHECK(batch.attrs.count("batch_size") == 1);  // not its default (it has none)
  // The file says which tfd wrote it and which may run it.
  CHECK(loaded->versions == GraphVersions{.producer = kGraphVersion,
                                          .min_consumer = kGraphMinConsumer});
  // Loading fills the default in again.
  auto graph = Graph::Build(*loaded, AllOps());
  REQUIRE(graph.ok());
  CHECK(std::get<bool>(graph->node(graph->FindNode("batch")).def.attrs.at("prefetch")) == true);

  const std::string off = dir.path() + "/off.txt";
  WriteBatchGraph(off, /*prefetch=*/false, GraphFormat::kText);
  CHECK(ReadFile(off).find("name = \"prefetch\"") != std::string::npos);
  auto kept = LoadGraph(off);
  REQUIRE(kept.ok());
  CHECK(std::get<bool>(BatchNode(*kept).attrs.at("prefetch")) == false);
}

TEST_CASE("an in-process session refuses a graph that needs a newer tfd, and runs an old one") {
  testing::ApiEnv env;
  const Scope root = env.Root();
  ops::Identity(root.WithOpName("y"), ops::Const(root.WithOpName("c"), 2.0f));
  REQUIRE(root.ok());
  GraphDef newer = root.ToGraphDef();
  newer.versions = {.producer = kGraphVersion + 1, .min_consumer = kGraphVersion + 1};
  auto session = env.EmptySession();
  const Status refused = session->Create(newer);
  INFO(refused.ToString());
  CHECK(refused.code() == Code::kFailedPrecondition);
  CHECK(refused.message().find("needs tfd graph version " + std::to_string(kGraphVersion + 1)) !=
        std::string::npos);
  CHECK(refused.message().find("this tfd is graph version " + std::to_string(kGraphVersion)) !=
        std::string::npos);

  // A file from before tfd recorded versions.
  GraphDef old = root.ToGraphDef();
  old.versions = {.producer = 0, .min_consumer = 0};
  REQUIRE(session->Create(old).ok());
  // Extending it with a graph that needs a newer tfd is refused too.
  const Scope more = env.Root();
  ops::Identity(more.WithOpName("z"), ops::Const(more.WithOpName("d"), 3.0f));
  GraphDef extension = more.ToGraphDef();
  extension.versions.min_consumer = kGraphVersion + 1;
  CHECK(session->Extend(extension).code() == Code::kFailedPrecondition);
  auto out = session->Run({}, {"y"}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->fetches[0].scalar<float>() == 2.0f);
}

}  // namespace
}  // namespace tfd
