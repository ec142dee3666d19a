// PortReservation: a TCP port on 127.0.0.1 that a test or a benchmark holds
// for itself until it is done with it, so that programs starting daemons at
// the same time on one machine (meson runs two tests at once, a benchmark
// may run beside the suite, and several checkouts may share a host) never
// hand the same port to two daemons. Checking that a port is free is not
// enough: another program can draw the same port between the check and its
// daemon's bind.
//
// It lives in bench/ because the benchmarks' clusters (bench/tfd_cluster.h,
// bench/scale_cluster.h) need it as much as the tests do, and tests may use
// bench/ while bench/ must not reach into tests/.
//
// THE RULE. Everything that picks ports for local daemons follows it, in
// whatever language it is written: this class (C++: the C++ tests'
// fixtures, the benchmarks' clusters), scripts/port_reservation.py (the
// Python tests, the Python walkthroughs, deploy tests), and
// scripts/port-reservation.sh (the free_port of scripts/cluster-lib.sh,
// which the shell tests, walkthroughs and scripts use).
//   1. Candidates lie below the kernel's ephemeral range: from 10000 up to
//      the first port of /proc/sys/net/ipv4/ip_local_port_range (32768 when
//      unreadable), from 1024 when that would leave fewer than 1000. A port
//      inside the range (what binding port 0 gives) can be taken as the
//      source port of any outgoing connection before the daemon binds it.
//   2. Port P belongs to whoever holds an exclusive flock(2) on the file
//      P in the directory ${TMPDIR:-/tmp}/tfd-test-ports, shared by all
//      tests on the machine (created mode 1777, so other users' tests
//      share it too). The files are never removed: removing one races with
//      a process that has opened it and is about to lock it. So there is at
//      most one empty file per candidate port.
//   3. With the lock held, the port must also be free now: C++ and Python
//      bind it on 127.0.0.1 and close it again; bash, which cannot bind,
//      connects and takes a refused connection as free. If it is not, the
//      lock is dropped and another candidate drawn.
//   4. The lock lasts as long as its open file description: here, as long
//      as the PortReservation (hold it until the daemon has bound the port,
//      or until the daemon stops); in Python, until the process exits; in
//      bash, until the shell that sourced the script and every process it
//      started have exited. The kernel drops a lock when its holder dies, however it
//      dies (SIGKILL included), so nothing is left to clean up. C++ and
//      Python open the file close-on-exec: a daemon started by the test does
//      not inherit the lock.
//
//   auto port = PortReservation::Any();
//   REQUIRE(port.ok());
//   std::string address = "127.0.0.1:" + std::to_string(port->port());
//   ... start a daemon on `address`; keep `port` alive as long as it runs.
//
// Thread-safety: Any and Exactly may be called from any thread; one
// reservation belongs to one thread at a time.
#pragma once

#include <string>

#include "common/status.h"

namespace tfd::bench {

class PortReservation {
 public:
  // A port that follows the rule, reserved until this object is destroyed.
  // UNAVAILABLE when every candidate drawn was taken; FAILED_PRECONDITION
  // (or another IoError code) when the lock directory cannot be used.
  static StatusOr<PortReservation> Any();
  // `port` itself: UNAVAILABLE when another holder has it or something on
  // the machine is bound to it.
  static StatusOr<PortReservation> Exactly(int port);

  PortReservation(PortReservation&& other) noexcept;
  PortReservation& operator=(PortReservation&& other) noexcept;
  PortReservation(const PortReservation&) = delete;
  PortReservation& operator=(const PortReservation&) = delete;
  ~PortReservation();

  int port() const { return port_; }

 private:
  PortReservation(int port, int lock_fd) : port_(port), lock_fd_(lock_fd) {}

  int port_ = 0;
  int lock_fd_ = -1;  // holds the flock; -1 once moved from
};

// The directory of the lock files (rule 2).
std::string PortLockDirectory();

}  // namespace tfd::bench
