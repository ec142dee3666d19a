// Epoch orders: permutations, reproducible from (seed, epoch), and shards
// that partition every epoch.
#include "kernels/data/epoch_order.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <set>

#include <catch2/catch.hpp>

namespace tfd::testing {
namespace {

using kernels::data::EpochOrder;
using kernels::data::EpochOrderSpec;
using kernels::data::ShardSize;

std::vector<int64_t> Sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

TEST_CASE("Without shuffle an epoch is the files' order") {
  CHECK(EpochOrder({.count = 5, .shuffle = false}, 0) == Iota(5));
  CHECK(EpochOrder({.count = 5, .shuffle = false}, 7) == Iota(5));
  CHECK(EpochOrder({.count = 0, .shuffle = true}, 0).empty());
  CHECK(EpochOrder({.count = 1, .shuffle = true}, 3) == Iota(1));
}

TEST_CASE("A shuffled epoch is a permutation fixed by seed and epoch") {
  const EpochOrderSpec spec{.count = 100, .shuffle = true, .seed = 42};
  const auto a = EpochOrder(spec, 0);
  CHECK(Sorted(a) == Iota(100));
  CHECK(a != Iota(100));
  CHECK(EpochOrder(spec, 0) == a);                     // reproducible
  CHECK(EpochOrder(spec, 1) != a);                     // a new order each epoch
  CHECK(Sorted(EpochOrder(spec, 1)) == Iota(100));
  EpochOrderSpec other = spec;
  other.seed = 43;
  CHECK(EpochOrder(other, 0) != a);                    // the seed matters
  other.seed = 0;                                      // 0 is a seed like any other
  CHECK(EpochOrder(other, 0) == EpochOrder(other, 0));
  CHECK(EpochOrder(other, 0) != Iota(100));
}

TEST_CASE("Every example is equally likely in every place") {
  // 4 examples, 24000 (seed, epoch) pairs: each (place, example) cell
  // expects 6000 (standard deviation 67). The generator is deterministic,
  // so this cannot flake; a biased shuffle (an off-by-one Fisher-Yates, a
  // draw over the whole range at every step) moves cells by far more than
  // the 300 allowed.
  int counts[4][4] = {};
  for (int64_t seed = 1; seed <= 2400; ++seed) {
    for (int64_t epoch = 0; epoch < 10; ++epoch) {
      const auto order = EpochOrder({.count = 4, .shuffle = true, .seed = seed}, epoch);
      for (int place = 0; place < 4; ++place) ++counts[place][order[place]];
    }
  }
  for (auto& row : counts) {
    for (int c : row) CHECK(std::abs(c - 6000) < 300);
  }
}

TEST_CASE("Shards partition each epoch") {
  for (const bool shuffle : {false, true}) {
    for (const int64_t n : {0, 1, 7, 10, 11}) {
      for (const int64_t shards : {1, 2, 3, 4}) {
        INFO("shuffle " << shuffle << ", " << n << " examples, " << shards << " shards");
        std::vector<int64_t> all;
        for (int64_t k = 0; k < shards; ++k) {
          const EpochOrderSpec spec{.count = n, .shuffle = shuffle, .seed = 9,
                                    .shard_index = k, .num_shards = shards};
          const auto mine = EpochOrder(spec, 2);
          CHECK(static_cast<int64_t>(mine.size()) == ShardSize(spec));
          // Shard sizes differ by at most one, the lower indices taking the extra.
          CHECK(ShardSize(spec) == n / shards + (k < n % shards ? 1 : 0));
          all.insert(all.end(), mine.begin(), mine.end());
        }
        CHECK(Sorted(all) == Iota(n));
      }
    }
  }
  // Unshuffled, shard k takes examples k, k + N, ...
  CHECK(EpochOrder({.count = 7, .shuffle = false, .shard_index = 1, .num_shards = 3}, 0) ==
        std::vector<int64_t>{1, 4});
}

}  // namespace
}  // namespace tfd::testing
