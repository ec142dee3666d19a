// Shared by the data tests: a scratch directory removed afterwards, and
// writers of small IDX files whose every byte the test knows.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace tfd::testing {

class DataTempDir {
 public:
  DataTempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tfd_data_test_XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~DataTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  DataTempDir(const DataTempDir&) = delete;
  DataTempDir& operator=(const DataTempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void WriteBytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

inline void AppendBigEndian32(std::string& s, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s.push_back(static_cast<char>((v >> shift) & 0xff));
}

// The pixel the test images hold at (image, offset): distinct per image, and
// 255 somewhere so the top of the scale is covered.
inline uint8_t TestPixel(int64_t image, int64_t offset) {
  return image == 9 && offset == 5 ? 255 : static_cast<uint8_t>(image * 25 + offset);
}

// An IDX images file of `n` images of rows x cols holding TestPixel values.
inline std::string IdxImagesBytes(uint32_t n, uint32_t rows, uint32_t cols) {
  std::string s;
  AppendBigEndian32(s, 0x00000803);
  AppendBigEndian32(s, n);
  AppendBigEndian32(s, rows);
  AppendBigEndian32(s, cols);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < rows * cols; ++j) s.push_back(static_cast<char>(TestPixel(i, j)));
  }
  return s;
}

inline std::string IdxLabelsBytes(const std::vector<uint8_t>& labels) {
  std::string s;
  AppendBigEndian32(s, 0x00000801);
  AppendBigEndian32(s, static_cast<uint32_t>(labels.size()));
  for (uint8_t l : labels) s.push_back(static_cast<char>(l));
  return s;
}

// "images" and "labels" in `dir`: `n` 2x3 images of TestPixel values, the
// label of example i being i, so a batch's labels name its examples.
inline void WriteCountingExamples(const std::filesystem::path& dir, int n) {
  std::vector<uint8_t> labels(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) labels[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
  WriteBytes(dir / "images", IdxImagesBytes(static_cast<uint32_t>(n), 2, 3));
  WriteBytes(dir / "labels", IdxLabelsBytes(labels));
}

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace tfd::testing
