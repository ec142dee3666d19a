#include "bench/memory_copy.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "bench/stats.h"

namespace tfd::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Keeps the compiler from dropping a copy whose result nobody reads.
volatile char sink;

}  // namespace

MemoryCopy MeasureCopy(size_t bytes, int reps) {
  auto src = std::make_unique<char[]>(bytes);
  auto dst = std::make_unique<char[]>(bytes);
  std::memset(src.get(), 1, bytes);
  std::memset(dst.get(), 0, bytes);
  std::vector<double> warm, fresh;
  for (int i = 0; i < reps; ++i) {
    auto start = Clock::now();
    std::memcpy(dst.get(), src.get(), bytes);
    warm.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    sink = dst[bytes / 2];

    start = Clock::now();
    char* p = static_cast<char*>(std::malloc(bytes));
    if (p == nullptr) break;
    std::memcpy(p, src.get(), bytes);
    sink = p[bytes / 2];
    std::free(p);
    fresh.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  const double n = static_cast<double>(bytes);
  return {n / Median(warm) / 1e9, fresh.empty() ? 0 : n / Median(fresh) / 1e9};
}

}  // namespace tfd::bench
