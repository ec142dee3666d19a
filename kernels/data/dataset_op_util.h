// The plumbing every dataset op of kernels/data shares (IdxDataset,
// CriteoDataset, CifarDataset): the epochs/shard/num_shards attrs and their
// checks, the shard a task reads, and finding or creating the dataset
// resource so that a checkpoint's position restored before it existed is
// taken up when it is made.
//
//   DatasetPlacement where;
//   ReadDatasetPlacement(c, spec.epochs, &where);       // in a kernel's constructor
//   spec.shard_index = where.shard_index; ...
//   auto ds = FindOrCreateDataset<IdxDataset>(ctx.resources(), where.container, name, spec);
//
// A dataset type D needs a constructor D(name, spec) and
// Status SetPosition(const InputPosition&).
// Thread-safety: free functions; the resource manager does the locking.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "common/op_kernel.h"
#include "common/resource_mgr.h"
#include "common/status.h"
#include "kernels/data/input_position.h"

namespace tfd::kernels::data {

// INVALID_ARGUMENT naming the attr unless epochs is positive or -1, shard is
// "auto" or "none", num_shards >= 0, and shard = "none" comes without a
// num_shards. What a shape function can check without knowing the task.
Status CheckDatasetShardAttrs(int64_t epochs, const std::string& shard, int64_t num_shards);

// (index, count) of the shard that `task` (the task running the kernel)
// reads, for a dataset op's shard ("auto" or "none") and num_shards attrs:
// (0, 1) unsharded. INVALID_ARGUMENT when the task's index is not below
// num_shards.
StatusOr<std::pair<int64_t, int64_t>> ResolveShard(const std::string& shard, int64_t num_shards,
                                                   const std::string& task);

// Where a dataset op's resource lives and which shard it reads.
struct DatasetPlacement {
  std::string container;
  std::string shared_name;  // empty: the node's name
  int64_t shard_index = 0;
  int64_t num_shards = 1;
};

// Reads container, shared_name, shard and num_shards from a dataset op's
// attrs, checks them with `epochs` (CheckDatasetShardAttrs) and resolves the
// shard for the task building the kernel; a problem goes to c.SetStatus.
void ReadDatasetPlacement(OpKernelConstruction& c, int64_t epochs, DatasetPlacement* out);

// The dataset `name` of `container`, made from `spec` on the first run on
// this task. Only then is a position that a checkpoint restored before it
// existed looked for and taken up, so later steps cost one lookup.
template <typename D, typename Spec>
StatusOr<std::shared_ptr<D>> FindOrCreateDataset(ResourceMgr& resources,
                                                 const std::string& container,
                                                 const std::string& name, const Spec& spec) {
  auto found = resources.Lookup<D>(container, name);
  if (found.ok() || found.status().code() != Code::kNotFound) return found;
  auto pending = resources.Lookup<PendingInputPosition>(container, PendingPositionName(name));
  bool adopted = false;
  auto ds = resources.LookupOrCreate<D>(container, name, [&]() -> StatusOr<std::shared_ptr<D>> {
    auto made = std::make_shared<D>(name, spec);
    if (pending.ok()) {
      TFD_RETURN_IF_ERROR(made->SetPosition((*pending)->position()));
      adopted = true;
    }
    return made;
  });
  if (adopted) (void)resources.Delete(container, PendingPositionName(name));
  return ds;
}

}  // namespace tfd::kernels::data
