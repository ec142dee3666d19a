// tensorflow.Summary as TensorBoard reads it: TensorFlow's histogram
// buckets (against a float64 reference), the wire bytes of scalar and
// histogram values, and the tags read back from them, with the errors bytes
// that are no Summary give.
#include "common/summary_proto.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include <catch2/catch.hpp>

namespace tfd::summary {
namespace {

TEST_CASE("a histogram puts each value in TF's bucket and collapses empty runs, as TF's") {
  const std::vector<double> values = {0.0, 1.0, -1.0, 2.5, 1e-13, 1.0, -1e30, 1e300};
  auto h = HistogramOf(Tensor::FromVector<double>(values));
  INFO(h.status().ToString());
  REQUIRE(h.ok());
  CHECK(h->num == 8);
  CHECK(h->min == -1e30);
  CHECK(h->max == 1e300);
  double sum = 0, sum_squares = 0;
  for (double v : values) sum += v, sum_squares += v * v;  // the float64 reference
  CHECK(h->sum == sum);
  CHECK(h->sum_squares == sum_squares);
  REQUIRE(h->bucket.size() == h->bucket_limit.size());
  CHECK(h->bucket_limit.back() == DBL_MAX);
  double total = 0, previous = -INFINITY;
  for (size_t i = 0; i < h->bucket.size(); ++i) {
    CHECK(h->bucket_limit[i] > previous);  // ascending
    if (h->bucket[i] > 0) {
      // Each value lies in [the previous limit, this one), and no two
      // empty buckets follow each other.
      int in = 0;
      for (double v : values)
        in += (i == 0 || v >= h->bucket_limit[i - 1]) && v < h->bucket_limit[i];
      CHECK(in == h->bucket[i]);
    } else if (i > 0) {
      CHECK(h->bucket[i - 1] > 0);
    }
    total += h->bucket[i];
    previous = h->bucket_limit[i];
  }
  CHECK(total == 8);
  // The bucket up to TF's smallest positive limit holds 0 and 1e-13.
  const auto zero = std::find(h->bucket_limit.begin(), h->bucket_limit.end(), 1e-12);
  REQUIRE(zero != h->bucket_limit.end());
  CHECK(h->bucket[zero - h->bucket_limit.begin()] == 2);

  auto ints = HistogramOf(Tensor::FromVector<int32_t>({3, 3, -7}));
  REQUIRE(ints.ok());
  CHECK((ints->num == 3 && ints->sum == -1 && ints->min == -7 && ints->max == 3));
  auto empty = HistogramOf(Tensor::FromVector<float>({}));
  REQUIRE(empty.ok());
  CHECK((empty->num == 0 && empty->bucket.size() == 1 && empty->bucket[0] == 0));
  for (float bad : {std::nanf(""), INFINITY}) {
    auto refused = HistogramOf(Tensor::FromVector<float>({1, bad}));
    CHECK(refused.status().code() == Code::kInvalidArgument);
    CHECK(refused.status().message().find("NaN or an infinity") != std::string::npos);
  }
  CHECK(HistogramOf(Tensor::Scalar(std::string("x"))).status().code() == Code::kInvalidArgument);
}

TEST_CASE("a scalar value is its tag and a float, field by field") {
  const std::string bytes = Serialize({.scalars = {{"loss", 0.5}}});
  // Summary.value (1, length 11): Value.tag (1, "loss"), Value.simple_value (2, 0.5f).
  std::string expected = std::string("\x0a\x0b\x0a\x04loss\x15", 9);
  const float half = 0.5f;
  expected.append(reinterpret_cast<const char*>(&half), 4);
  CHECK(bytes == expected);
}

TEST_CASE("tags come back in order from scalars, histograms and joined summaries") {
  auto h = HistogramOf(Tensor::FromVector<float>({1, 2}));
  REQUIRE(h.ok());
  const std::string a = Serialize({.scalars = {{"a", 1}, {"b/c", -0.0}}});
  const std::string b = Serialize({.histograms = {{"w", *h}}});
  auto tags = Tags(a + b);  // a repeated field's values join as the bytes do
  REQUIRE(tags.ok());
  CHECK(*tags == std::vector<std::string>{"a", "b/c", "w"});
  auto none = Tags("");
  REQUIRE(none.ok());
  CHECK(none->empty());
}

TEST_CASE("bytes that are no Summary are INVALID_ARGUMENT naming it") {
  const std::string good = Serialize({.scalars = {{"loss", 1}}});
  for (const std::string& bad :
       {good.substr(0, good.size() - 1), std::string("\x0a\x7f", 2), std::string("\x0b", 1),
        std::string(11, '\xff'), std::string("\x0a\x02\x0a\x05", 4)}) {
    auto tags = Tags(bad);
    REQUIRE_FALSE(tags.ok());
    CHECK(tags.status().code() == Code::kInvalidArgument);
    CHECK(tags.status().message().find("not a tensorflow.Summary") != std::string::npos);
  }
}

}  // namespace
}  // namespace tfd::summary
