// Parsing a Criteo TSV line: fields split on tabs, integers and hex
// categories read with from_chars so that nothing depends on the locale.
#include "kernels/data/criteo_line.h"

#include <algorithm>
#include <charconv>
#include <string>

namespace tfd::kernels::data {
namespace {

// At most this many characters of a bad field go into a message.
constexpr size_t kQuoteLimit = 40;

std::string Quote(std::string_view field) {
  if (field.size() <= kQuoteLimit) return "'" + std::string(field) + "'";
  return "'" + std::string(field.substr(0, kQuoteLimit)) + "...' (" +
         std::to_string(field.size()) + " characters)";
}

// "I3" for dense feature 2, "C1" for categorical 0.
std::string FieldName(int index) {
  if (index == 0) return "the label";
  if (index <= kCriteoDense) return "I" + std::to_string(index);
  return "C" + std::to_string(index - kCriteoDense);
}

Status ParseLabel(std::string_view f, float& out) {
  if (f == "0" || f == "1") {
    out = f == "1" ? 1.0f : 0.0f;
    return OkStatus();
  }
  return errors::InvalidArgument("the label must be 0 or 1, not ", Quote(f));
}

Status ParseDense(std::string_view f, int index, float& out) {
  if (f.empty()) {
    out = 0;
    return OkStatus();
  }
  int64_t v = 0;
  const char* end = f.data() + f.size();
  const auto [ptr, ec] = std::from_chars(f.data(), end, v);
  if (ec != std::errc() || ptr != end) {
    return errors::InvalidArgument(FieldName(index), " must be a decimal integer or empty, not ",
                                   Quote(f));
  }
  out = static_cast<float>(v);
  return OkStatus();
}

Status ParseCategory(std::string_view f, int index, int64_t num_buckets, int64_t& out) {
  if (f.empty()) {
    out = -1;
    return OkStatus();
  }
  uint32_t v = 0;
  const char* end = f.data() + f.size();
  const auto [ptr, ec] = std::from_chars(f.data(), end, v, 16);
  if (f.size() > 8 || ec != std::errc() || ptr != end) {
    return errors::InvalidArgument(FieldName(index), " must be 1 to 8 hex digits or empty, not ",
                                   Quote(f));
  }
  out = CriteoRow(v, index - 1 - kCriteoDense, num_buckets);
  return OkStatus();
}

}  // namespace

Status ParseCriteoLine(std::string_view line, int64_t num_buckets, CriteoExample& out) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const auto fields = std::count(line.begin(), line.end(), '\t') + 1;
  if (fields != kCriteoFields) {
    return errors::InvalidArgument("expected ", kCriteoFields,
                                   " tab-separated fields (label, 13 integers, 26 categories) "
                                   "but the line has ", fields);
  }
  size_t start = 0;
  for (int index = 0; index < kCriteoFields; ++index) {
    const size_t tab = line.find('\t', start);
    const std::string_view f =
        line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start);
    start = tab + 1;
    if (index == 0) {
      TFD_RETURN_IF_ERROR(ParseLabel(f, out.label));
    } else if (index <= kCriteoDense) {
      TFD_RETURN_IF_ERROR(ParseDense(f, index, out.dense[index - 1]));
    } else {
      TFD_RETURN_IF_ERROR(
          ParseCategory(f, index, num_buckets, out.ids[index - 1 - kCriteoDense]));
    }
  }
  return OkStatus();
}

}  // namespace tfd::kernels::data
