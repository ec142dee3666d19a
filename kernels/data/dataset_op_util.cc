// The dataset ops' shared attr checks and shard resolution.
#include "kernels/data/dataset_op_util.h"

#include <tuple>

#include "common/device_name.h"

namespace tfd::kernels::data {

Status CheckDatasetShardAttrs(int64_t epochs, const std::string& shard, int64_t num_shards) {
  if (epochs == 0 || epochs < -1) {
    return errors::InvalidArgument("epochs must be positive, or -1 for forever, but is ", epochs);
  }
  if (shard != "auto" && shard != "none") {
    return errors::InvalidArgument("shard must be \"auto\" or \"none\", not \"", shard, "\"");
  }
  if (num_shards < 0) {
    return errors::InvalidArgument("num_shards must be >= 0 (0: no sharding), not ", num_shards);
  }
  if (shard == "none" && num_shards > 0) {
    return errors::InvalidArgument("shard = \"none\" contradicts num_shards = ", num_shards,
                                   "; use shard = \"auto\" to shard by task");
  }
  return OkStatus();
}

StatusOr<std::pair<int64_t, int64_t>> ResolveShard(const std::string& shard, int64_t num_shards,
                                                   const std::string& task) {
  if (shard == "none" || num_shards == 0) return std::pair<int64_t, int64_t>{0, 1};
  TFD_ASSIGN_OR_RETURN(DeviceName d, DeviceName::Parse(task));
  const int64_t index = d.task.value_or(0);
  if (index >= num_shards) {
    return errors::InvalidArgument("task '", task, "' would read shard ", index,
                                   " but num_shards is ", num_shards,
                                   ": it must exceed every reading task's index");
  }
  return std::pair<int64_t, int64_t>{index, num_shards};
}

void ReadDatasetPlacement(OpKernelConstruction& c, int64_t epochs, DatasetPlacement* out) {
  std::string shard;
  int64_t num_shards = 0;
  c.SetStatus(c.GetAttr("shard", &shard));
  c.SetStatus(c.GetAttr("num_shards", &num_shards));
  c.SetStatus(c.GetAttr("container", &out->container));
  c.SetStatus(c.GetAttr("shared_name", &out->shared_name));
  if (!c.status().ok()) return;
  c.SetStatus(CheckDatasetShardAttrs(epochs, shard, num_shards));
  if (!c.status().ok()) return;
  // The kernel is built on the task that runs it, so the shard is fixed here.
  auto resolved = ResolveShard(shard, num_shards, c.env().task);
  if (!resolved.ok()) {
    c.SetStatus(resolved.status());
    return;
  }
  std::tie(out->shard_index, out->num_shards) = *resolved;
}

}  // namespace tfd::kernels::data
