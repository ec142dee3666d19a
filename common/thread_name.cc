#include "common/thread_name.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>

namespace tfd {
namespace {

std::atomic<uint64_t> next_id{1};
thread_local uint64_t tl_id = 0;
thread_local std::string tl_name;

}  // namespace

void NameThisThread(std::string_view name) {
  tl_name = std::string(name);
  if (gettid() == getpid()) return;
  // The kernel keeps 15 bytes and a NUL; a longer name is refused, not cut.
  const std::string kernel_name = tl_name.substr(0, 15);
  pthread_setname_np(pthread_self(), kernel_name.c_str());
}

uint64_t ThisThreadId() {
  if (tl_id == 0) tl_id = next_id.fetch_add(1, std::memory_order_relaxed);
  return tl_id;
}

const std::string& ThisThreadName() {
  if (tl_name.empty()) tl_name = "thread " + std::to_string(ThisThreadId());
  return tl_name;
}

}  // namespace tfd
