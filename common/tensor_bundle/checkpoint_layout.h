// The checkpoint file's fixed parts (docs/checkpoint_format.md) and the
// little-endian encoding helpers the reader and writer share. Private to
// common/tensor_bundle.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/status.h"

namespace tfd::kernels::checkpoint {

static_assert(std::endian::native == std::endian::little,
              "checkpoint payloads are written straight from little-endian memory");

inline constexpr char kHeaderMagic[8] = {'T', 'F', 'D', 'C', 'K', 'P', 'T', '\0'};
inline constexpr char kFooterMagic[8] = {'T', 'F', 'D', 'C', 'K', 'E', 'N', 'D'};
inline constexpr uint64_t kHeaderSize = 16;  // magic, u32 version, u32 reserved
inline constexpr uint64_t kFooterSize = 32;  // u64 index offset, u64 index length,
                                             // u32 index crc, u32 version, magic
inline constexpr uint64_t kPayloadAlignment = 64;

template <typename T>
void Put(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

// Reads fixed-size little-endian values from a byte range, refusing to run
// past its end.
class Cursor {
 public:
  Cursor(const char* p, size_t n) : p_(p), end_(p + n) {}
  template <typename T>
  bool Get(T* v) {
    if (static_cast<size_t>(end_ - p_) < sizeof(T)) return false;
    std::memcpy(v, p_, sizeof(T));
    p_ += sizeof(T);
    return true;
  }
  bool GetBytes(size_t n, std::string* out) {
    if (static_cast<size_t>(end_ - p_) < n) return false;
    out->assign(p_, n);
    p_ += n;
    return true;
  }
  bool done() const { return p_ == end_; }

 private:
  const char* p_;
  const char* end_;
};

}  // namespace tfd::kernels::checkpoint
