#include "api/random_seed.h"

namespace tfd::ops {
namespace {

// seed mod kMaxSeed in [0, kMaxSeed), as Python's % gives it for negative
// seeds too.
int64_t TruncateSeed(int64_t seed) {
  const int64_t r = seed % kMaxSeed;
  return r < 0 ? r + kMaxSeed : r;
}

}  // namespace

OpSeeds GetSeed(const Scope& scope, std::optional<int64_t> op_seed) {
  const std::optional<int64_t> graph_seed = scope.random_seed();
  OpSeeds seeds;
  if (graph_seed) {
    seeds = {TruncateSeed(*graph_seed), TruncateSeed(op_seed.value_or(scope.num_nodes()))};
  } else if (op_seed) {
    seeds = {kDefaultGraphSeed, TruncateSeed(*op_seed)};
  } else {
    return seeds;  // (0, 0): nondeterministic, as asked
  }
  // A seeded op must not land on (0, 0), which the kernels read as unseeded.
  if (!seeds.deterministic()) seeds.seed2 = kMaxSeed;
  return seeds;
}

}  // namespace tfd::ops
