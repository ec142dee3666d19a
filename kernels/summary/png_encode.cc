// PNG encoding; see png_encode.h. The format (ISO/IEC 15948): an 8-byte
// signature, then chunks, each its data's length (big endian), a 4-letter
// type, the data and the CRC-32 of type and data: IHDR (the size and pixel
// format), IDAT (the zlib stream of the rows, each after a filter byte, 0
// for none) and IEND.
#include "kernels/summary/png_encode.h"

#include <zlib.h>

#include <limits>
#include <string_view>

namespace tfd::kernels::summary {
namespace {

void PutBigEndian32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xFF));
}

void PutChunk(std::string& out, std::string_view type, std::string_view data) {
  PutBigEndian32(out, static_cast<uint32_t>(data.size()));
  const size_t at = out.size();
  out += type;
  out += data;
  const auto* typed = reinterpret_cast<const Bytef*>(out.data() + at);
  PutBigEndian32(out, static_cast<uint32_t>(crc32(0L, typed, 4 + data.size())));
}

// PNG's color type for 1-4 channels: gray, gray + alpha, RGB, RGBA.
char ColorType(int channels) {
  constexpr char kTypes[] = {0, 4, 2, 6};
  return kTypes[channels - 1];
}

}  // namespace

StatusOr<std::string> EncodePng(const uint8_t* pixels, int64_t height, int64_t width,
                                int channels) {
  constexpr int64_t kMaxSide = std::numeric_limits<int32_t>::max();
  if (height < 1 || width < 1 || height > kMaxSide || width > kMaxSide) {
    return errors::InvalidArgument("a PNG image of ", height, "x", width,
                                   " pixels: each side must be 1 to 2^31 - 1");
  }
  if (channels < 1 || channels > 4) {
    return errors::InvalidArgument("a PNG image has 1 to 4 channels, not ", channels);
  }
  const int64_t row = width * channels;
  // The rows, each after its filter byte (0: none).
  std::string raw;
  raw.reserve(static_cast<size_t>(height * (row + 1)));
  for (int64_t y = 0; y < height; ++y) {
    raw.push_back('\0');
    raw.append(reinterpret_cast<const char*>(pixels + y * row), static_cast<size_t>(row));
  }
  uLongf deflated_size = compressBound(raw.size());
  std::string deflated(deflated_size, '\0');
  const int z =
      compress2(reinterpret_cast<Bytef*>(deflated.data()), &deflated_size,
                reinterpret_cast<const Bytef*>(raw.data()), raw.size(), Z_DEFAULT_COMPRESSION);
  if (z != Z_OK) return errors::Internal("zlib could not deflate a PNG image: error ", z);
  deflated.resize(deflated_size);

  std::string header;
  PutBigEndian32(header, static_cast<uint32_t>(width));
  PutBigEndian32(header, static_cast<uint32_t>(height));
  header +=
      {8, ColorType(channels), 0, 0, 0};  // bit depth, color type, deflate, filters, no interlace
  std::string png = "\x89PNG\r\n\x1a\n";
  PutChunk(png, "IHDR", header);
  PutChunk(png, "IDAT", deflated);
  PutChunk(png, "IEND", "");
  return png;
}

}  // namespace tfd::kernels::summary
