// CRC-32C (Castagnoli), the checksum of checkpoint files: the polynomial
// LevelDB and TensorFlow's checkpoints use, with hardware support on x86-64.
//
//   uint32_t crc = crc32c::Extend(0, data, n);   // or Value(data, n)
//   crc = crc32c::Extend(crc, more, m);           // same as one call over both
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tfd::kernels::crc32c {

// The CRC of data[0, n) continuing from `crc` (the CRC of what came before).
uint32_t Extend(uint32_t crc, const void* data, size_t n);
inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }

}  // namespace tfd::kernels::crc32c
