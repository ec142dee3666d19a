// TensorBoard event files: the masked CRC-32C TFRecord uses (checked
// against the CRC-32C check value), the framing, writers that share a
// directory and a second, and the errors a bad directory or a full disk
// give. training_test reads real files back with an independent reader,
// python_summaries histograms (their buckets: summary_proto_test).
#include "daemon/client/training/event_file.h"

#include <sys/stat.h>

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
  CHECK(under_file.status().message().find("logdir '" + file + "/logs'") != std::string::npos);
}

TEST_CASE("a file's suffix ends its name; a suffix naming a directory is refused") {
  testing::TempDir dir;
  auto w = EventFileWriter::Create(dir.path(), ".eval");
  REQUIRE(w.ok());
  CHECK((*w)->path().size() > 5);
  CHECK((*w)->path().substr((*w)->path().size() - 5) == ".eval");
  // What a summary op made and a graph travel as they are, each in an event.
  REQUIRE((*w)->WriteSerialized(7, std::string("\x0a\x02\x0a\x00", 4)).ok());
  REQUIRE((*w)->WriteGraph("graph-bytes").ok());
  std::ifstream in((*w)->path(), std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(data.find(std::string("\x2a\x04\x0a\x02\x0a\x00", 6)) != std::string::npos);
  CHECK(data.find("\x22\x0bgraph-bytes") != std::string::npos);

  for (const char* bad : {"/x", "a/b"}) {
    auto refused = EventFileWriter::Create(dir.path(), bad);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == Code::kInvalidArgument);
  }
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

}  // namespace
}  // namespace tfd::training
