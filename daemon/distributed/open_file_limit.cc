#include "daemon/distributed/open_file_limit.h"

#include <sys/resource.h>

#include <algorithm>
#include <climits>

namespace tfd {

std::string RaiseOpenFileLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return "";
  const rlim_t before = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) return "";
  auto text = [](rlim_t v) { return v == RLIM_INFINITY ? std::string("unlimited") : std::to_string(v); };
  return "open-file limit raised from " + text(before) + " to " + text(limit.rlim_cur);
}

uint64_t OpenFileLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;  // Linux's usual soft default
  return limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : limit.rlim_cur;
}

int ConnectionCapForFileLimit(uint64_t soft_limit) {
  constexpr uint64_t kLeast = 64;
  const uint64_t room = soft_limit > kReservedDescriptors ? soft_limit - kReservedDescriptors : 0;
  return static_cast<int>(std::clamp<uint64_t>(room, kLeast, INT_MAX));
}

}  // namespace tfd
