#include "common/save_slice_info.h"

#include <charconv>
#include <vector>

namespace tfd {
namespace {

// Comma-separated integers; nullopt when any is not one.
std::optional<std::vector<int64_t>> ParseInts(std::string_view text) {
  std::vector<int64_t> out;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view part = text.substr(0, comma);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || end != part.data() + part.size() || part.empty()) return std::nullopt;
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

std::string JoinInts(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out;
}

}  // namespace

TensorShape SaveSliceInfo::ShardShape() const {
  TensorShape s = full_shape;
  s.set_dim(0, rows);
  return s;
}

std::string SaveSliceInfo::ToString() const {
  return full_name + ";" + JoinInts(full_shape.dims()) + ";" + std::to_string(first_row) + "," +
         std::to_string(rows);
}

StatusOr<SaveSliceInfo> SaveSliceInfo::Parse(const std::string& text) {
  auto bad = [&text](const std::string& why) {
    return errors::InvalidArgument("slice info '", text,
                                   "' is not FULL_NAME;D0,D1,...;FIRST_ROW,ROWS: ", why);
  };
  const size_t a = text.find(';');
  const size_t b = a == std::string::npos ? a : text.find(';', a + 1);
  if (b == std::string::npos || a == 0) return bad("expected a name and two ';'");
  const auto dims = ParseInts(std::string_view(text).substr(a + 1, b - a - 1));
  const auto rows = ParseInts(std::string_view(text).substr(b + 1));
  if (!dims || dims->empty()) return bad("the full shape needs at least one dimension");
  if (!rows || rows->size() != 2) return bad("expected FIRST_ROW,ROWS after the shape");
  auto shape = TensorShape::Make(*dims);
  if (!shape.ok()) return bad(shape.status().message());
  SaveSliceInfo s{text.substr(0, a), *shape, (*rows)[0], (*rows)[1]};
  if (s.first_row < 0 || s.rows < 0 || s.end_row() > s.full_shape.dim(0)) {
    return bad("rows [" + std::to_string(s.first_row) + ", " + std::to_string(s.end_row()) +
               ") are not within the " + std::to_string(s.full_shape.dim(0)) + " rows");
  }
  return s;
}

}  // namespace tfd
