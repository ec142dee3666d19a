// The order in which one shard of a dataset visits its examples in one
// epoch. A pure function of its arguments, so every task that shares a seed
// draws the same permutation of the whole dataset, and shards — every
// num_shards-th place of it, starting at the shard's index — never overlap
// within an epoch and together cover it.
//
//   std::vector<int64_t> order = EpochOrder({.count = 60000, .shuffle = true,
//                                            .seed = 7, .shard_index = 1,
//                                            .num_shards = 2}, /*epoch=*/3);
//
// The permutation is a Fisher-Yates shuffle driven by Philox4x32-10 (see
// kernels/random/philox.h) keyed by the seed, its counter's high half set to
// the epoch, with exactly uniform draws (rejection, no modulo bias).
// Thread-safety: free functions on values.
#pragma once

#include <cstdint>
#include <vector>

namespace tfd::kernels::data {

struct EpochOrderSpec {
  int64_t count = 0;     // examples in the whole dataset
  bool shuffle = true;   // false: the files' order
  int64_t seed = 0;      // any value; 0 is an ordinary seed
  int64_t shard_index = 0;
  int64_t num_shards = 1;  // >= 1, shard_index < num_shards
};

// How many examples the shard visits per epoch.
int64_t ShardSize(const EpochOrderSpec& spec);

// The example indices the shard visits in `epoch` (>= 0), in order.
std::vector<int64_t> EpochOrder(const EpochOrderSpec& spec, int64_t epoch);

}  // namespace tfd::kernels::data
