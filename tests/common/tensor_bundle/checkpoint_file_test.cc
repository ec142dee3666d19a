// Checkpoint files: round trips of every dtype, detection of flipped bytes
// and truncation, atomic replacement, and the CRC-32C underneath.
#include "common/tensor_bundle/checkpoint_file.h"

#include <signal.h>
#include <sys/resource.h>

#include "common/tensor_bundle/crc32c.h"
#include "tests/util/io_test_util.h"

namespace tfd::testing {
namespace {

using kernels::CheckpointReader;
using kernels::ReadCheckpoint;
using kernels::ReadTensor;
using kernels::WriteCheckpoint;

// One tensor of every dtype, including a scalar, empty tensors and strings
// with NULs and empty elements.
std::vector<std::pair<std::string, Tensor>> EveryDType() {
  return {
      {"f32", Tensor::FromVector<float>({1.5f, -2.25f, 3e30f, -0.0f, 7, 8}, {2, 3})},
      {"f64", Tensor::FromVector<double>({3.141592653589793, -1e-300})},
      {"i32", Tensor::FromVector<int32_t>({INT32_MIN, -1, 0, INT32_MAX})},
      {"i64", Tensor::Scalar<int64_t>(INT64_MIN + 5)},
      {"u8", Tensor::FromVector<uint8_t>({0, 1, 254, 255}, {2, 1, 2})},
      {"bool", Tensor::FromVector<bool>({true, false, true})},
      {"str", Tensor::FromVector<std::string>({"", "hello", std::string("a\0b", 3), "x"}, {2, 2})},
      {"empty_f32", *Tensor::Allocate(DType::kFloat32, TensorShape({0, 3}))},
      {"empty_str", *Tensor::Allocate(DType::kString, TensorShape({4, 0}))},
      {"scalar_str", Tensor::Scalar("just one")},
  };
}

Status Write(const std::filesystem::path& p,
             const std::vector<std::pair<std::string, Tensor>>& items) {
  std::vector<std::string> names;
  std::vector<Tensor> tensors;
  for (const auto& [n, t] : items) {
    names.push_back(n);
    tensors.push_back(t);
  }
  return WriteCheckpoint(p, names, tensors);
}

TEST_CASE("CRC-32C matches the published check values") {
  const std::string digits = "123456789";
  CHECK(kernels::crc32c::Value(digits.data(), digits.size()) == 0xE3069283u);
  const std::string zeros(32, '\0');
  CHECK(kernels::crc32c::Value(zeros.data(), zeros.size()) == 0x8A9136AAu);  // RFC 3720
  std::string long_text;
  for (int i = 0; i < 1000; ++i) long_text += static_cast<char>(i * 7);
  const uint32_t whole = kernels::crc32c::Value(long_text.data(), long_text.size());
  const uint32_t split = kernels::crc32c::Extend(kernels::crc32c::Value(long_text.data(), 333),
                                                 long_text.data() + 333, long_text.size() - 333);
  CHECK(whole == split);
}

TEST_CASE("every dtype survives a round trip") {
  TempDir dir;
  const auto path = dir.path() / "all.ckpt";
  const auto items = EveryDType();
  REQUIRE(Write(path, items).ok());
  auto back = ReadCheckpoint(path);
  INFO(back.status().ToString());
  REQUIRE(back.ok());
  REQUIRE(back->size() == items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    INFO(items[i].first);
    CHECK((*back)[i].first == items[i].first);
    CHECK(TensorsEqual((*back)[i].second, items[i].second));
  }
  auto reader = CheckpointReader::Open(path);
  REQUIRE(reader.ok());
  const kernels::CheckpointEntry* e = (*reader)->Find("u8");
  REQUIRE(e != nullptr);
  CHECK(e->dtype == DType::kUInt8);
  CHECK(e->shape == TensorShape({2, 1, 2}));
  CHECK(e->offset % 64 == 0);

  SECTION("large tensors, written past the buffer, come back whole") {
    std::vector<double> big(300000);
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<double>(i) * 0.5;
    std::vector<std::string> strings(40000, std::string(40, 'z'));
    strings[12345] = "marker";
    REQUIRE(Write(path, {{"big", Tensor::FromVector<double>(big)},
                         {"strings", Tensor::FromVector<std::string>(strings)}})
                .ok());
    auto t = ReadTensor(path, "big");
    REQUIRE(t.ok());
    CHECK(TensorsEqual(*t, Tensor::FromVector<double>(big)));
    auto s = ReadTensor(path, "strings");
    REQUIRE(s.ok());
    CHECK(s->data<std::string>()[12345] == "marker");
    CHECK(TensorsEqual(*s, Tensor::FromVector<std::string>(strings)));
  }
}

TEST_CASE("a flipped byte is detected and names what it damaged") {
  TempDir dir;
  const auto path = dir.path() / "model.ckpt";
  REQUIRE(Write(path, {{"weights", Tensor::FromVector<float>({1, 2, 3, 4})},
                       {"names", Tensor::FromVector<std::string>({"a", "bc"})}})
              .ok());
  const std::string good = ReadFile(path);
  auto reader = CheckpointReader::Open(path);
  REQUIRE(reader.ok());
  const kernels::CheckpointEntry weights = *(*reader)->Find("weights");
  const kernels::CheckpointEntry names = *(*reader)->Find("names");
  reader->reset();

  SECTION("in a tensor's payload") {
    for (const auto* e : {&weights, &names}) {
      for (uint64_t k = 0; k < e->length; ++k) {
        std::string bad = good;
        bad[e->offset + k] ^= 0x10;
        WriteFile(path, bad);
        auto t = ReadTensor(path, e->name);
        CHECK(t.status().code() == Code::kDataLoss);
        CHECK(t.status().message() == "checkpoint '" + path.string() +
                                          "' is corrupt: checksum mismatch in tensor '" + e->name +
                                          "'");
      }
    }
  }
  SECTION("in the index, header or footer") {
    const uint64_t index_start = names.offset + names.length;
    std::vector<uint64_t> spots;
    for (uint64_t k = index_start; k < good.size(); ++k) spots.push_back(k);
    for (uint64_t k = 0; k < 12; ++k) spots.push_back(k);  // magic and version
    for (uint64_t k : spots) {
      std::string bad = good;
      bad[k] ^= 0x01;
      WriteFile(path, bad);
      INFO("byte " << k);
      auto all = ReadCheckpoint(path);
      // The version field (bytes 8-11) reads as another format version.
      CHECK(all.status().code() ==
            (k >= 8 && k < 12 ? Code::kFailedPrecondition : Code::kDataLoss));
    }
    std::string bad = good;
    bad[index_start + 5] ^= 0x01;
    WriteFile(path, bad);
    CHECK(Contains(CheckpointReader::Open(path).status().message(),
                   "checksum mismatch in the index"));
  }
}

TEST_CASE("a truncated file is detected at every length") {
  TempDir dir;
  const auto path = dir.path() / "model.ckpt";
  REQUIRE(
      Write(path, {{"a", Tensor::FromVector<int64_t>({1, 2, 3})}, {"s", Tensor::Scalar("text")}})
          .ok());
  const std::string good = ReadFile(path);
  for (size_t len = 0; len < good.size(); ++len) {
    WriteFile(path, good.substr(0, len));
    INFO("length " << len);
    auto all = ReadCheckpoint(path);
    REQUIRE_FALSE(all.ok());
    CHECK(all.status().code() == Code::kDataLoss);
  }
  WriteFile(path, good.substr(0, good.size() - 1));
  CHECK(Contains(ReadCheckpoint(path).status().message(), "truncated"));
  WriteFile(path, good + "x");  // extended: the footer is no longer last
  CHECK(ReadCheckpoint(path).status().code() == Code::kDataLoss);
}

TEST_CASE("missing files and tensors are NOT_FOUND, naming them") {
  TempDir dir;
  const auto path = dir.path() / "model.ckpt";
  auto none = ReadTensor(path, "w");
  CHECK(none.status().code() == Code::kNotFound);
  CHECK(Contains(none.status().message(), path.string()));
  REQUIRE(Write(path, {{"w", Tensor::Scalar<float>(1)}}).ok());
  auto missing = ReadTensor(path, "bias");
  CHECK(missing.status().code() == Code::kNotFound);
  CHECK(Contains(missing.status().message(), "'bias'"));
  WriteFile(dir.path() / "junk", std::string(100, 'j'));
  CHECK(Contains(ReadCheckpoint(dir.path() / "junk").status().message(), "not a tfd checkpoint"));
}

TEST_CASE("bad arguments are refused before anything is written") {
  TempDir dir;
  const auto path = dir.path() / "model.ckpt";
  CHECK(WriteCheckpoint(path, {"a", "a"}, {Tensor::Scalar<float>(1), Tensor::Scalar<float>(2)})
            .code() == Code::kInvalidArgument);
  CHECK(WriteCheckpoint(path, {""}, {Tensor::Scalar<float>(1)}).code() == Code::kInvalidArgument);
  CHECK(WriteCheckpoint(path, {"a"}, {}).code() == Code::kInvalidArgument);
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(
      WriteCheckpoint(dir.path() / "no_such_dir" / "x", {"a"}, {Tensor::Scalar<float>(1)}).code() ==
      Code::kNotFound);
}

// Root ignores file permissions, so the failure is injected with a file-size
// limit: the write hits EFBIG part-way through, as on a full disk.
TEST_CASE("a failed write leaves the old checkpoint untouched and no temporary file") {
  TempDir dir;
  const auto path = dir.path() / "model.ckpt";
  REQUIRE(Write(path, {{"w", Tensor::FromVector<float>({1, 2, 3})}}).ok());
  const std::string old_bytes = ReadFile(path);

  rlimit saved;
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 64 * 1024;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  const Status s =
      Write(path, {{"w", Tensor::FromVector<float>(std::vector<float>(100000, 9.0f))}});
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, old_handler);

  CHECK_FALSE(s.ok());
  CHECK(Contains(s.message(), path.string()));
  CHECK(ReadFile(path) == old_bytes);
  auto w = ReadTensor(path, "w");
  REQUIRE(w.ok());
  CHECK(TensorsEqual(*w, Tensor::FromVector<float>({1, 2, 3})));
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  CHECK(files == 1);
}

TEST_CASE("a successful write replaces the old checkpoint") {
  TempDir dir;
  const auto path = dir.path() / "model.ckpt";
  REQUIRE(Write(path, {{"w", Tensor::Scalar<float>(1)}}).ok());
  REQUIRE(Write(path, {{"w", Tensor::Scalar<float>(2)}, {"b", Tensor::Scalar<int32_t>(3)}}).ok());
  auto all = ReadCheckpoint(path);
  REQUIRE(all.ok());
  REQUIRE(all->size() == 2);
  CHECK((*all)[0].second.scalar<float>() == 2);
  CHECK((*all)[1].second.scalar<int32_t>() == 3);
}

}  // namespace
}  // namespace tfd::testing
