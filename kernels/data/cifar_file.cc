// Reading CIFAR binary files: the size is checked against the record size,
// then each record's labels are checked and its planes interleaved to HWC.
#include "kernels/data/cifar_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace tfd::kernels::data {

int64_t CifarNumClasses(int64_t label_bytes) { return label_bytes == 2 ? 100 : 10; }

namespace {

// CIFAR-100's coarse label (its first label byte) names one of 20 superclasses.
constexpr int kCifar100CoarseClasses = 20;

// INVALID_ARGUMENT naming the record unless its label bytes are in range.
Status CheckLabels(const uint8_t* record, int64_t label_bytes, int64_t index,
                   uint64_t offset, const std::string& name) {
  const int64_t classes = CifarNumClasses(label_bytes);
  const int label = record[label_bytes - 1];
  if (label >= classes) {
    return errors::InvalidArgument("record ", index, " (offset ", offset, ") of CIFAR file '",
                                   name, "' has label ", label, ", but labels are 0..",
                                   classes - 1, " with label_bytes = ", label_bytes);
  }
  if (label_bytes == 2 && record[0] >= kCifar100CoarseClasses) {
    return errors::InvalidArgument("record ", index, " (offset ", offset, ") of CIFAR file '",
                                   name, "' has coarse label ", int{record[0]},
                                   ", but CIFAR-100's coarse labels are 0..",
                                   kCifar100CoarseClasses - 1);
  }
  return OkStatus();
}

}  // namespace

Status ParseCifarRecords(std::string_view bytes, int64_t label_bytes,
                         const std::string& display_name, CifarRecords* out) {
  if (label_bytes != 1 && label_bytes != 2) {
    return errors::InvalidArgument("label_bytes must be 1 (CIFAR-10) or 2 (CIFAR-100), not ",
                                   label_bytes);
  }
  const uint64_t record_bytes = static_cast<uint64_t>(label_bytes + kCifarImageBytes);
  const uint64_t size = bytes.size();
  if (size % record_bytes != 0) {
    const uint64_t last = size - size % record_bytes;
    return errors::InvalidArgument("CIFAR file '", display_name, "' is truncated: ", size,
                                   " bytes is not a whole number of ", record_bytes,
                                   "-byte records; the record at offset ", last, " has only ",
                                   size - last, " bytes");
  }
  const auto n = static_cast<int64_t>(size / record_bytes);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t offset = static_cast<uint64_t>(i) * record_bytes;
    TFD_RETURN_IF_ERROR(CheckLabels(data + offset, label_bytes, i, offset, display_name));
  }
  const size_t old_pixels = out->pixels.size();
  out->pixels.resize(old_pixels + static_cast<size_t>(n * kCifarImageBytes));
  out->labels.reserve(out->labels.size() + static_cast<size_t>(n));
  constexpr int64_t kPlane = kCifarSide * kCifarSide;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* record = data + static_cast<uint64_t>(i) * record_bytes;
    out->labels.push_back(record[label_bytes - 1]);
    const uint8_t* planes = record + label_bytes;
    uint8_t* dst = out->pixels.data() + old_pixels + static_cast<size_t>(i * kCifarImageBytes);
    for (int64_t p = 0; p < kPlane; ++p) {
      for (int64_t ch = 0; ch < kCifarChannels; ++ch) {
        dst[p * kCifarChannels + ch] = planes[ch * kPlane + p];
      }
    }
  }
  out->count += n;
  return OkStatus();
}

Status ReadCifarFile(const std::filesystem::path& path, const std::string& display_name,
                     int64_t label_bytes, CifarRecords* out) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  if (!exists && !ec) return errors::NotFound("CIFAR file '", display_name, "' does not exist");
  if (std::filesystem::is_directory(path, ec)) {
    return errors::InvalidArgument("CIFAR file '", display_name, "' is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return errors::InvalidArgument("CIFAR file '", display_name, "' cannot be opened: ",
                                   std::strerror(errno));
  }
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0) {
    return errors::InvalidArgument("CIFAR file '", display_name, "': cannot tell its size");
  }
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), size);
  if (!in) {
    return errors::InvalidArgument("CIFAR file '", display_name, "': read failed after ",
                                   in.gcount(), " of ", size, " bytes");
  }
  return ParseCifarRecords(bytes, label_bytes, display_name, out);
}

}  // namespace tfd::kernels::data
