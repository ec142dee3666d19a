// What the random kernels draw from: a kernel's seeded Philox stream
// (GuardedPhilox), a word-at-a-time reader of a reserved stretch of it
// (RandomBits), and the conversions from words to samples.
//
//   GuardedPhilox stream(seed, seed2);              // once, in the kernel
//   RandomBits bits = stream.Reserve(2 * n);        // per Compute
//   double u = UniformDouble(bits.Next64());        // [0, 1)
//
// Every conversion is integer arithmetic or IEEE-exact scaling except the
// Box-Muller transform, which calls log, sqrt, sin and cos.
#pragma once

#include <cstdint>
#include <utility>

#include "common/mutex.h"
#include "kernels/random/philox.h"

namespace tfd::kernels::random {

// Reads words one at a time from a Philox stream. A value, used by one
// thread; reading past what was reserved carries on into the stream.
class RandomBits {
 public:
  explicit RandomBits(const Philox4x32& gen) : gen_(gen) {}

  uint32_t Next32() {
    if (used_ == 4) {
      block_ = gen_.Next();
      used_ = 0;
    }
    return block_[used_++];
  }
  uint64_t Next64() {
    const uint64_t high = Next32();
    return high << 32 | Next32();
  }

 private:
  Philox4x32 gen_;
  Philox4x32::Block block_{};
  int used_ = 4;
};

// A kernel's random stream, keyed by its seed attrs as in TensorFlow: seed
// is the Philox key and seed2 the high half of the counter; seed == seed2 ==
// 0 means "different every time" and draws both from std::random_device.
// Each Compute reserves the words it will use, so successive runs continue
// the sequence and concurrent runs never share words.
//
// Thread-safety: Reserve may be called from any thread.
class GuardedPhilox {
 public:
  GuardedPhilox(int64_t seed, int64_t seed2);
  GuardedPhilox(const GuardedPhilox&) = delete;
  GuardedPhilox& operator=(const GuardedPhilox&) = delete;

  // The next `words` 32-bit words of the stream (rounded up to whole
  // blocks); the stream moves past them.
  RandomBits Reserve(uint64_t words);

 private:
  Mutex mu_;
  Philox4x32 next_ GUARDED_BY(mu_);  // where the next reservation starts
};

// [0, 1) from the top 24 bits: every value is an exact float.
inline float UniformFloat(uint32_t bits) { return static_cast<float>(bits >> 8) * 0x1p-24f; }

// [0, 1) from the top 53 bits: every value is an exact double.
inline double UniformDouble(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1p-53; }

// Two independent standard normals from two words (Box-Muller). The radius
// uses a uniform in (0, 1], so log never sees 0 and the result is finite.
std::pair<double, double> BoxMuller(uint64_t a, uint64_t b);

}  // namespace tfd::kernels::random
