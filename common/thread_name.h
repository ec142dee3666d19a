// Names and small ids for the threads of a process, for traces and for the
// operator's tools: `top -H`, `perf` and gdb show the name given here (cut to
// the 15 bytes Linux keeps), and a step's trace labels each node with the
// id and name of the thread that ran it.
//
//   NameThisThread("deadlines");
//   trace.thread = ThisThreadId();  // 1, 2, 3... in order of first use
//   trace.thread_name = ThisThreadName();
//
// Thread-safety: every function acts on the calling thread only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tfd {

// Sets the calling thread's name, for traces (whole) and the kernel (cut).
// The main thread's kernel name is the process's (`pgrep tfd`, `killall`,
// systemd's listings), so there the name is for traces only.
void NameThisThread(std::string_view name);

// The name given by NameThisThread, else "thread N" with N its id.
const std::string& ThisThreadName();

// A small id unique within the process, fixed for the thread's life: the
// order in which threads first asked (unlike std::thread::id, it fits a
// trace's tid and never collides).
uint64_t ThisThreadId();

}  // namespace tfd
