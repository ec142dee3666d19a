// The summary ops as tf.summary's users rely on them: the bytes are a
// tensorflow.Summary TensorBoard reads (read back here field by field),
// values of every number type and IEEE specials in scalars, NaN refused in
// histograms, merges in order with a repeated tag or bytes that are no
// Summary refused, and hostile shapes.
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include <catch2/catch.hpp>

#include "common/proto_wire.h"
#include "common/summary_proto.h"
#include "kernels/register_all.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {
namespace {

const OpRegistry& Registry() {
  static OpRegistry registry;
  static const Status registered = kernels::RegisterAll(registry);
  REQUIRE(registered.ok());
  return registry;
}

// One Summary.value: its tag, simple_value, and whether a histo is set.
struct Value {
  std::string tag;
  float simple = 0;
  bool histo = false;
  double histo_num = 0;
};

std::vector<Value> Values(const std::string& summary) {
  std::vector<Value> out;
  const auto read = [&](uint64_t n, int w, proto_wire::Reader& r) -> Status {
    if (n != 1) return r.Skip(w);
    TFD_ASSIGN_OR_RETURN(auto bytes, r.Delimited());
    Value v;
    TFD_RETURN_IF_ERROR(proto_wire::ForEachField(
        bytes, "Value", [&](uint64_t vn, int vw, proto_wire::Reader& vr) -> Status {
          if (vn == 1) {
            TFD_ASSIGN_OR_RETURN(auto tag, vr.Delimited());
            v.tag = std::string(tag);
          } else if (vn == 2) {
            TFD_ASSIGN_OR_RETURN(auto f, vr.Bytes(4));
            std::memcpy(&v.simple, f.data(), 4);
          } else if (vn == 5) {
            TFD_ASSIGN_OR_RETURN(auto h, vr.Delimited());
            v.histo = true;
            // HistogramProto.num: field 3, a double, after min and max.
            std::memcpy(&v.histo_num, h.data() + 2 * 9 + 1, 8);
          } else {
            return vr.Skip(vw);
          }
          return OkStatus();
        }));
    out.push_back(v);
    return OkStatus();
  };
  REQUIRE(proto_wire::ForEachField(summary, "Summary", read).ok());
  return out;
}

// Runs `op`; T is the values' dtype (input 1) unless attrs say otherwise.
StatusOr<std::string> Run(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs = {}) {
  if (op != "MergeSummary") attrs.emplace("T", inputs.at(1).dtype());
  TFD_ASSIGN_OR_RETURN(auto out, RunOp(Registry(), op, std::move(attrs), std::move(inputs)));
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].rank() == 0);
  return out[0].scalar<std::string>();
}

TEST_CASE("ScalarSummary: a value per tag, of every number type, IEEE specials kept") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float denormal = std::numeric_limits<float>::denorm_min();
  auto s = Run("ScalarSummary", {Tensor::FromVector<std::string>({"a", "b/c", "d", "e"}),
                                 Tensor::FromVector<float>({1.5f, nan, -inf, denormal})});
  REQUIRE(s.ok());
  auto v = Values(*s);
  REQUIRE(v.size() == 4);
  CHECK((v[0].tag == "a" && v[0].simple == 1.5f));
  CHECK((v[1].tag == "b/c" && std::isnan(v[1].simple)));
  CHECK((v[2].tag == "d" && v[2].simple == -inf));
  CHECK((v[3].tag == "e" && v[3].simple == denormal));

  auto scalar = Run("ScalarSummary", {Tensor::Scalar(std::string("step")),
                                      Tensor::Scalar<int64_t>(int64_t{1} << 40)});
  REQUIRE(scalar.ok());
  CHECK(Values(*scalar)[0].simple == static_cast<float>(int64_t{1} << 40));
  auto bytes =
      Run("ScalarSummary", {Tensor::Scalar(std::string("u")), Tensor::Scalar<uint8_t>(255)});
  REQUIRE(bytes.ok());
  CHECK(Values(*bytes)[0].simple == 255.0f);
  auto none =
      Run("ScalarSummary", {Tensor::FromVector<std::string>({}), Tensor::FromVector<double>({})});
  REQUIRE(none.ok());
  CHECK(none->empty());
}

TEST_CASE("ScalarSummary refuses tags and values of different shapes") {
  for (auto tags :
       {Tensor::FromVector<std::string>({"a", "b"}), Tensor::Scalar(std::string("a"))}) {
    auto s = Run("ScalarSummary", {tags, Tensor::FromVector<float>({1, 2, 3})});
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == Code::kInvalidArgument);
  }
}

TEST_CASE("HistogramSummary: one histogram of any shape; NaN and infinities refused") {
  auto values = Tensor::Allocate(DType::kFloat64, TensorShape({2, 3}));
  REQUIRE(values.ok());
  for (int i = 0; i < 6; ++i) values->data<double>()[i] = i - 2.5;
  auto s = Run("HistogramSummary", {Tensor::Scalar(std::string("w")), *values});
  REQUIRE(s.ok());
  auto v = Values(*s);
  REQUIRE(v.size() == 1);
  CHECK((v[0].tag == "w" && v[0].histo && v[0].histo_num == 6));
  auto empty =
      Run("HistogramSummary", {Tensor::Scalar(std::string("e")), Tensor::FromVector<int32_t>({})});
  REQUIRE(empty.ok());
  CHECK((Values(*empty)[0].histo && Values(*empty)[0].histo_num == 0));

  for (float bad : {std::nanf(""), -INFINITY}) {
    auto refused = Run("HistogramSummary",
                       {Tensor::Scalar(std::string("w")), Tensor::FromVector<float>({0, bad})});
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == Code::kInvalidArgument);
    CHECK(refused.status().message().find("'w'") != std::string::npos);  // names the summary
  }
  auto two_tags = Run("HistogramSummary", {Tensor::FromVector<std::string>({"a", "b"}),
                                           Tensor::FromVector<float>({1})});
  CHECK(two_tags.status().code() == Code::kInvalidArgument);
}

TEST_CASE("MergeSummary: every input's values in order; a repeated tag or garbage refused") {
  auto a = Run("ScalarSummary",
               {Tensor::FromVector<std::string>({"x", "y"}), Tensor::FromVector<float>({1, 2})});
  auto h =
      Run("HistogramSummary", {Tensor::Scalar(std::string("h")), Tensor::FromVector<float>({1})});
  auto z = Run("ScalarSummary", {Tensor::Scalar(std::string("z")), Tensor::Scalar<float>(3)});
  REQUIRE((a.ok() && h.ok() && z.ok()));
  // Two inputs, the second a vector of two summaries.
  auto merged = Run("MergeSummary", {Tensor::Scalar(*a), Tensor::FromVector<std::string>({*h, *z})},
                    {{"N", int64_t{2}}});
  REQUIRE(merged.ok());
  std::vector<std::string> tags;
  for (const Value& v : Values(*merged)) tags.push_back(v.tag);
  CHECK(tags == std::vector<std::string>{"x", "y", "h", "z"});

  auto twice = Run("MergeSummary", {Tensor::Scalar(*a), Tensor::Scalar(*a)}, {{"N", int64_t{2}}});
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.status().code() == Code::kInvalidArgument);
  CHECK(twice.status().message().find("'x'") != std::string::npos);

  // Hostile bytes: a length far past the end, a truncated value, a group.
  for (const std::string& bad :
       {std::string("\x0a\xff\xff\xff\xff\x0f", 6), a->substr(0, 5), std::string("\x0b\x0c", 2)}) {
    auto refused = Run("MergeSummary", {Tensor::Scalar(bad)}, {{"N", int64_t{1}}});
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == Code::kInvalidArgument);
    CHECK(refused.status().message().find("not a tensorflow.Summary") != std::string::npos);
  }
}

}  // namespace
}  // namespace tfd::testing
