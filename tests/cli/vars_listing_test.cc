// tfctl vars list: a partitioned variable's shards, found on several tasks,
// make one line (and one JSON object) with its full shape and shards.
#include "cli/vars_listing.h"

#include <catch2/catch.hpp>

namespace tfd::cli {
namespace {

VariableDescription Var(const std::string& name, const std::vector<int64_t>& shape,
                        const std::string& device, const std::string& slice = "",
                        bool initialized = true) {
  VariableDescription v;
  v.name = name;
  v.dtype = DType::kFloat32;
  v.shape = PartialShape(shape);
  v.initialized = initialized;
  v.device = device;
  v.slice = slice;
  return v;
}

const char* kPs0 = "/job:ps/replica:0/task:0/device:CPU:0";
const char* kPs1 = "/job:ps/replica:0/task:1/device:CPU:0";

// As two ps tasks list them: ps-0's variables, then ps-1's.
std::vector<VariableDescription> Listed() {
  return {Var("emb/part_0", {4, 2}, kPs0, "emb;10,2;0,4"),
          Var("emb/part_2", {3, 2}, kPs0, "emb;10,2;7,3", false),
          Var("w", {3}, kPs0),
          Var("emb/part_1", {3, 2}, kPs1, "emb;10,2;4,3")};
}

TEST_CASE("a partitioned variable is one row, its shards in row order wherever they live") {
  const std::vector<VarsRow> rows = GroupVariables(Listed());
  REQUIRE(rows.size() == 2);
  const VarsRow& emb = rows[0];
  CHECK(emb.variable.name == "emb");
  CHECK(emb.variable.shape == PartialShape({10, 2}));
  CHECK_FALSE(emb.variable.initialized);  // part_2 is not
  REQUIRE(emb.shards.size() == 3);
  CHECK(emb.shards[0].name == "emb/part_0");
  CHECK(emb.shards[1].name == "emb/part_1");
  CHECK(emb.shards[1].device == kPs1);
  CHECK(emb.shards[2].name == "emb/part_2");
  CHECK(rows[1].variable.name == "w");
  CHECK(rows[1].shards.empty());
  CHECK(VarsRowText(emb).find(std::string("3 shards: ") + kPs0 + " rows [0, 4), " + kPs1 +
                              " rows [4, 7), " + kPs0 + " rows [7, 10)") != std::string::npos);
}

TEST_CASE("the JSON row of a partitioned variable lists its shards in place of a device") {
  const std::vector<VarsRow> rows = GroupVariables(Listed());
  CHECK(DumpJson(VarsRowJson(rows[1])) ==
        std::string("{\"name\": \"w\", \"dtype\": \"float32\", \"shape\": \"[3]\", "
                    "\"initialized\": true, \"device\": \"") + kPs0 + "\"}");
  const Json emb = VarsRowJson(rows[0]);
  CHECK(emb["name"] == "emb");
  CHECK(emb["shape"] == "[10, 2]");
  CHECK_FALSE(emb.contains("device"));
  REQUIRE(emb["shards"].size() == 3);
  CHECK(emb["shards"][1]["name"] == "emb/part_1");
  CHECK(emb["shards"][1]["device"] == kPs1);
  CHECK(emb["shards"][1]["first_row"] == 4);
  CHECK(emb["shards"][1]["rows"] == 3);
  CHECK(emb["shards"][2]["initialized"] == false);
}

TEST_CASE("a slice that does not parse lists the shard as a variable of its own") {
  const std::vector<VarsRow> rows = GroupVariables({Var("odd", {2}, kPs0, "not a slice")});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].variable.name == "odd");
  CHECK(rows[0].shards.empty());
}

}  // namespace
}  // namespace tfd::cli
