// Philox4x32-10, the counter-based generator of Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3" (SC'11), also used by TensorFlow.
//
// A block of four 32-bit words is a fixed bijection of a 128-bit counter
// under a 64-bit key, so a stream can jump ahead by any number of blocks in
// constant time: that is what lets a kernel reserve the part of its stream
// a step will use and generate it outside the lock. Pure integer arithmetic,
// so every platform produces the same words.
//
//   Philox4x32 gen(/*key=*/seed, /*counter_hi=*/seed2);
//   Philox4x32::Block b = gen.Next();   // four words; the counter moves on
//   gen.Skip(1000);                      // the 1000 blocks after are skipped
//
// Thread-safety: a value; share copies, not one object.
#pragma once

#include <array>
#include <cstdint>

namespace tfd::kernels::random {

class Philox4x32 {
 public:
  using Block = std::array<uint32_t, 4>;
  using Key = std::array<uint32_t, 2>;

  // The stream of `key` whose 128-bit counter starts at counter_hi << 64.
  Philox4x32(uint64_t key, uint64_t counter_hi)
      : key_{Lo(key), Hi(key)}, counter_{0, 0, Lo(counter_hi), Hi(counter_hi)} {}

  // The block at the current counter; the counter then advances by one.
  Block Next() {
    Block out = Compute(counter_, key_);
    Skip(1);
    return out;
  }

  // Advances the counter by `blocks` (a 128-bit add).
  void Skip(uint64_t blocks) {
    const uint64_t low = (uint64_t{counter_[1]} << 32 | counter_[0]);
    const uint64_t sum = low + blocks;
    counter_[0] = Lo(sum);
    counter_[1] = Hi(sum);
    if (sum < low) {  // carry into the high half
      const uint64_t high = (uint64_t{counter_[3]} << 32 | counter_[2]) + 1;
      counter_[2] = Lo(high);
      counter_[3] = Hi(high);
    }
  }

  // The bijection itself: ten rounds of counter under key.
  static Block Compute(Block ctr, Key key) {
    constexpr uint32_t kMul0 = 0xD2511F53, kMul1 = 0xCD9E8D57;
    constexpr uint32_t kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        key[0] += kWeyl0;
        key[1] += kWeyl1;
      }
      const uint64_t p0 = uint64_t{kMul0} * ctr[0];
      const uint64_t p1 = uint64_t{kMul1} * ctr[2];
      ctr = {Hi(p1) ^ ctr[1] ^ key[0], Lo(p1), Hi(p0) ^ ctr[3] ^ key[1], Lo(p0)};
    }
    return ctr;
  }

 private:
  static constexpr uint32_t Lo(uint64_t v) { return static_cast<uint32_t>(v); }
  static constexpr uint32_t Hi(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

  Key key_;
  Block counter_;
};

}  // namespace tfd::kernels::random
