// The process's limit on open descriptors (RLIMIT_NOFILE), which bounds the
// connections a task can hold.
//
// A task of a large job holds a socket per peer it talks to: a ps of a
// 1,000-worker job accepts about 2,000 (docs/scaling.md). Login shells and
// many container runtimes start processes with a soft limit of 1,024 under a
// much higher hard one, kept low for programs that still use select(). tfd
// never does (KJ and UCX wait with epoll), so at start it raises its soft
// limit to the hard one, as Go's runtime does for every program; a job then
// needs no `ulimit -n` unless the hard limit itself is low.
//
//   RaiseOpenFileLimit();                        // once, in main, before any thread
//   int cap = ConnectionCapForFileLimit(OpenFileLimit());
//
// Thread-safety: the functions are safe from any thread; raising changes a
// process-wide setting.
#pragma once

#include <cstdint>
#include <string>

namespace tfd {

// Descriptors a task keeps for what is not an accepted connection: its own
// connections to peers, checkpoint and log files, UCX's and the runtime's.
inline constexpr uint64_t kReservedDescriptors = 256;

// Raises the soft limit to the hard one. Returns a line saying what changed
// ("open-file limit raised from 1024 to 524288"), or empty when nothing did
// or nothing could.
std::string RaiseOpenFileLimit();

// The soft limit now; UINT64_MAX when unlimited.
uint64_t OpenFileLimit();

// The connections a task accepts when --max-connections is 0 (its default):
// the limit less kReservedDescriptors, at least 64, at most INT_MAX.
int ConnectionCapForFileLimit(uint64_t soft_limit);

}  // namespace tfd
