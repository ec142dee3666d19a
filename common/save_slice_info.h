// SaveSliceInfo: which rows of a logical (partitioned) variable one shard
// holds, as TensorFlow's Variable._save_slice_info. The graph API writes it
// on each shard's VariableV2 node as the string attr `_save_slice_info`
// (api/partitioned_variables.h); the variable keeps it, and checkpoints save
// it beside the shard's value so a restore can reassemble the logical
// tensor into another sharding (daemon/checkpoint/sliced_restore.h).
//
// Text form, one line: FULL_NAME;D0,D1,...;FIRST_ROW,ROWS
//   "emb;100,16;34,33"  rows [34, 67) of the float[100, 16] variable "emb".
// Shards split axis 0 only, so the other dimensions of a shard are the
// full shape's.
//
//   TFD_ASSIGN_OR_RETURN(SaveSliceInfo s, SaveSliceInfo::Parse(attr));
//   TensorShape shard = s.ShardShape();   // [33, 16]
//
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <string>

#include "common/shape.h"
#include "common/status.h"

namespace tfd {

struct SaveSliceInfo {
  std::string full_name;   // the logical variable's name ("emb")
  TensorShape full_shape;  // rank >= 1
  int64_t first_row = 0;   // along axis 0
  int64_t rows = 0;

  int64_t end_row() const { return first_row + rows; }
  // The shard's own shape: `rows` rows of the full shape.
  TensorShape ShardShape() const;
  std::string ToString() const;
  // INVALID_ARGUMENT saying what is wrong with `text` (a missing part, a
  // rank-0 shape, rows outside the full shape).
  static StatusOr<SaveSliceInfo> Parse(const std::string& text);

  bool operator==(const SaveSliceInfo& o) const = default;
};

// The name of the VariableV2 attr holding a shard's SaveSliceInfo text ("",
// its default, for an unpartitioned variable).
inline constexpr const char* kSaveSliceInfoAttr = "_save_slice_info";

}  // namespace tfd
