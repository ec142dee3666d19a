// One line of Criteo's display-advertising TSV format, parsed into what a
// model reads: the label, the 13 integer features and the 26 categorical
// features hashed to rows of an embedding table of `num_buckets` rows.
//
// A line is 40 tab-separated fields: label (0 or 1), I1..I13 (decimal
// integers, possibly negative), C1..C26 (32-bit values written as 1 to 8
// hex digits, as Criteo's files and ../shared/peers' generator write them).
// Any feature may be empty. A trailing '\r' (a file written on Windows) is
// ignored.
//
// Categorical value x of field f (0-based) maps to row
//   fmix32(x ^ (0x85EBCA77 * (f + 1) mod 2^32)) mod num_buckets
// (fmix32: MurmurHash3's finaliser), the rule of the peer benchmark
// (torch_peers_bench.py's ctr_rows), so both train on the same rows; an
// empty field gives row -1, which a model treats as "no row" (the peer's
// empty bag). An empty integer feature reads as 0.
//
//   CriteoExample ex;
//   TFD_RETURN_IF_ERROR(ParseCriteoLine(line, /*num_buckets=*/1 << 20, ex));
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace tfd::kernels::data {

inline constexpr int kCriteoDense = 13;
inline constexpr int kCriteoCategorical = 26;
inline constexpr int kCriteoFields = 1 + kCriteoDense + kCriteoCategorical;

struct CriteoExample {
  float label = 0;
  std::array<float, kCriteoDense> dense{};
  std::array<int64_t, kCriteoCategorical> ids{};
};

// MurmurHash3's 32-bit finaliser.
constexpr uint32_t Fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

// The row of categorical value `value` in field `field` (0..25).
constexpr int64_t CriteoRow(uint32_t value, int field, int64_t num_buckets) {
  const uint32_t salt = 0x85EBCA77u * static_cast<uint32_t>(field + 1);
  return static_cast<int64_t>(Fmix32(value ^ salt) % static_cast<uint64_t>(num_buckets));
}

// Parses `line` (without its '\n') into `out`. INVALID_ARGUMENT saying
// which field is wrong and what it holds (the caller adds file and line):
// a field count other than 40, a label other than 0 or 1, an integer that
// is not one or overflows int64, a category that is not 1 to 8 hex digits.
// `num_buckets` must be >= 1.
Status ParseCriteoLine(std::string_view line, int64_t num_buckets, CriteoExample& out);

}  // namespace tfd::kernels::data
