#include "kernels/data/idx_dataset_op.h"

#include <string>

namespace tfd::kernels::data {

IdxDatasetKernel::IdxDatasetKernel(OpKernelConstruction& c, ReadFiles read_files)
    : OpKernel(c) {
  c.SetStatus(read_files(c, spec_));
  c.SetStatus(c.GetAttr("shuffle", &spec_.shuffle));
  c.SetStatus(c.GetAttr("seed", &spec_.seed));
  int64_t seed2 = 0;
  c.SetStatus(c.GetAttr("seed2", &seed2));
  // One 64-bit key for the order: (seed, 0) keeps the order graphs without
  // seed2 always had; TF1's seeds are both under 2^31, so seed * 2^32 + seed2
  // tells every other pair apart.
  if (seed2 != 0) {
    spec_.seed = static_cast<int64_t>((static_cast<uint64_t>(spec_.seed) << 32) +
                                      static_cast<uint64_t>(seed2));
  }
  c.SetStatus(c.GetAttr("epochs", &spec_.epochs));
  if (!c.status().ok()) return;
  ReadDatasetPlacement(c, spec_.epochs, &where_);
  spec_.shard_index = where_.shard_index;
  spec_.num_shards = where_.num_shards;
}

void IdxDatasetKernel::Compute(OpKernelContext& ctx) {
  const std::string& name = where_.shared_name.empty() ? ctx.node().name : where_.shared_name;
  auto ds = FindOrCreateDataset<IdxDataset>(ctx.resources(), where_.container, name, spec_);
  TFD_OP_REQUIRES_OK(ctx, ds.status());
  TFD_OP_REQUIRES_OK(ctx, (*ds)->CheckSameSpec(spec_));
  TFD_OP_REQUIRES_OK(ctx, (*ds)->EnsureLoaded(ctx.env()));
  ctx.set_output_ref(0, *ds);
}

}  // namespace tfd::kernels::data
