// GuardedPhilox seeding and reservation, and the Box-Muller transform.
#include "kernels/random/random_source.h"

#include <chrono>
#include <cmath>
#include <numbers>
#include <random>

namespace tfd::kernels::random {
namespace {

// Fresh entropy for an unseeded kernel. std::random_device may throw where
// the platform has no entropy source; the clock is a poorer but working
// stand-in, and an unseeded op promises only "different", not "secure".
uint64_t Entropy64() {
  try {
    std::random_device device;
    return uint64_t{device()} << 32 | device();
  } catch (const std::exception&) {
    return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) *
           0x9E3779B97F4A7C15ull;
  }
}

Philox4x32 MakeGenerator(int64_t seed, int64_t seed2) {
  if (seed == 0 && seed2 == 0) return Philox4x32(Entropy64(), Entropy64());
  return Philox4x32(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
}

}  // namespace

GuardedPhilox::GuardedPhilox(int64_t seed, int64_t seed2) : next_(MakeGenerator(seed, seed2)) {}

RandomBits GuardedPhilox::Reserve(uint64_t words) {
  const uint64_t blocks = words / 4 + (words % 4 != 0 ? 1 : 0);
  MutexLock lock(mu_);
  RandomBits bits(next_);
  next_.Skip(blocks);
  return bits;
}

std::pair<double, double> BoxMuller(uint64_t a, uint64_t b) {
  const double u1 = static_cast<double>((a >> 11) + 1) * 0x1p-53;  // (0, 1]
  const double theta = 2 * std::numbers::pi * UniformDouble(b);
  const double r = std::sqrt(-2 * std::log(u1));
  return {r * std::cos(theta), r * std::sin(theta)};
}

}  // namespace tfd::kernels::random
