#include "daemon/runtime/frame_rendezvous.h"

#include <cstdio>

namespace tfd {

std::string FrameRendezvous::Suffix(uint64_t frame_id, int64_t iter) {
  char frame[17];
  std::snprintf(frame, sizeof(frame), "%016llx", static_cast<unsigned long long>(frame_id));
  return std::string(";") + frame + ":" + std::to_string(iter);
}

uint64_t FrameInstanceId(uint64_t parent_id, int64_t parent_iter, std::string_view name) {
  uint64_t h = 14695981039346656037ull;
  auto mix = [&h](unsigned char byte) { h = (h ^ byte) * 1099511628211ull; };
  const auto iter = static_cast<uint64_t>(parent_iter);
  for (int i = 0; i < 8; ++i) mix(static_cast<unsigned char>(parent_id >> (8 * i)));
  for (int i = 0; i < 8; ++i) mix(static_cast<unsigned char>(iter >> (8 * i)));
  for (char c : name) mix(static_cast<unsigned char>(c));
  return h == 0 ? 1 : h;
}

}  // namespace tfd
