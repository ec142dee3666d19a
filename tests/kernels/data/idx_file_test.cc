// The IDX reader: well-formed files decode to their bytes; every kind of
// malformed file is refused with a message naming the file and the fault.
#include "kernels/data/idx_file.h"

#include "tests/kernels/data/data_test_util.h"

namespace tfd::testing {
namespace {

using kernels::data::ParseIdxImages;
using kernels::data::ParseIdxLabels;
using kernels::data::ReadIdxImages;
using kernels::data::ReadIdxLabels;

TEST_CASE("IDX images and labels decode to their header and bytes") {
  auto images = ParseIdxImages(IdxImagesBytes(10, 2, 3), "im");
  REQUIRE(images.ok());
  CHECK(images->count == 10);
  CHECK(images->rows == 2);
  CHECK(images->cols == 3);
  REQUIRE(images->pixels.size() == 60);
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 6; ++j) CHECK(images->pixels[i * 6 + j] == TestPixel(i, j));
  }
  auto labels = ParseIdxLabels(IdxLabelsBytes({3, 1, 4, 1, 5}), "lb");
  REQUIRE(labels.ok());
  CHECK(labels->labels == std::vector<uint8_t>{3, 1, 4, 1, 5});
}

TEST_CASE("IDX files with no examples are well formed") {
  auto images = ParseIdxImages(IdxImagesBytes(0, 28, 28), "im");
  REQUIRE(images.ok());
  CHECK(images->count == 0);
  CHECK(images->pixels.empty());
  auto labels = ParseIdxLabels(IdxLabelsBytes({}), "lb");
  REQUIRE(labels.ok());
  CHECK(labels->labels.empty());
}

TEST_CASE("Malformed IDX files are INVALID_ARGUMENT naming the file and the fault") {
  const std::string good = IdxImagesBytes(4, 2, 3);
  struct Case {
    const char* what;
    std::string bytes;
    const char* expect;
  };
  std::string swapped = IdxLabelsBytes({1, 2, 3});
  std::string gzip = good;
  gzip[0] = '\x1f';
  gzip[1] = '\x8b';
  std::string huge;  // dimensions whose product overflows 64 bits
  AppendBigEndian32(huge, 0x00000803);
  for (int i = 0; i < 3; ++i) AppendBigEndian32(huge, 0xffffffffu);
  const Case cases[] = {
      {"empty", "", "too short for an IDX header"},
      {"cut in the header", good.substr(0, 10), "its header alone takes 16"},
      {"cut in the pixels", good.substr(0, good.size() - 1), "only 23 bytes follow the header"},
      {"trailing bytes", good + "xy", "2 bytes more than its header accounts for"},
      {"a labels file", swapped, "magic number 0x00000801 but uint8 images have 0x00000803"},
      {"gzipped", gzip, "gunzip it first"},
      {"absurd dimensions", huge, "more than 2^64"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    auto got = ParseIdxImages(c.bytes, "data/train-images");
    REQUIRE(got.status().code() == Code::kInvalidArgument);
    INFO(got.status().message());
    CHECK(Contains(got.status().message(), "IDX file 'data/train-images'"));
    CHECK(Contains(got.status().message(), c.expect));
  }
  auto labels = ParseIdxLabels(good, "lb");
  CHECK(labels.status().code() == Code::kInvalidArgument);
  CHECK(Contains(labels.status().message(), "uint8 labels have 0x00000801"));
}

TEST_CASE("Reading IDX files from disk") {
  DataTempDir dir;
  WriteBytes(dir.path() / "im", IdxImagesBytes(3, 1, 2));
  WriteBytes(dir.path() / "lb", IdxLabelsBytes({7, 8, 9}));
  auto images = ReadIdxImages(dir.path() / "im", "im");
  REQUIRE(images.ok());
  CHECK(images->count == 3);
  CHECK(images->pixels == std::vector<uint8_t>{0, 1, 25, 26, 50, 51});
  auto labels = ReadIdxLabels(dir.path() / "lb", "lb");
  REQUIRE(labels.ok());
  CHECK(labels->labels == std::vector<uint8_t>{7, 8, 9});

  SECTION("a truncated file on disk is caught before its payload is read") {
    std::string cut = IdxImagesBytes(3, 1, 2);
    cut.pop_back();
    WriteBytes(dir.path() / "cut", cut);
    auto got = ReadIdxImages(dir.path() / "cut", "cut");
    CHECK(got.status().code() == Code::kInvalidArgument);
    CHECK(Contains(got.status().message(), "IDX file 'cut' is truncated"));
  }
  SECTION("a missing file is NOT_FOUND, a directory INVALID_ARGUMENT") {
    auto missing = ReadIdxLabels(dir.path() / "nope", "nope");
    CHECK(missing.status().code() == Code::kNotFound);
    CHECK(Contains(missing.status().message(), "'nope' does not exist"));
    auto directory = ReadIdxLabels(dir.path(), "somedir");
    CHECK(directory.status().code() == Code::kInvalidArgument);
    CHECK(Contains(directory.status().message(), "'somedir' is a directory"));
  }
}

}  // namespace
}  // namespace tfd::testing
