#include "common/op_def.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/op_registry.h"

namespace tfd {
namespace {

TEST_CASE("op specs parse inputs, outputs and attrs with defaults") {
  auto def = OpDefBuilder("Concat")
                 .Input("axis: int32")
                 .Input("values: N * T")
                 .Output("output: T")
                 .Attr("N: int >= 2")
                 .Attr("T: {float32, int64}")
                 .Attr("shape: shape = [?, 3]")
                 .Attr("names: list(string) = [\"a\", \"b\"]")
                 .Finalize();
  REQUIRE(def.ok());
  REQUIRE(def->inputs.size() == 2);
  CHECK(def->inputs[0].type == DType::kInt32);
  CHECK(def->inputs[1].number_attr == "N");
  CHECK(def->inputs[1].type_attr == "T");
  CHECK(def->FindAttr("N")->minimum == 2);
  CHECK(def->FindAttr("T")->allowed_types.size() == 2);
  CHECK(std::get<PartialShape>(*def->FindAttr("shape")->default_value) == PartialShape({-1, 3}));
  CHECK(std::get<std::vector<std::string>>(*def->FindAttr("names")->default_value) ==
        std::vector<std::string>{"a", "b"});

  AttrMap attrs{{"N", int64_t{3}}, {"T", DType::kInt64}};
  REQUIRE(CompleteAndCheckAttrs(*def, attrs).ok());
  auto types = ArgTypes(def->inputs, attrs);
  REQUIRE(types.ok());
  CHECK(*types == std::vector<DType>{DType::kInt32, DType::kInt64, DType::kInt64, DType::kInt64});
}

std::vector<std::string> Names(const AttrMap& attrs) {
  std::vector<std::string> names;
  for (const auto& [name, value] : attrs) names.push_back(name);
  return names;
}

TEST_CASE("StripDefaultAttrs removes exactly the attrs equal to their default") {
  auto def = OpDefBuilder("Batch")
                 .Attr("size: int >= 1")
                 .Attr("prefetch: bool = true")
                 .Attr("T: {int32, float32} = int32")
                 .Attr("shape: shape = [?, 3]")
                 .Attr("names: list(string) = []")
                 .Attr("ratio: float = 0.5")
                 .Finalize();
  REQUIRE(def.ok());
  AttrMap all{{"size", int64_t{4}}};
  REQUIRE(CompleteAndCheckAttrs(*def, all).ok());
  AttrMap stripped = all;
  StripDefaultAttrs(*def, stripped);
  CHECK(Names(stripped) == std::vector<std::string>{"size"});  // the required attr stays
  // Completing what was stripped gives back what was there.
  REQUIRE(CompleteAndCheckAttrs(*def, stripped).ok());
  CHECK(Names(stripped) == Names(all));
  for (const auto& [name, value] : all) CHECK(AttrValueToString(stripped[name]) == AttrValueToString(value));

  AttrMap set{{"size", int64_t{4}},
              {"prefetch", false},
              {"T", DType::kFloat32},
              {"shape", PartialShape({-1, 4})},
              {"names", std::vector<std::string>{"a"}},
              {"ratio", 0.25}};
  AttrMap kept = set;
  StripDefaultAttrs(*def, kept);
  CHECK(Names(kept) == Names(set));  // none equals its default

  AttrMap empty_list{{"size", int64_t{1}}, {"names", EmptyList{}}};
  StripDefaultAttrs(*def, empty_list);
  CHECK(empty_list.count("names") == 0);

  AttrMap unknown{{"size", int64_t{1}}, {"colour", std::string("red")}};
  StripDefaultAttrs(*def, unknown);
  CHECK(unknown.count("colour") == 1);  // left for CompleteAndCheckAttrs to refuse
}

TEST_CASE("attr checks name the attr that is wrong") {
  auto def = OpDefBuilder("Pack").Input("values: N * T").Output("o: T").Attr("N: int >= 1")
                 .Attr("T: {float32}").Finalize();
  REQUIRE(def.ok());
  AttrMap missing{{"T", DType::kFloat32}};
  Status s = CompleteAndCheckAttrs(*def, missing);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("'N'") != std::string::npos);

  AttrMap wrong_type{{"N", int64_t{1}}, {"T", DType::kInt32}};
  s = CompleteAndCheckAttrs(*def, wrong_type);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("int32") != std::string::npos);

  AttrMap below_min{{"N", int64_t{0}}, {"T", DType::kFloat32}};
  CHECK(CompleteAndCheckAttrs(*def, below_min).code() == Code::kInvalidArgument);

  AttrMap unknown{{"N", int64_t{1}}, {"T", DType::kFloat32}, {"bogus", true}};
  s = CompleteAndCheckAttrs(*def, unknown);
  CHECK(s.message().find("bogus") != std::string::npos);
}

TEST_CASE("malformed specs are refused at registration") {
  OpRegistry reg;
  CHECK(reg.Register(OpDefBuilder("Bad").Input("x: Q"), shape_fns::Unknown).code() ==
        Code::kInternal);
  CHECK(reg.Register(OpDefBuilder("Bad2").Attr("x: widget"), shape_fns::Unknown).code() ==
        Code::kInternal);
  REQUIRE(reg.Register(OpDefBuilder("MatMul"), shape_fns::Unknown).ok());
  CHECK(reg.Register(OpDefBuilder("MatMul"), shape_fns::Unknown).code() == Code::kInternal);
  auto missing = reg.Lookup("Matmul");
  CHECK(missing.status().code() == Code::kNotFound);
  CHECK(missing.status().message().find("did you mean 'MatMul'") != std::string::npos);
}

}  // namespace
}  // namespace tfd
