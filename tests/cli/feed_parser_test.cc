// --feed values: literals, shapes, dtypes and the errors a user sees.
#include "cli/feed_parser.h"

#include <catch2/catch.hpp>

namespace tfd::cli {
namespace {

Tensor Parse(const std::string& text, DType declared = DType::kInvalid) {
  auto t = ParseFeedValue(text, declared);
  INFO(text << ": " << t.status().ToString());
  REQUIRE(t.ok());
  return *t;
}

Status Error(const std::string& text, DType declared = DType::kInvalid) {
  auto t = ParseFeedValue(text, declared);
  REQUIRE_FALSE(t.ok());
  return t.status();
}

TEST_CASE("feed scalars take their dtype from the literal") {
  CHECK(TensorsEqual(Parse("3"), Tensor::Scalar<int32_t>(3)));
  CHECK(TensorsEqual(Parse("-2.5"), Tensor::Scalar<float>(-2.5f)));
  CHECK(TensorsEqual(Parse("1e3"), Tensor::Scalar<float>(1000.0f)));
  CHECK(TensorsEqual(Parse("true"), Tensor::Scalar<bool>(true)));
  CHECK(TensorsEqual(Parse("\"a, b\""), Tensor::Scalar<std::string>("a, b")));
}

TEST_CASE("feed lists infer their shape") {
  Tensor t = Parse("[[1, 2], [3, 4], [5, 6]]");
  CHECK(t.dtype() == DType::kInt32);
  CHECK(t.shape() == TensorShape({3, 2}));
  CHECK(TensorsEqual(t, Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}))));
  // One float makes the whole list float32.
  CHECK(Parse("[1, 2.5]").dtype() == DType::kFloat32);
  CHECK(Parse("[]").shape() == TensorShape({0}));
  CHECK(Parse("[[], []]").shape() == TensorShape({2, 0}));
  CHECK(Parse(" [ [1] ,[2] ] ").shape() == TensorShape({2, 1}));
}

TEST_CASE("the declared dtype wins over the literal, a prefix over both") {
  CHECK(TensorsEqual(Parse("[1, 2]", DType::kFloat64),
                     Tensor::FromVector<double>({1.0, 2.0})));
  CHECK(TensorsEqual(Parse("float64:[1, 2]", DType::kFloat32),
                     Tensor::FromVector<double>({1.0, 2.0})));
  CHECK(TensorsEqual(Parse("int64:7"), Tensor::Scalar<int64_t>(7)));
  CHECK(TensorsEqual(Parse("uint8:[0, 255]"), Tensor::FromVector<uint8_t>({0, 255})));
  // A declared string takes bare words and numbers as text.
  CHECK(TensorsEqual(Parse("hello", DType::kString), Tensor::Scalar<std::string>("hello")));
  CHECK(TensorsEqual(Parse("[\"a:b\", 'c']"),
                     Tensor::FromVector<std::string>({"a:b", "c"})));
}

TEST_CASE("bad feed values say what is wrong") {
  CHECK_THAT(Error("[[1, 2], [3]]").message(), Catch::Contains("ragged"));
  CHECK_THAT(Error("[[1, 2], 3]").message(), Catch::Contains("ragged"));
  CHECK_THAT(Error("[1, [2]]").message(), Catch::Contains("ragged"));
  CHECK_THAT(Error("[1, 2").message(), Catch::Contains("missing ']'"));
  CHECK_THAT(Error("[1 2]").message(), Catch::Contains("expected ',' or ']'"));
  CHECK_THAT(Error("2.5", DType::kInt32).message(), Catch::Contains("not a valid int32"));
  CHECK_THAT(Error("300", DType::kUInt8).message(), Catch::Contains("out of range for uint8"));
  CHECK_THAT(Error("1e39", DType::kFloat32).message(), Catch::Contains("out of range"));
  CHECK_THAT(Error("99999999999", DType::kInt32).message(), Catch::Contains("out of range"));
  CHECK_THAT(Error("[true, 1]").message(), Catch::Contains("mixes"));
  CHECK_THAT(Error("hello").message(), Catch::Contains("'hello' is not a number"));
  CHECK_THAT(Error("1", DType::kBool).message(), Catch::Contains("not a valid bool"));
  CHECK_THAT(Error("\"open").message(), Catch::Contains("unterminated"));
  CHECK_THAT(Error("1 2").message(), Catch::Contains("after the value"));
  CHECK(Error(std::string(40, '[') + std::string(40, ']')).code() == Code::kInvalidArgument);
}

TEST_CASE("SplitFeed separates name, value and file") {
  auto f = SplitFeed("x:1=[1, 2]");
  REQUIRE(f.ok());
  CHECK(f->name == "x:1");
  CHECK(f->value == "[1, 2]");
  CHECK_FALSE(f->from_file);
  auto g = SplitFeed("x=@data/x.npy");
  REQUIRE(g.ok());
  CHECK(g->from_file);
  CHECK(g->value == "data/x.npy");
  CHECK_FALSE(SplitFeed("x").ok());
  CHECK_FALSE(SplitFeed("=3").ok());
  CHECK_FALSE(SplitFeed("x=").ok());
  CHECK_FALSE(SplitFeed("x=@").ok());
}

}  // namespace
}  // namespace tfd::cli
