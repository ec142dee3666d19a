// What `tfctl vars list` prints: each variable on a line, and a partitioned
// variable (api/partitioned_variables.h) as one line for all its shards —
// its logical name, full shape, shard count and where each shard lives —
// wherever the listing found them.
//
//   std::vector<VarsRow> rows = GroupVariables(listed);   // every task's variables
//   for (const VarsRow& r : rows) std::cout << VarsRowText(r) << "\n";
//   Json j = VarsRowJson(rows[0]);
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "cli/output.h"
#include "common/save_slice_info.h"
#include "daemon/client/client.h"

namespace tfd::cli {

struct VarsRow {
  // The variable itself, or for a partitioned one: its logical name, full
  // shape, dtype, initialized when every shard is, and no device.
  VariableDescription variable;
  // A partitioned variable's shards in row order, with their slices.
  std::vector<VariableDescription> shards;
  std::vector<SaveSliceInfo> slices;
};

// The listing's rows, in the order of each (logical) variable's first
// appearance. A shard whose slice does not parse is listed as a variable.
std::vector<VarsRow> GroupVariables(const std::vector<VariableDescription>& vars);

// "emb  float32[100, 16]  initialized  3 shards: /job:ps/... rows [0, 34), ..."
std::string VarsRowText(const VarsRow& row);
// {"name", "dtype", "shape", "initialized", "device"}; for a partitioned
// variable "shards": [{"name", "device", "first_row", "rows",
// "initialized"}, ...] in place of "device".
Json VarsRowJson(const VarsRow& row);

}  // namespace tfd::cli
