// InputPosition: where a dataset's cursor stands, in the form a checkpoint
// keeps it, so that a task restarted from a checkpoint reads on from where
// its input was when the model was saved — neither from epoch 0 again nor
// past examples the restored model never saw.
//
// A position means something only for the same examples in the same order,
// so it carries what fixes the order (example count, shard, seed, shuffle)
// and a dataset refuses a position taken under another order.
//
//   Tensor saved = position.ToTensor();                  // int64[7]
//   TFD_ASSIGN_OR_RETURN(InputPosition p, InputPosition::FromTensor(saved, key));
//
// In a checkpoint a dataset's position is saved under
// InputPositionKey(variable-style key), which no variable's key can equal
// (docs/checkpoint_format.md). A position restored before its dataset exists
// waits in the ResourceMgr as a PendingInputPosition until the dataset's
// IdxDataset op creates it and adopts the position.
//
// Thread-safety: InputPosition is a value; PendingInputPosition is immutable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/resource_mgr.h"
#include "common/status.h"
#include "common/tensor.h"
#include "kernels/framework/resource.h"

namespace tfd::kernels::data {

struct InputPosition {
  int64_t epoch = 0;     // the epoch the next example comes from
  int64_t position = 0;  // examples of that epoch already read
  // What the position is relative to.
  int64_t count = 0;  // examples in the dataset's files
  int64_t shard_index = 0;
  int64_t num_shards = 1;
  int64_t seed = 0;
  bool shuffle = true;

  bool operator==(const InputPosition&) const = default;
  // "epoch 3, 1200 examples in (60000 examples, shard 0 of 2, seed 7)".
  std::string ToString() const;
  // int64[7]: epoch, position, count, shard_index, num_shards, seed, shuffle.
  Tensor ToTensor() const;
  // INVALID_ARGUMENT naming `key` unless `t` is what ToTensor makes, with
  // non-negative fields and the shard inside num_shards.
  static StatusOr<InputPosition> FromTensor(const Tensor& t, const std::string& key);
};

// Checkpoint keys of dataset positions start with this; CheckpointKey
// refuses variables whose key would.
inline constexpr std::string_view kInputPositionKeyPrefix = "@input/";

// "@input/KEY" for a dataset saved as KEY; nullopt for a key that is not a
// dataset position's.
std::string InputPositionKey(const std::string& dataset_key);
std::optional<std::string> DatasetKeyOfPosition(const std::string& checkpoint_key);

// A restored position whose dataset this task has not created yet. Held
// under the dataset's container and PendingPositionName(name); saved again
// under the dataset's key meanwhile.
class PendingInputPosition : public PendingRestore {
 public:
  PendingInputPosition(std::string dataset_name, InputPosition position, std::string file)
      : PendingRestore(std::string(kInputPositionKeyPrefix), std::move(dataset_name),
                       position.ToTensor(), std::move(file)),
        position_(position) {}
  std::string_view Kind() const override { return "restored input position"; }
  std::string DebugString() const override { return position_.ToString(); }
  const InputPosition& position() const { return position_; }

 private:
  const InputPosition position_;
};

// What a restore holds for dataset `dataset_name`'s saved position `saved`
// (checkpoint key `key` of `file`) until the dataset exists: INVALID_ARGUMENT naming
// `key` unless it is a possible position (InputPosition::FromTensor).
StatusOr<std::shared_ptr<PendingInputPosition>> MakePendingInputPosition(
    const std::string& dataset_name, const Tensor& saved, const std::string& key,
    const std::string& file);

// The ResourceMgr name a dataset's pending position waits under.
std::string PendingPositionName(const std::string& dataset_name);

}  // namespace tfd::kernels::data
