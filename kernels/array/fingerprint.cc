// FarmHash Fingerprint64 (Geoff Pike's farmhashna::Hash64, MIT licensed),
// written out again for tfd: three short-input cases (up to 16, 32 and 64
// bytes) and, past 64 bytes, a loop over 64-byte blocks that ends on the last
// 64 bytes of the input. The arithmetic is modulo 2^64 throughout; loads are
// little-endian whatever the host.
#include "kernels/array/fingerprint.h"

#include <cstring>
#include <utility>

namespace tfd::kernels::array {
namespace {

// Primes between 2^63 and 2^64.
constexpr uint64_t kK0 = 0xc3a5c85c97cb3127ULL;
constexpr uint64_t kK1 = 0xb492b66fbe98f273ULL;
constexpr uint64_t kK2 = 0x9ae16a3b2f90404fULL;

uint64_t Load64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint64_t Load32(const char* p) {
  uint64_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint64_t RotateRight(uint64_t v, int shift) { return shift == 0 ? v : (v >> shift) | (v << (64 - shift)); }

uint64_t ShiftMix(uint64_t v) { return v ^ (v >> 47); }

// Murmur-style mix of two words.
uint64_t Mix16(uint64_t u, uint64_t v, uint64_t mul) {
  uint64_t a = ShiftMix((u ^ v) * mul);
  uint64_t b = ShiftMix((v ^ a) * mul);
  return b * mul;
}

uint64_t UpTo16(const char* s, size_t len) {
  if (len >= 8) {
    const uint64_t mul = kK2 + len * 2;
    const uint64_t a = Load64(s) + kK2;
    const uint64_t b = Load64(s + len - 8);
    return Mix16(RotateRight(b, 37) * mul + a, (RotateRight(a, 25) + b) * mul, mul);
  }
  if (len >= 4) {
    const uint64_t mul = kK2 + len * 2;
    return Mix16(len + (Load32(s) << 3), Load32(s + len - 4), mul);
  }
  if (len == 0) return kK2;
  const uint32_t first = static_cast<uint8_t>(s[0]);
  const uint32_t middle = static_cast<uint8_t>(s[len >> 1]);
  const uint32_t last = static_cast<uint8_t>(s[len - 1]);
  const uint32_t y = first + (middle << 8);
  const uint32_t z = static_cast<uint32_t>(len) + (last << 2);
  return ShiftMix(y * kK2 ^ z * kK0) * kK2;
}

uint64_t UpTo32(const char* s, size_t len) {
  const uint64_t mul = kK2 + len * 2;
  const uint64_t a = Load64(s) * kK1;
  const uint64_t b = Load64(s + 8);
  const uint64_t c = Load64(s + len - 8) * mul;
  const uint64_t d = Load64(s + len - 16) * kK2;
  return Mix16(RotateRight(a + b, 43) + RotateRight(c, 30) + d,
               a + RotateRight(b + kK2, 18) + c, mul);
}

uint64_t UpTo64(const char* s, size_t len) {
  const uint64_t mul = kK2 + len * 2;
  const uint64_t a = Load64(s) * kK2;
  const uint64_t b = Load64(s + 8);
  const uint64_t c = Load64(s + len - 8) * mul;
  const uint64_t d = Load64(s + len - 16) * kK2;
  const uint64_t y = RotateRight(a + b, 43) + RotateRight(c, 30) + d;
  const uint64_t z = Mix16(y, a + RotateRight(b + kK2, 18) + c, mul);
  const uint64_t e = Load64(s + 16) * mul;
  const uint64_t f = Load64(s + 24);
  const uint64_t g = (y + Load64(s + len - 32)) * mul;
  const uint64_t h = (z + Load64(s + len - 24)) * mul;
  return Mix16(RotateRight(e + f, 43) + RotateRight(g, 30) + h,
               e + RotateRight(f + a, 18) + g, mul);
}

using Words = std::pair<uint64_t, uint64_t>;

// Two words from the 32 bytes at s and two seeds.
Words Mix32(const char* s, uint64_t a, uint64_t b) {
  const uint64_t w = Load64(s), x = Load64(s + 8), y = Load64(s + 16), z = Load64(s + 24);
  a += w;
  b = RotateRight(b + a + z, 21);
  const uint64_t c = a;
  a += x + y;
  b += RotateRight(a, 44);
  return {a + z, b + c};
}

// The state carried from one 64-byte block to the next.
struct State {
  uint64_t x, y, z;
  Words v{0, 0}, w{0, 0};

  // One block; `mul` and `nine` differ for the final block.
  void Block(const char* s, uint64_t mul, uint64_t nine) {
    x = RotateRight(x + y + v.first + Load64(s + 8), 37) * mul;
    y = RotateRight(y + v.second + Load64(s + 48), 42) * mul;
    x ^= w.second * nine;
    y += v.first * nine + Load64(s + 40);
    z = RotateRight(z + w.first, 33) * mul;
    v = Mix32(s, v.second * mul, x + w.first);
    w = Mix32(s + 32, z + w.second, y + Load64(s + 16));
    std::swap(z, x);
  }
};

uint64_t Longer(const char* s, size_t len) {
  constexpr uint64_t kSeed = 81;
  State st;
  st.y = kSeed * kK1 + 113;
  st.z = ShiftMix(st.y * kK2 + 113) * kK2;
  st.x = kSeed * kK2 + Load64(s);
  // Every whole block but the one holding the last byte; then the last 64
  // bytes (which may overlap the blocks already taken).
  const char* end = s + ((len - 1) / 64) * 64;
  for (const char* p = s; p != end; p += 64) st.Block(p, kK1, 1);
  const uint64_t mul = kK1 + ((st.z & 0xff) << 1);
  st.w.first += (len - 1) & 63;
  st.v.first += st.w.first;
  st.w.first += st.v.first;
  st.Block(s + len - 64, mul, 9);
  return Mix16(Mix16(st.v.first, st.w.first, mul) + ShiftMix(st.y) * kK0 + st.z,
               Mix16(st.v.second, st.w.second, mul) + st.x, mul);
}

}  // namespace

uint64_t Fingerprint64(std::string_view str) {
  const char* s = str.data();
  const size_t len = str.size();
  if (len <= 16) return UpTo16(s, len);
  if (len <= 32) return UpTo32(s, len);
  if (len <= 64) return UpTo64(s, len);
  return Longer(s, len);
}

}  // namespace tfd::kernels::array
