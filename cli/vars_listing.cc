#include "cli/vars_listing.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace tfd::cli {
namespace {

std::string Describe(const VariableDescription& v) {
  return std::string(DTypeName(v.dtype)) + v.shape.ToString();
}

// The row a partitioned variable's first shard opens.
VarsRow LogicalRow(const VariableDescription& shard, const SaveSliceInfo& slice) {
  VarsRow row;
  row.variable.name = slice.full_name;
  row.variable.dtype = shard.dtype;
  row.variable.shape = PartialShape(slice.full_shape);
  row.variable.initialized = true;
  return row;
}

// Sorts a partitioned row's shards by their first row.
void SortShards(VarsRow& row) {
  std::vector<size_t> order(row.shards.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&row](size_t a, size_t b) {
    return row.slices[a].first_row < row.slices[b].first_row;
  });
  VarsRow sorted{row.variable, {}, {}};
  for (size_t i : order) {
    sorted.shards.push_back(row.shards[i]);
    sorted.slices.push_back(row.slices[i]);
  }
  row = std::move(sorted);
}

}  // namespace

std::vector<VarsRow> GroupVariables(const std::vector<VariableDescription>& vars) {
  std::vector<VarsRow> rows;
  std::map<std::string, size_t> logical;  // full name -> its row
  for (const VariableDescription& v : vars) {
    auto slice = v.slice.empty() ? StatusOr<SaveSliceInfo>(errors::NotFound("unpartitioned"))
                                 : SaveSliceInfo::Parse(v.slice);
    if (!slice.ok()) {
      rows.push_back({v, {}, {}});
      continue;
    }
    auto [at, added] = logical.emplace(slice->full_name, rows.size());
    if (added) rows.push_back(LogicalRow(v, *slice));
    VarsRow& row = rows[at->second];
    row.variable.initialized = row.variable.initialized && v.initialized;
    row.shards.push_back(v);
    row.slices.push_back(*slice);
  }
  for (VarsRow& row : rows) {
    if (!row.shards.empty()) SortShards(row);
  }
  return rows;
}

std::string VarsRowText(const VarsRow& row) {
  const VariableDescription& v = row.variable;
  std::string line = fmt::format("{:<30} {:<20} {:<14}", v.name, Describe(v),
                                 v.initialized ? "initialized" : "uninitialized");
  if (row.shards.empty()) return line + " " + v.device;
  line += fmt::format(" {} shards:", row.shards.size());
  for (size_t i = 0; i < row.shards.size(); ++i) {
    line += fmt::format("{} {} rows [{}, {})", i ? "," : "", row.shards[i].device,
                        row.slices[i].first_row, row.slices[i].end_row());
  }
  return line;
}

Json VarsRowJson(const VarsRow& row) {
  const VariableDescription& v = row.variable;
  Json j{{"name", v.name}, {"dtype", DTypeName(v.dtype)}, {"shape", v.shape.ToString()},
         {"initialized", v.initialized}};
  if (row.shards.empty()) {
    j["device"] = v.device;
    return j;
  }
  Json shards = Json::array();
  for (size_t i = 0; i < row.shards.size(); ++i) {
    shards.push_back({{"name", row.shards[i].name}, {"device", row.shards[i].device},
                      {"first_row", row.slices[i].first_row}, {"rows", row.slices[i].rows},
                      {"initialized", row.shards[i].initialized}});
  }
  j["shards"] = std::move(shards);
  return j;
}

}  // namespace tfd::cli
