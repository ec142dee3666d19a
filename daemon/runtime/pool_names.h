// Names the threads of a compute pool "compute 0", "compute 1"... so traces,
// `top -H` and perf tell them from the event loop and the deadlines thread.
//
// Thread-safety: call once, right after making the pool, before other work
// is posted to it.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <string_view>

namespace tfd {

// Posts one naming task per thread; each holds its thread until all have
// started (so no thread takes two names), for at most a few seconds, and
// this returns when they are done. `threads` must be the pool's size.
void NamePoolThreads(boost::asio::thread_pool& pool, int threads, std::string_view prefix);

}  // namespace tfd
