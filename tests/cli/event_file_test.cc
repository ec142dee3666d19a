// TensorBoard event files: the masked CRC-32C TFRecord uses (checked
// against the CRC-32C check value), the framing, writers that share a
// directory and a second, and the errors a bad directory or a full disk
// give; histograms over TensorFlow's buckets. training_test reads real
// files back with an independent reader, python_summaries histograms.
#include "daemon/client/training/event_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <catch2/catch.hpp>

#include "tests/integration/temp_dir.h"

namespace tfd::training {
namespace {

TEST_CASE("the masked CRC-32C of the check string") {
  // CRC-32C("123456789") is 0xE3069283; masked: rotated right 15, plus 0xa282ead8.
  CHECK(MaskedCrc32c("123456789", 9) == 0xc78ab0e5u);
}

TEST_CASE("a TFRecord is length, its CRC, the data, its CRC") {
  const std::string data = "abc";
  const std::string record = TfRecord(data);
  REQUIRE(record.size() == 8 + 4 + 3 + 4);
  uint64_t length = 0;
  std::memcpy(&length, record.data(), 8);
  CHECK(length == 3);
  uint32_t length_crc = 0, data_crc = 0;
  std::memcpy(&length_crc, record.data() + 8, 4);
  std::memcpy(&data_crc, record.data() + 15, 4);
  CHECK(length_crc == MaskedCrc32c(record.data(), 8));
  CHECK(record.substr(12, 3) == data);
  CHECK(data_crc == MaskedCrc32c("abc", 3));
}

TEST_CASE("writers in one directory get files of their own; a bad directory is refused") {
  testing::TempDir dir;
  const std::string logdir = dir.path() + "/a/b";
  std::set<std::string> paths;
  std::vector<std::unique_ptr<EventFileWriter>> writers;
  for (int i = 0; i < 3; ++i) {
    auto w = EventFileWriter::Create(logdir);  // the same second, the same process
    REQUIRE(w.ok());
    CHECK((*w)->path().find("/events.out.tfevents.") != std::string::npos);
    CHECK((*w)->Write(i, {.scalars = {{"loss", 0.5}}}).ok());
    paths.insert((*w)->path());
    writers.push_back(std::move(w).value());
  }
  CHECK(paths.size() == 3);

  const std::string file = dir.Write("plain-file", "x");
  auto under_file = EventFileWriter::Create(file + "/logs");
  REQUIRE_FALSE(under_file.ok());
  CHECK(under_file.status().code() == Code::kInvalidArgument);
  CHECK(under_file.status().message().find("--logdir '" + file + "/logs'") != std::string::npos);
}

TEST_CASE("a full disk is an error naming the file, every time") {
  std::FILE* full = std::fopen("/dev/full", "wb");
  if (full == nullptr) {
    WARN("no /dev/full here: the full-disk case is not checked");
    return;
  }
  EventFileWriter writer("/dev/full", full);
  for (int i = 0; i < 2; ++i) {
    Status s = writer.Write(i, {.scalars = {{"loss", 1.0}}});
    CHECK(s.code() == Code::kInternal);
    CHECK(s.message().find("writing event file '/dev/full'") != std::string::npos);
  }
}

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

}  // namespace
}  // namespace tfd::training
