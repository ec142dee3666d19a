// The data family's per-file registration functions, called by
// RegisterDataOps (data_ops.cc). Private to kernels/data.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "common/op_registry.h"
#include "common/status.h"

namespace tfd::kernels::data {

Status RegisterIdxOps(OpRegistry& r);     // idx_ops.cc
Status RegisterCriteoOps(OpRegistry& r);  // criteo_ops.cc

// (index, count) of the shard that `task` (the task running the kernel)
// reads, for a dataset op's shard ("auto" or "none") and num_shards attrs:
// (0, 1) unsharded. INVALID_ARGUMENT when the task's index is not below
// num_shards. Defined in idx_ops.cc.
StatusOr<std::pair<int64_t, int64_t>> ResolveShard(const std::string& shard, int64_t num_shards,
                                                   const std::string& task);

}  // namespace tfd::kernels::data
