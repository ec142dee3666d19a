#include "bench/mnist_files.h"

#include <cstdint>
#include <fstream>
#include <random>

namespace tfd::bench {
namespace {

void AppendBigEndian(std::string& s, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s.push_back(static_cast<char>((v >> shift) & 0xff));
}

Status WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return errors::Internal("cannot write '", path, "'");
  return OkStatus();
}

// IDX3 images (magic 0x803) and IDX1 labels (0x801), as in MNIST. Pixels
// are random: the benchmark measures speed, not learning.
Status WriteSet(const std::string& dir, const std::string& prefix, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string images, labels;
  images.reserve(16 + static_cast<size_t>(n) * 28 * 28);
  AppendBigEndian(images, 0x803);
  AppendBigEndian(images, static_cast<uint32_t>(n));
  AppendBigEndian(images, 28);
  AppendBigEndian(images, 28);
  AppendBigEndian(labels, 0x801);
  AppendBigEndian(labels, static_cast<uint32_t>(n));
  for (int i = 0; i < n; ++i) {
    labels.push_back(static_cast<char>(rng() % 10));
    for (int p = 0; p < 28 * 28; ++p) images.push_back(static_cast<char>(rng() & 0xff));
  }
  TFD_RETURN_IF_ERROR(WriteFile(dir + "/" + prefix + "-images-idx3-ubyte", images));
  return WriteFile(dir + "/" + prefix + "-labels-idx1-ubyte", labels);
}

}  // namespace

Status WriteMnistSizedFiles(const std::string& dir) {
  TFD_RETURN_IF_ERROR(WriteSet(dir, "train", kMnistTrain, 1));
  return WriteSet(dir, "t10k", kMnistTest, 2);
}

}  // namespace tfd::bench
