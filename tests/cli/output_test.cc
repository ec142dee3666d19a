// What tfctl prints for tensors: the human line and the JSON object.
#include "cli/output.h"

#include <catch2/catch.hpp>

#include <limits>

namespace tfd::cli {
namespace {

TEST_CASE("human output: name, dtype, shape and values nested by shape") {
  Tensor t = Tensor::FromVector<float>({1, 2.5f, 0.1f, -4}, TensorShape({2, 2}));
  CHECK(FormatFetch("y", t) == "y = float32[2, 2] [[1 2.5] [0.1 -4]]");
  CHECK(FormatFetch("s", Tensor::Scalar<int32_t>(7)) == "s = int32[] 7");
  CHECK(FormatFetch("b", Tensor::FromVector<bool>({true, false})) == "b = bool[2] [true false]");
  CHECK(FormatFetch("u", Tensor::FromVector<uint8_t>({255})) == "u = uint8[1] [255]");
  CHECK(FormatFetch("t", Tensor::Scalar<std::string>("a\"b")) == "t = string[] \"a\\\"b\"");
  CHECK(FormatFetch("e", Tensor::FromVector<double>({}, TensorShape({0, 3}))) == "e = float64[0, 3] []");
  CHECK(FormatValues(Tensor::FromVector<int64_t>({1, 2, 3, 4, 5}), 3) == "[1 2 3 ...]");
}

TEST_CASE("JSON output: the documented shape, exactly") {
  Tensor t = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}));
  Json j{{"fetches", {{"NAME", TensorToJson(t)}}}};
  CHECK(DumpJson(j) ==
        "{\"fetches\": {\"NAME\": {\"dtype\": \"float32\", \"shape\": [2, 2], "
        "\"values\": [[1.0, 2.0], [3.0, 4.0]]}}}");
  // float32 values show what float32 holds, not a widened double.
  CHECK(DumpJson(TensorToJson(Tensor::Scalar<float>(0.1f))) ==
        "{\"dtype\": \"float32\", \"shape\": [], \"values\": 0.1}");
  CHECK(DumpJson(TensorToJson(Tensor::FromVector<std::string>({"a", "b"}))) ==
        "{\"dtype\": \"string\", \"shape\": [2], \"values\": [\"a\", \"b\"]}");
  // Bytes that are not UTF-8 are replaced, not thrown on.
  CHECK_NOTHROW(DumpJson(TensorToJson(Tensor::Scalar<std::string>("\xff\xfe"))));
}

TEST_CASE("JSON output tells inf, -inf and NaN apart, in every float dtype") {
  constexpr float kInfF = std::numeric_limits<float>::infinity();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const float nan_f = std::numeric_limits<float>::quiet_NaN();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(DumpJson(TensorToJson(Tensor::FromVector<float>({kInfF, -kInfF, nan_f, -nan_f, 1.5f}))) ==
        "{\"dtype\": \"float32\", \"shape\": [5], "
        "\"values\": [\"inf\", \"-inf\", \"nan\", \"nan\", 1.5]}");
  CHECK(DumpJson(TensorToJson(Tensor::FromVector<double>({kInf, -kInf, nan, -nan}, TensorShape({2, 2})))) ==
        "{\"dtype\": \"float64\", \"shape\": [2, 2], "
        "\"values\": [[\"inf\", \"-inf\"], [\"nan\", \"nan\"]]}");
  CHECK(DumpJson(TensorToJson(Tensor::Scalar<double>(nan))) ==
        "{\"dtype\": \"float64\", \"shape\": [], \"values\": \"nan\"}");
  // The one spelling for scalars other commands print (train's loss).
  CHECK(DumpJson(FloatToJson(-kInf)) == "\"-inf\"");
  CHECK(DumpJson(FloatToJson(0.25)) == "0.25");
  // Human output: a NaN whatever its sign bit, as numpy prints it.
  CHECK(FormatValues(Tensor::FromVector<float>({kInfF, -kInfF, -nan_f}), 10) == "[inf -inf nan]");
}

TEST_CASE("trace: nodes grouped by device, times relative to the step") {
  StepStats stats;
  stats.nodes.push_back({"b", "Add", "/cpu:0", 1500, 1600, 2});
  stats.nodes.push_back({"a", "Const", "/cpu:0", 1000, 1010, 1});
  const std::string text = FormatTrace(stats);
  CHECK_THAT(text, Catch::Contains("/cpu:0"));
  CHECK(text.find("a (Const)") < text.find("b (Add)"));
  CHECK(DumpJson(TraceToJson(stats)) ==
        "[{\"device\": \"/cpu:0\", \"nodes\": [{\"node\": \"a\", \"op\": \"Const\", \"start_us\": 0, "
        "\"duration_us\": 10, \"thread\": 1}, {\"node\": \"b\", \"op\": \"Add\", \"start_us\": 500, "
        "\"duration_us\": 100, \"thread\": 2}]}]");
}

}  // namespace
}  // namespace tfd::cli
