// InputPosition: to and from the int64[7] a checkpoint holds.
#include "kernels/data/input_position.h"

#include <vector>

namespace tfd::kernels::data {
namespace {

constexpr int64_t kFields = 7;

}  // namespace

std::string InputPosition::ToString() const {
  return "epoch " + std::to_string(epoch) + ", " + std::to_string(position) + " examples in (" +
         std::to_string(count) + " examples, shard " + std::to_string(shard_index) + " of " +
         std::to_string(num_shards) + ", " +
         (shuffle ? "seed " + std::to_string(seed) : std::string("in file order")) + ")";
}

Tensor InputPosition::ToTensor() const {
  return Tensor::FromVector<int64_t>(
      {epoch, position, count, shard_index, num_shards, seed, shuffle ? 1 : 0});
}

StatusOr<InputPosition> InputPosition::FromTensor(const Tensor& t, const std::string& key) {
  if (t.dtype() != DType::kInt64 || t.shape() != TensorShape({kFields})) {
    return errors::InvalidArgument("input position '", key, "' must be int64[", kFields,
                                   "], not ", t.Describe());
  }
  const int64_t* v = t.data<int64_t>();
  InputPosition p{.epoch = v[0], .position = v[1], .count = v[2], .shard_index = v[3],
                  .num_shards = v[4], .seed = v[5], .shuffle = v[6] != 0};
  if (p.epoch < 0 || p.position < 0 || p.count < 0 || p.num_shards < 1 || p.shard_index < 0 ||
      p.shard_index >= p.num_shards || (v[6] != 0 && v[6] != 1)) {
    return errors::InvalidArgument("input position '", key, "' holds impossible values [",
                                   v[0], ", ", v[1], ", ", v[2], ", ", v[3], ", ", v[4], ", ",
                                   v[5], ", ", v[6], "]");
  }
  return p;
}

std::string InputPositionKey(const std::string& dataset_key) {
  return std::string(kInputPositionKeyPrefix) + dataset_key;
}

std::optional<std::string> DatasetKeyOfPosition(const std::string& checkpoint_key) {
  if (checkpoint_key.rfind(kInputPositionKeyPrefix, 0) != 0) return std::nullopt;
  return checkpoint_key.substr(kInputPositionKeyPrefix.size());
}

StatusOr<std::shared_ptr<PendingInputPosition>> MakePendingInputPosition(
    const std::string& dataset_name, const Tensor& saved, const std::string& key,
    const std::string& file) {
  TFD_ASSIGN_OR_RETURN(InputPosition position, InputPosition::FromTensor(saved, key));
  return std::make_shared<PendingInputPosition>(dataset_name, position, file);
}

std::string PendingPositionName(const std::string& dataset_name) {
  // The same spelling as the checkpoint key, so a save finds the dataset's
  // name with DatasetKeyOfPosition.
  return InputPositionKey(dataset_name);
}

}  // namespace tfd::kernels::data
