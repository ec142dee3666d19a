// Per-epoch permutations and shard selection for the input pipeline.
#include "kernels/data/epoch_order.h"

#include <cstddef>
#include <numeric>
#include <utility>

#include "kernels/random/philox.h"

namespace tfd::kernels::data {
namespace {

// 64-bit words from a Philox stream, one block of four 32-bit words at a time.
class Words {
 public:
  Words(uint64_t key, uint64_t counter_hi) : gen_(key, counter_hi) {}
  uint64_t Next64() {
    if (used_ == 4) {
      block_ = gen_.Next();
      used_ = 0;
    }
    const uint64_t high = block_[used_], low = block_[used_ + 1];
    used_ += 2;
    return high << 32 | low;
  }

 private:
  random::Philox4x32 gen_;
  random::Philox4x32::Block block_{};
  int used_ = 4;
};

// Uniform in [0, bound), bound >= 1: words in the incomplete top stretch of
// the 64-bit range are redrawn, so every result is equally likely.
uint64_t Uniform(Words& words, uint64_t bound) {
  // 2^64 mod bound, computed without 2^64.
  const uint64_t skip = (UINT64_MAX % bound + 1) % bound;
  for (;;) {
    const uint64_t w = words.Next64();
    if (w <= UINT64_MAX - skip) return w % bound;
  }
}

}  // namespace

int64_t ShardSize(const EpochOrderSpec& spec) {
  if (spec.count <= spec.shard_index) return 0;
  return (spec.count - spec.shard_index + spec.num_shards - 1) / spec.num_shards;
}

std::vector<int64_t> EpochOrder(const EpochOrderSpec& spec, int64_t epoch) {
  std::vector<int64_t> perm(static_cast<size_t>(spec.count));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  if (spec.shuffle) {
    Words words(static_cast<uint64_t>(spec.seed), static_cast<uint64_t>(epoch));
    for (int64_t i = spec.count - 1; i > 0; --i) {
      const auto j = static_cast<int64_t>(Uniform(words, static_cast<uint64_t>(i) + 1));
      std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(j)]);
    }
  }
  if (spec.num_shards == 1) return perm;
  std::vector<int64_t> mine;
  mine.reserve(static_cast<size_t>(ShardSize(spec)));
  for (int64_t p = spec.shard_index; p < spec.count; p += spec.num_shards) {
    mine.push_back(perm[static_cast<size_t>(p)]);
  }
  return mine;
}

}  // namespace tfd::kernels::data
