// The generator under the random ops: Philox4x32-10 against the Random123
// known answers, counter arithmetic, reservation, and the sample conversions.
#include "kernels/random/philox.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/random/random_source.h"

namespace tfd::kernels::random {
namespace {

using Block = Philox4x32::Block;

TEST_CASE("Philox4x32-10 reproduces the Random123 known-answer vectors") {
  CHECK(Philox4x32::Compute({0, 0, 0, 0}, {0, 0}) ==
        Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(Philox4x32::Compute({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                            {0xffffffff, 0xffffffff}) ==
        Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(Philox4x32::Compute({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                            {0xa4093822, 0x299f31d0}) ==
        Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("a Philox stream is keyed by seed and starts its counter at seed2 << 64") {
  Philox4x32 gen(0x299f31d0a4093822ull, 0x0370734413198a2eull);
  CHECK(gen.Next() ==
        Philox4x32::Compute({0, 0, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}));
  CHECK(gen.Next() ==
        Philox4x32::Compute({1, 0, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}));
}

TEST_CASE("skipping carries from the low into the high half of the counter") {
  Philox4x32 gen(7, 5);
  gen.Skip(0xffffffffffffffffull);  // low half now all ones
  CHECK(gen.Next() == Philox4x32::Compute({0xffffffff, 0xffffffff, 5, 0}, {7, 0}));
  CHECK(gen.Next() == Philox4x32::Compute({0, 0, 6, 0}, {7, 0}));
}

TEST_CASE("RandomBits hands out a block's words in order") {
  const Block b0 = Philox4x32::Compute({0, 0, 0, 0}, {3, 0});
  const Block b1 = Philox4x32::Compute({1, 0, 0, 0}, {3, 0});
  RandomBits bits(Philox4x32(3, 0));
  CHECK(bits.Next32() == b0[0]);
  CHECK(bits.Next64() == (uint64_t{b0[1]} << 32 | b0[2]));
  CHECK(bits.Next32() == b0[3]);
  CHECK(bits.Next32() == b1[0]);
}

TEST_CASE("GuardedPhilox reservations follow one another in whole blocks") {
  GuardedPhilox stream(3, 0);
  RandomBits first = stream.Reserve(5);  // two blocks
  RandomBits second = stream.Reserve(1);
  RandomBits empty = stream.Reserve(0);  // takes nothing
  RandomBits third = stream.Reserve(4);
  CHECK(first.Next32() == Philox4x32::Compute({0, 0, 0, 0}, {3, 0})[0]);
  CHECK(second.Next32() == Philox4x32::Compute({2, 0, 0, 0}, {3, 0})[0]);
  CHECK(empty.Next32() == Philox4x32::Compute({3, 0, 0, 0}, {3, 0})[0]);
  CHECK(third.Next32() == Philox4x32::Compute({3, 0, 0, 0}, {3, 0})[0]);
}

TEST_CASE("unseeded streams differ from one another") {
  GuardedPhilox a(0, 0), b(0, 0);
  RandomBits x = a.Reserve(2), y = b.Reserve(2);
  CHECK(x.Next64() != y.Next64());
}

TEST_CASE("sample conversions stay inside their ranges at the extremes") {
  CHECK(UniformFloat(0) == 0.0f);
  CHECK(UniformFloat(0xffffffffu) < 1.0f);
  CHECK(UniformFloat(0x80000000u) == 0.5f);
  CHECK(UniformDouble(0) == 0.0);
  CHECK(UniformDouble(~uint64_t{0}) < 1.0);
  CHECK(UniformDouble(uint64_t{1} << 63) == 0.5);
  // The smallest radius uniform is 2^-53, not 0: the largest normal is finite.
  const auto [z0, z1] = BoxMuller(0, 0);
  CHECK(z0 == Approx(std::sqrt(2 * 53 * std::log(2.0))));
  CHECK(z1 == 0.0);
  const auto [w0, w1] = BoxMuller(~uint64_t{0}, 0);  // radius uniform exactly 1
  CHECK(w0 == 0.0);
  CHECK(w1 == 0.0);
}

}  // namespace
}  // namespace tfd::kernels::random
