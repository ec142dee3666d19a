#include "api/data.h"

#include "api/random_seed.h"

namespace tfd::ops {

Output IdxDataset(const Scope& scope, const IdxDatasetOptions& o) {
  // TF1's get_seed; (0, 0), neither seed set, is the fixed order of seed 0.
  const OpSeeds seeds = GetSeed(scope, o.seed);
  const std::vector<Output> out =
      scope.AddOp("IdxDataset", {},
                  {{"images_path", o.images_path},
                   {"labels_path", o.labels_path},
                   {"shuffle", o.shuffle},
                   {"seed", seeds.seed},
                   {"seed2", seeds.seed2},
                   {"epochs", o.epochs},
                   {"num_shards", o.num_shards},
                   {"shared_name", o.shared_name}});
  return out.empty() ? Output() : out[0];
}

IdxBatch IdxNextBatch(const Scope& scope, const Output& dataset, const IdxBatchOptions& o) {
  const std::vector<Output> out =
      scope.AddOp("IdxNextBatch", {dataset},
                  {{"batch_size", o.batch_size},
                   {"one_hot", o.one_hot},
                   {"num_classes", o.num_classes},
                   {"drop_remainder", o.drop_remainder},
                   {"prefetch", o.prefetch},
                   {"Tlabels", o.one_hot ? DType::kFloat32 : DType::kInt32}});
  if (out.size() != 2) return {};
  return {out[0], out[1]};
}

Output IdxDatasetEpoch(const Scope& scope, const Output& dataset) {
  const std::vector<Output> out = scope.AddOp("IdxDatasetEpoch", {dataset});
  return out.empty() ? Output() : out[0];
}

Output IdxDatasetProgress(const Scope& scope, const Output& dataset) {
  const std::vector<Output> out = scope.AddOp("IdxDatasetProgress", {dataset});
  return out.empty() ? Output() : out[0];
}

Operation IdxDatasetReset(const Scope& scope, const Output& dataset) {
  return scope.AddOperation("IdxDatasetReset", {dataset});
}

Output CriteoDataset(const Scope& scope, const CriteoDatasetOptions& o) {
  const std::vector<Output> out = scope.AddOp("CriteoDataset", {},
                                              {{"paths", o.paths},
                                               {"num_buckets", o.num_buckets},
                                               {"epochs", o.epochs},
                                               {"num_shards", o.num_shards},
                                               {"shared_name", o.shared_name}});
  return out.empty() ? Output() : out[0];
}

CriteoBatch CriteoNextBatch(const Scope& scope, const Output& dataset,
                            const CriteoBatchOptions& o) {
  const std::vector<Output> out =
      scope.AddOp("CriteoNextBatch", {dataset},
                  {{"batch_size", o.batch_size},
                   {"drop_remainder", o.drop_remainder},
                   {"prefetch", o.prefetch}});
  if (out.size() != 3) return {};
  return {out[0], out[1], out[2]};
}

Output CriteoDatasetEpoch(const Scope& scope, const Output& dataset) {
  const std::vector<Output> out = scope.AddOp("CriteoDatasetEpoch", {dataset});
  return out.empty() ? Output() : out[0];
}

Operation CriteoDatasetReset(const Scope& scope, const Output& dataset) {
  return scope.AddOperation("CriteoDatasetReset", {dataset});
}

Output CifarDataset(const Scope& scope, const CifarDatasetOptions& o) {
  // TF1's get_seed; (0, 0), neither seed set, is the fixed order of seed 0.
  const OpSeeds seeds = GetSeed(scope, o.seed);
  const std::vector<Output> out = scope.AddOp("CifarDataset", {},
                                              {{"paths", o.paths},
                                               {"label_bytes", o.label_bytes},
                                               {"shuffle", o.shuffle},
                                               {"seed", seeds.seed},
                                               {"seed2", seeds.seed2},
                                               {"epochs", o.epochs},
                                               {"num_shards", o.num_shards},
                                               {"shared_name", o.shared_name}});
  return out.empty() ? Output() : out[0];
}

CifarBatch CifarNextBatch(const Scope& scope, const Output& dataset, const CifarBatchOptions& o) {
  const std::vector<Output> out = scope.AddOp("CifarNextBatch", {dataset},
                                              {{"batch_size", o.batch_size},
                                               {"standardize", o.standardize},
                                               {"drop_remainder", o.drop_remainder},
                                               {"prefetch", o.prefetch}});
  if (out.size() != 2) return {};
  return {out[0], out[1]};
}

}  // namespace tfd::ops
