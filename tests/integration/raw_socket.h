// RawSocket: a plain TCP connection for tests that play a misbehaving peer —
// idle, sending garbage, or lying about frame sizes — against a real tfd, or
// a listener that accepts and never answers. Loopback only; every wait has a
// deadline. Closed when it goes away.
//
//   auto s = RawSocket::Connect(cluster.Address("worker", 0), 5s);
//   REQUIRE(s.ok());
//   (*s)->Send(std::string(64, '\xff'));
//   CHECK((*s)->WaitClosed(15s));
//
// Thread-safety: one test thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"

namespace tfd::testing {

class RawSocket {
 public:
  // Connects to "127.0.0.1:PORT", from `source_ip` (another loopback
  // address, such as 127.0.0.2) when given.
  static StatusOr<std::unique_ptr<RawSocket>> Connect(const std::string& address,
                                                      std::chrono::milliseconds timeout,
                                                      const std::string& source_ip = "");
  explicit RawSocket(int fd) : fd_(fd) {}
  ~RawSocket();
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  // Sends all of `bytes` unless the peer has closed the connection (false),
  // waiting at most `timeout` for room in the send buffer.
  bool Send(const std::string& bytes,
            std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Half-closes: the peer reads end of stream after what was sent.
  void ShutdownWrite();
  // True once the peer has closed the connection (end of stream or reset),
  // discarding whatever it sent first; false if it is still open at `timeout`.
  bool WaitClosed(std::chrono::milliseconds timeout);
  // Everything the peer sends until it closes the connection; nullopt if it
  // is still open at `timeout`.
  std::optional<std::string> ReadUntilClosed(std::chrono::milliseconds timeout);
  // This end's port: how tfd's log names the connection ("127.0.0.1:PORT").
  int local_port() const;

 private:
  int fd_;
};

// A TCP listener on 127.0.0.1 that completes handshakes (the kernel does)
// and never reads or answers: a daemon that is hung or deaf.
class SilentListener {
 public:
  SilentListener();
  ~SilentListener();
  std::string address() const;  // "127.0.0.1:PORT"

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Stands in for a task that is not up yet, on its address, to tell when
// something first tries to reach it there: each connection is reset at once
// (to the caller the task is still not up), and the port is free for the
// task once Close is called or this goes away.
//
//   testing::StandIn ps(cluster.Address("ps", 0));
//   REQUIRE(ps.listening());
//   ... start the run that must wait for the ps ...
//   const bool tried = ps.WaitConnection(20s);  // the run is waiting for it
//   ps.Close();
//   REQUIRE(cluster.Start("ps", 0).ok());
//
// Thread-safety: one thread at a time (it may be another than the one that
// made it).
class StandIn {
 public:
  explicit StandIn(const std::string& address);  // "127.0.0.1:PORT"
  ~StandIn();
  StandIn(const StandIn&) = delete;
  StandIn& operator=(const StandIn&) = delete;

  bool listening() const { return fd_ >= 0; }
  // Whether something connected within `timeout`; that connection is reset.
  bool WaitConnection(std::chrono::milliseconds timeout);
  void Close();

 private:
  int fd_ = -1;
};

// `v` as the 4 little-endian bytes Cap'n Proto's framing writes.
inline std::string Le32(uint32_t v) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

}  // namespace tfd::testing
