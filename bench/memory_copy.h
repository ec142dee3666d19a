// Memory copies as a yardstick: tfd's transfer path copies a tensor into the
// RPC message on the sender and out of it on the receiver, into buffers it
// has just allocated. These figures say what one such copy costs here.
//
//   MemoryCopy c = MeasureCopy(64 << 20, 5);   // c.warm_gbps, c.fresh_gbps
//
// Thread-safety: pure (allocates its own buffers).
#pragma once

#include <cstddef>

namespace tfd::bench {

struct MemoryCopy {
  double warm_gbps = 0;   // memcpy into a buffer already touched
  double fresh_gbps = 0;  // malloc + memcpy into it (first touch: page faults, zeroing) + free
};

// Medians over `reps` copies of `bytes`.
MemoryCopy MeasureCopy(size_t bytes, int reps);

}  // namespace tfd::bench
