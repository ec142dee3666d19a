// DelayProxy: a TCP proxy on 127.0.0.1 that makes loopback look like a link
// with latency, for benchmarks on a kernel without netem (issue 39). Each
// Forward() opens a port of the proxy's whose connections it relays to a
// target port; every byte read from either end is written to the other end
// `delay` after it was read, never earlier, in order, both directions at
// once (full duplex). An end's EOF reaches the other end after the same delay
// (as a shutdown of its write side); an error on either end closes both.
//
// What it models: a one-way latency on every segment, with no bandwidth
// limit and no loss. What it does not: the connection handshake, which costs
// no extra round trip here (the proxy accepts at once and connects to the
// target while the first bytes wait out their delay); a real link adds one.
//
// One thread serves every port and connection (epoll; a timerfd wakes it
// when the earliest held bytes fall due, with a timer slack of 1 ns). It
// asks for real-time scheduling (SCHED_FIFO, priority 1) where the process
// may have it, so that on a loaded host its deliveries do not wait behind
// other processes for a CPU: a network delivers regardless of the hosts'
// load. Without that right it runs at normal priority (counters() says). A
// direction holds at most kMaxHeldBytes; past that it stops reading its
// sender until the receiver has taken some, so a slow receiver slows the
// sender as TCP would.
//
//   TFD_ASSIGN_OR_RETURN(auto proxy, DelayProxy::Start(1000us));
//   TFD_ASSIGN_OR_RETURN(int port, proxy->Forward(task_port));
//   // dial 127.0.0.1:port instead of 127.0.0.1:task_port
//
// Thread-safety: Forward and counters() may be called from any thread; the
// destructor stops the proxy's thread and closes every socket it holds.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"

namespace tfd::bench {

class DelayProxy {
 public:
  // Bytes a direction holds before it stops reading its sender.
  static constexpr size_t kMaxHeldBytes = 8 << 20;

  static StatusOr<std::unique_ptr<DelayProxy>> Start(std::chrono::microseconds delay);
  ~DelayProxy();
  DelayProxy(const DelayProxy&) = delete;
  DelayProxy& operator=(const DelayProxy&) = delete;

  // A port on 127.0.0.1 that relays to 127.0.0.1:target_port: `listen_port`,
  // or one the kernel picks when it is 0; returns it. A connection the
  // proxy cannot make to the target closes the accepted one.
  StatusOr<int> Forward(int target_port, int listen_port = 0);

  struct Counters {
    uint64_t connections = 0;  // accepted, on every port
    uint64_t bytes = 0;        // relayed, both directions
    bool realtime = false;     // its thread got real-time scheduling (SCHED_FIFO)
  };
  Counters counters() const;
  std::chrono::microseconds delay() const { return delay_; }

 private:
  class Loop;

  DelayProxy(std::chrono::microseconds delay, std::unique_ptr<Loop> loop);

  const std::chrono::microseconds delay_;
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
};

}  // namespace tfd::bench
