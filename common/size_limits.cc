#include "common/size_limits.h"

#include <cstdio>
#include <iterator>
#include <limits>

namespace tfd {

uint64_t TensorBytes(DType dtype, int64_t num_elements) {
  if (num_elements <= 0) return 0;
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(num_elements), DTypeSize(dtype), &bytes)) {
    return std::numeric_limits<uint64_t>::max();
  }
  return bytes;
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"MiB", "GiB", "TiB", "PiB", "EiB"};
  // Small sizes exactly: a limit set just under a tensor's size must not
  // print as the same number.
  if (bytes < (uint64_t{1} << 20)) return std::to_string(bytes) + " bytes";
  double v = static_cast<double>(bytes) / (1 << 20);
  int unit = 0;
  while (v >= 1024 && unit + 1 < static_cast<int>(std::size(kUnits))) {
    v /= 1024;
    ++unit;
  }
  // Whole numbers read better without ".0" (the defaults are powers of two).
  char text[32];
  if (v == static_cast<double>(static_cast<uint64_t>(v))) {
    std::snprintf(text, sizeof(text), "%.0f %s", v, kUnits[unit]);
  } else {
    std::snprintf(text, sizeof(text), "%.1f %s", v, kUnits[unit]);
  }
  return text;
}

}  // namespace tfd
