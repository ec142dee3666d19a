// --feed values: literals, shapes, dtypes and the errors a user sees.
#include "cli/feed_parser.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

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

TEST_CASE("feed values spell inf, -inf and NaN as the JSON output does, and as JSON tools do") {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  auto floats = [](const Tensor& t) {
    REQUIRE(t.dtype() == DType::kFloat32);
    return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
  };
  // Bare words, in any case, signed or not.
  for (const char* text : {"[inf, -inf, nan]", "[Infinity, -Infinity, NaN]", "[INF, -INFINITY, nan]",
                           "[+inf, -Inf, NAN]"}) {
    INFO(text);
    const std::vector<float> v = floats(Parse(text));
    REQUIRE(v.size() == 3);
    CHECK(v[0] == kInf);
    CHECK(v[1] == -kInf);
    CHECK(std::isnan(v[2]));
  }
  // Quoted, as tfctl's --output json writes them: beside numbers, or into a
  // float dtype, they are floats.
  std::vector<float> v = floats(Parse("[1.5, \"inf\", \"-inf\", \"nan\"]"));
  REQUIRE(v.size() == 4);
  CHECK(v[0] == 1.5f);
  CHECK(v[1] == kInf);
  CHECK(v[2] == -kInf);
  CHECK(std::isnan(v[3]));
  v = floats(Parse("[\"nan\", \"-Infinity\"]", DType::kFloat32));
  CHECK(std::isnan(v[0]));
  CHECK(v[1] == -kInf);
  Tensor d = Parse("float64:[[\"inf\"], [2]]");
  REQUIRE(d.dtype() == DType::kFloat64);
  CHECK(d.data<double>()[0] == std::numeric_limits<double>::infinity());
  // Alone and without a float dtype, quoted words stay text.
  CHECK(TensorsEqual(Parse("[\"nan\", \"inf\"]"), Tensor::FromVector<std::string>({"nan", "inf"})));
  // An integer has no infinity, and other words are not numbers.
  CHECK_THAT(Error("inf", DType::kInt32).message(), Catch::Contains("not a valid int32"));
  CHECK_THAT(Error("[\"inf\"]", DType::kInt64).message(), Catch::Contains("not a valid int64"));
  CHECK_THAT(Error("[1, infinite]").message(), Catch::Contains("'infinite' is not a number"));
  CHECK_THAT(Error("[1.5, \"none\"]").message(), Catch::Contains("mixes"));
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

TEST_CASE("float literals beyond a float dtype's range are refused, however far") {
  // strtod gives HUGE_VAL for these: never a silent infinity.
  for (const char* text : {"[[1e400, 2]]", "-1e400", "1e39", "3.5e38"}) {
    INFO(text);
    CHECK_THAT(Error(text, DType::kFloat32).message(), Catch::Contains("out of range for float32"));
  }
  for (const char* text : {"1e400", "[-1e309]", "1.8e308"}) {
    INFO(text);
    CHECK_THAT(Error(text, DType::kFloat64).message(), Catch::Contains("out of range for float64"));
  }
  CHECK_THAT(Error("[1, 1e400]").message(), Catch::Contains("'1e400' is out of range"));
  // The largest float32 is read as itself, not refused for its last digits.
  CHECK(Parse("3.4028235e38", DType::kFloat32).data<float>()[0] ==
        std::numeric_limits<float>::max());
  CHECK(Parse("1.7976931348623157e308", DType::kFloat64).data<double>()[0] ==
        std::numeric_limits<double>::max());
  // Written as such, the infinities are values, as before.
  CHECK(std::isinf(Parse("-inf", DType::kFloat64).data<double>()[0]));
}

TEST_CASE("denormal float literals keep their value; ones below every float are 0, as numpy's") {
  const float f = Parse("1e-45", DType::kFloat32).data<float>()[0];
  CHECK(f == std::numeric_limits<float>::denorm_min());
  CHECK(Parse("[1e-40]").data<float>()[0] == 1e-40f);
  const double d = Parse("4.9e-324", DType::kFloat64).data<double>()[0];
  CHECK(d == std::numeric_limits<double>::denorm_min());
  CHECK(Parse("2.2e-310", DType::kFloat64).data<double>()[0] == 2.2e-310);
  CHECK(Parse("1e-400", DType::kFloat64).data<double>()[0] == 0.0);
  CHECK(Parse("1e-50", DType::kFloat32).data<float>()[0] == 0.0f);
  const double negative_zero = Parse("-1e-400", DType::kFloat64).data<double>()[0];
  CHECK(negative_zero == 0.0);
  CHECK(std::signbit(negative_zero));
}

TEST_CASE("errors quote a long feed value in part, near where it went wrong") {
  // 60000 '[' then 60000 ']': nested far too deep, 120 KB.
  const std::string deep = std::string(60000, '[') + std::string(60000, ']');
  const std::string message = Error(deep).message();
  CHECK_THAT(message, Catch::Contains("nested deeper than 32"));
  CHECK_THAT(message, Catch::Contains("column 33"));
  CHECK(message.size() < 200);
  const std::string word = "[1, " + std::string(100000, 'w') + "]";
  CHECK(Error(word).message().size() < 200);
  CHECK(Error(std::string(100000, '7'), DType::kUInt8).message().size() < 200);
  const std::string tail = "[" + std::string(100000, ' ') + "1 2]";
  const std::string near = Error(tail).message();
  CHECK_THAT(near, Catch::Contains("1 2]'"));
  CHECK(near.size() < 200);
  CHECK(SplitFeed(std::string(100000, 'x')).status().message().size() < 200);
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
