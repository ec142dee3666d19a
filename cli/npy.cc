#include "cli/npy.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

namespace tfd::cli {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

struct Header {
  std::string descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;
};

// A parser for the one Python literal a .npy header holds:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  StatusOr<Header> Parse() {
    Header h;
    if (!Eat('{')) return Fail("expected '{'");
    while (!Eat('}')) {
      TFD_ASSIGN_OR_RETURN(std::string key, String());
      if (!Eat(':')) return Fail("expected ':' after '" + key + "'");
      if (key == "descr") {
        TFD_ASSIGN_OR_RETURN(h.descr, String());
      } else if (key == "fortran_order") {
        if (Word("True")) {
          h.fortran_order = true;
        } else if (Word("False")) {
          h.fortran_order = false;
        } else {
          return Fail("fortran_order is neither True nor False");
        }
      } else if (key == "shape") {
        TFD_ASSIGN_OR_RETURN(h.shape, Tuple());
      } else {
        return Fail("unexpected key '" + key + "'");
      }
      if (!Eat(',')) {
        if (!Eat('}')) return Fail("expected ',' or '}'");
        break;
      }
    }
    SkipSpace();
    if (pos_ != text_.size()) return Fail("text after the closing '}'");
    if (h.descr.empty()) return Fail("no 'descr'");
    if (!h.fortran_order) return Fail("no 'fortran_order'");
    if (!h.shape) return Fail("no 'shape'");
    return h;
  }

 private:
  Status Fail(const std::string& what) const {
    return errors::InvalidArgument("malformed header at offset ", pos_, ": ", what);
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::strchr(" \t\n\r", text_[pos_])) ++pos_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Word(std::string_view w) {
    SkipSpace();
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  StatusOr<std::string> String() {
    SkipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      return Fail("expected a quoted string");
    }
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return Fail("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  StatusOr<std::vector<int64_t>> Tuple() {
    if (!Eat('(')) return Fail("shape is not a tuple");
    std::vector<int64_t> dims;
    while (!Eat(')')) {
      SkipSpace();
      int64_t d = 0;
      size_t digits = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (d > (INT64_MAX - 9) / 10) return Fail("a dimension is too large");
        d = d * 10 + (text_[pos_++] - '0');
        ++digits;
      }
      if (digits == 0) return Fail("a dimension is not a non-negative integer");
      Word("L");  // Python 2 longs
      dims.push_back(d);
      if (!Eat(',')) {
        if (!Eat(')')) return Fail("expected ',' or ')' in shape");
        break;
      }
    }
    return dims;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

struct NpyType {
  const char* descr;
  DType dtype;
  size_t item_size;
};
constexpr NpyType kTypes[] = {
    {"<f4", DType::kFloat32, 4}, {"<f8", DType::kFloat64, 8}, {"<i4", DType::kInt32, 4},
    {"<i8", DType::kInt64, 8},   {"|u1", DType::kUInt8, 1},   {"|b1", DType::kBool, 1},
};

std::string Supported() {
  std::string s;
  for (const NpyType& t : kTypes) s += (s.empty() ? "" : ", ") + std::string(t.descr);
  return s;
}

// What the preamble and header of a .npy file say: the tensor the body
// holds and where the body starts. Nothing is allocated.
struct Layout {
  const NpyType* type = nullptr;
  TensorShape shape;
  size_t body_offset = 0;
};

template <typename... Args>
Status Bad(const std::string& source, const Args&... what) {
  return errors::InvalidArgument("'", source, "' is not a usable .npy file: ", what...);
}

// The preamble (magic, version, header length) is in the first
// kPreambleBytes; `head` holds at least that much of the file, or all of a
// shorter one. Returns where the header ends (the body's offset), with
// `*header_start` where it begins.
constexpr size_t kPreambleBytes = 12;

StatusOr<size_t> ParsePreamble(std::string_view head, uint64_t file_size, const std::string& source,
                               size_t* header_start) {
  if (head.size() < 10 || head.substr(0, kMagic.size()) != kMagic) {
    return Bad(source, "it does not start with the .npy magic \\x93NUMPY");
  }
  const uint8_t major = static_cast<uint8_t>(head[6]);
  const uint8_t minor = static_cast<uint8_t>(head[7]);
  size_t header_len = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(head[8]) | (size_t{static_cast<uint8_t>(head[9])} << 8);
    *header_start = 10;
  } else if (major == 2 || major == 3) {
    if (head.size() < 12) return Bad(source, "the header length is cut off");
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<uint8_t>(head[8 + i]);
    *header_start = 12;
  } else {
    return Bad(source, "format version ", int{major}, ".", int{minor}, " is not 1.0, 2.0 or 3.0");
  }
  if (minor != 0) return Bad(source, "format version ", int{major}, ".", int{minor}, " is not supported");
  if (header_len > file_size - *header_start) {
    return Bad(source, "the header says ", header_len, " bytes but the file has ",
               file_size - *header_start, " after the preamble");
  }
  return *header_start + header_len;
}

// The header's literal, checked against a body of `body_bytes`.
StatusOr<Layout> ParseHeader(std::string_view text, size_t body_offset, uint64_t body_bytes,
                             const std::string& source) {
  auto header = HeaderParser(text).Parse();
  if (!header.ok()) return Bad(source, header.status().message());
  if (*header->fortran_order) {
    return Bad(source, "fortran_order is True; only C-order arrays are supported "
                       "(save with np.ascontiguousarray)");
  }
  Layout layout;
  layout.body_offset = body_offset;
  for (const NpyType& t : kTypes) {
    if (header->descr == t.descr) layout.type = &t;
  }
  if (layout.type == nullptr) {
    return Bad(source, "dtype '", header->descr, "' is not supported (expected one of ", Supported(), ")");
  }
  // Check the body's length against the shape before allocating anything.
  const std::vector<int64_t>& dims = *header->shape;
  uint64_t elements = 1;
  for (int64_t d : dims) {
    if (d != 0 && elements > body_bytes / static_cast<uint64_t>(d)) {
      elements = UINT64_MAX;
      break;
    }
    elements *= static_cast<uint64_t>(d);
  }
  std::ostringstream shape_text;
  shape_text << "[";
  for (size_t i = 0; i < dims.size(); ++i) shape_text << (i ? ", " : "") << dims[i];
  shape_text << "]";
  if (elements == UINT64_MAX || elements * layout.type->item_size != body_bytes) {
    return Bad(source, "shape ", shape_text.str(), " of ", header->descr, " needs ",
               elements == UINT64_MAX ? std::string("more")
                                      : std::to_string(elements * layout.type->item_size),
               " bytes of data but the file has ", body_bytes);
  }
  auto shape = TensorShape::Make(dims);
  if (!shape.ok()) return Bad(source, shape.status().message());
  layout.shape = *shape;
  return layout;
}

// .npy's bools are bytes, any nonzero one true; the tensor's hold 0 or 1.
void NormalizeBools(Tensor& t) {
  auto* bytes = reinterpret_cast<unsigned char*>(t.raw_data());
  for (size_t i = 0; i < t.total_bytes(); ++i) bytes[i] = bytes[i] != 0;
}

}  // namespace

StatusOr<Tensor> ParseNpy(std::string_view bytes, const std::string& source) {
  size_t header_start = 0;
  TFD_ASSIGN_OR_RETURN(size_t body_offset, ParsePreamble(bytes, bytes.size(), source, &header_start));
  TFD_ASSIGN_OR_RETURN(Layout layout,
                       ParseHeader(bytes.substr(header_start, body_offset - header_start),
                                   body_offset, bytes.size() - body_offset, source));
  TFD_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(layout.type->dtype, layout.shape));
  // Every supported dtype is little-endian, as is every host tfd builds for.
  if (t.total_bytes() > 0) std::memcpy(t.raw_data(), bytes.data() + body_offset, t.total_bytes());
  if (layout.type->dtype == DType::kBool) NormalizeBools(t);
  return t;
}

StatusOr<Tensor> ReadNpy(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return errors::NotFound("feed file '", path, "' does not exist or is not a regular file");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return errors::NotFound("cannot read feed file '", path, "': ", ec.message());
  if (size > kMaxNpyFileBytes) {
    return errors::InvalidArgument("feed file '", path, "' is ", size, " bytes, over the limit of ",
                                   kMaxNpyFileBytes);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return errors::NotFound("cannot open feed file '", path, "'");
  auto read = [&in, &path](char* to, size_t n) -> Status {
    in.read(to, static_cast<std::streamsize>(n));
    if (static_cast<size_t>(in.gcount()) != n) {
      return errors::Unavailable("reading feed file '", path, "' stopped early");
    }
    return OkStatus();
  };
  // The preamble and header first; the body then goes straight into the
  // tensor, so a large feed is in memory once, not twice.
  std::string head(std::min<uint64_t>(size, kPreambleBytes), '\0');
  TFD_RETURN_IF_ERROR(read(head.data(), head.size()));
  size_t header_start = 0;
  TFD_ASSIGN_OR_RETURN(size_t body_offset, ParsePreamble(head, size, path, &header_start));
  if (body_offset > head.size()) {
    const size_t had = head.size();
    head.resize(body_offset);
    TFD_RETURN_IF_ERROR(read(head.data() + had, body_offset - had));
  }
  TFD_ASSIGN_OR_RETURN(Layout layout,
                       ParseHeader(std::string_view(head).substr(header_start, body_offset - header_start),
                                   body_offset, size - body_offset, path));
  // A header shorter than the preamble's 12 bytes (version 1.0 leaves 10)
  // left some of the body in `head`.
  if (body_offset < head.size()) {
    in.clear();
    in.seekg(static_cast<std::streamoff>(body_offset));
  }
  TFD_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(layout.type->dtype, layout.shape));
  if (t.total_bytes() > 0) TFD_RETURN_IF_ERROR(read(static_cast<char*>(t.raw_data()), t.total_bytes()));
  if (layout.type->dtype == DType::kBool) NormalizeBools(t);
  return t;
}

}  // namespace tfd::cli
