// Reading MNIST-format IDX files: the header is decoded and checked against
// the file's size first, then the elements are read in one go.
#include "kernels/data/idx_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <utility>

namespace tfd::kernels::data {
namespace {

// Big enough for any header this reader accepts (3 dimensions).
constexpr size_t kMaxHeaderBytes = 16;

uint32_t BigEndian32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{u[0]} << 24 | uint32_t{u[1]} << 16 | uint32_t{u[2]} << 8 | uint32_t{u[3]};
}

std::string Hex32(uint32_t v) {
  char buf[11];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

struct Header {
  std::vector<int64_t> dims;
  uint64_t header_bytes = 0;
  uint64_t payload_bytes = 0;
};

// `prefix` is the start of the file (at least kMaxHeaderBytes of it, or the
// whole file when shorter), `file_size` its full length. `what` ("images",
// "labels") says what the file was expected to hold.
StatusOr<Header> DecodeHeader(std::string_view prefix, uint64_t file_size, uint32_t magic,
                              const char* what, const std::string& name) {
  const std::string file = "IDX file '" + name + "'";
  if (prefix.size() < 4) {
    return errors::InvalidArgument(file, " is truncated: ", file_size,
                                   " bytes, too short for an IDX header");
  }
  const uint32_t seen = BigEndian32(prefix.data());
  if (seen != magic) {
    const bool gzip = static_cast<unsigned char>(prefix[0]) == 0x1f &&
                      static_cast<unsigned char>(prefix[1]) == 0x8b;
    return errors::InvalidArgument(file, " has magic number ", Hex32(seen), " but uint8 ", what,
                                   " have ", Hex32(magic),
                                   gzip ? " (it looks gzip-compressed: gunzip it first)" : "");
  }
  Header h;
  const int rank = static_cast<int>(magic & 0xff);
  h.header_bytes = 4 + 4 * static_cast<uint64_t>(rank);
  if (prefix.size() < h.header_bytes) {
    return errors::InvalidArgument(file, " is truncated: ", file_size, " bytes, but its header ",
                                   "alone takes ", h.header_bytes);
  }
  // The product of the dimensions cannot exceed the file's size, so checking
  // it against that bound as it grows also rules out overflow.
  const uint64_t available = file_size - h.header_bytes;
  uint64_t elements = 1;
  bool too_big = false;
  for (int i = 0; i < rank; ++i) {
    const uint32_t d = BigEndian32(prefix.data() + 4 + 4 * i);
    h.dims.push_back(d);
    if (d != 0 && elements > std::numeric_limits<uint64_t>::max() / d) too_big = true;
    if (!too_big) elements *= d;
  }
  std::string dims_text;
  for (size_t i = 0; i < h.dims.size(); ++i) {
    dims_text += (i == 0 ? "" : "x") + std::to_string(h.dims[i]);
  }
  if (too_big || elements > available) {
    return errors::InvalidArgument(file, " is truncated: its header says ", what, " of shape ",
                                   dims_text, " (", too_big ? "more than 2^64" :
                                   std::to_string(elements), " bytes) but only ", available,
                                   " bytes follow the header");
  }
  if (elements < available) {
    return errors::InvalidArgument(file, " has ", available - elements,
                                   " bytes more than its header accounts for (", what,
                                   " of shape ", dims_text, ")");
  }
  h.payload_bytes = elements;
  return h;
}

IdxImages ImagesFrom(const Header& h, std::vector<uint8_t> payload) {
  IdxImages out;
  out.count = h.dims[0];
  out.rows = h.dims[1];
  out.cols = h.dims[2];
  out.pixels = std::move(payload);
  return out;
}

IdxLabels LabelsFrom(const Header&, std::vector<uint8_t> payload) {
  IdxLabels out;
  out.labels = std::move(payload);
  return out;
}

std::vector<uint8_t> PayloadOf(const Header& h, std::string_view bytes) {
  std::string_view payload = bytes.substr(h.header_bytes);
  return std::vector<uint8_t>(payload.begin(), payload.end());
}

// Opens `path`, decodes its header, then reads exactly the payload the
// header promises (which DecodeHeader matched against the file's size).
template <typename Out>
StatusOr<Out> ReadIdx(const std::filesystem::path& path, const std::string& name, uint32_t magic,
                      const char* what, Out (*build)(const Header&, std::vector<uint8_t>)) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  if (!exists && !ec) return errors::NotFound("IDX file '", name, "' does not exist");
  if (std::filesystem::is_directory(path, ec)) {
    return errors::InvalidArgument("IDX file '", name, "' is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return errors::InvalidArgument("IDX file '", name, "' cannot be opened: ",
                                   std::strerror(errno));
  }
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0) return errors::InvalidArgument("IDX file '", name, "': cannot tell its size");
  std::string prefix(std::min<uint64_t>(kMaxHeaderBytes, static_cast<uint64_t>(size)), '\0');
  in.read(prefix.data(), static_cast<std::streamsize>(prefix.size()));
  TFD_ASSIGN_OR_RETURN(Header h, DecodeHeader(prefix, static_cast<uint64_t>(size), magic, what,
                                              name));
  std::vector<uint8_t> payload(h.payload_bytes);
  in.seekg(static_cast<std::streamoff>(h.header_bytes), std::ios::beg);
  in.read(reinterpret_cast<char*>(payload.data()), static_cast<std::streamsize>(payload.size()));
  if (!in) {
    return errors::InvalidArgument("IDX file '", name, "': read failed after ", in.gcount(),
                                   " of ", h.payload_bytes, " bytes");
  }
  return build(h, std::move(payload));
}

}  // namespace

StatusOr<IdxImages> ParseIdxImages(std::string_view bytes, const std::string& display_name) {
  TFD_ASSIGN_OR_RETURN(Header h, DecodeHeader(bytes, bytes.size(), kIdxImagesMagic, "images",
                                              display_name));
  return ImagesFrom(h, PayloadOf(h, bytes));
}

StatusOr<IdxLabels> ParseIdxLabels(std::string_view bytes, const std::string& display_name) {
  TFD_ASSIGN_OR_RETURN(Header h, DecodeHeader(bytes, bytes.size(), kIdxLabelsMagic, "labels",
                                              display_name));
  return LabelsFrom(h, PayloadOf(h, bytes));
}

StatusOr<IdxImages> ReadIdxImages(const std::filesystem::path& path,
                                  const std::string& display_name) {
  return ReadIdx<IdxImages>(path, display_name, kIdxImagesMagic, "images", &ImagesFrom);
}

StatusOr<IdxLabels> ReadIdxLabels(const std::filesystem::path& path,
                                  const std::string& display_name) {
  return ReadIdx<IdxLabels>(path, display_name, kIdxLabelsMagic, "labels", &LabelsFrom);
}

}  // namespace tfd::kernels::data
