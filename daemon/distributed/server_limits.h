// ServerLimits: what a tfd task grants a connection before and after it has
// logged in through the Gate. Set by tfd's flags (daemon/tfd_config.h), read
// by TaskServer and the pieces it builds per connection.
//
// The threat these answer: anyone who can reach the port can open
// connections and send bytes without knowing the token. Until a connection
// has logged in it may hold only a little memory (a pre-login byte budget),
// for a little while (the login deadline), and only so many at once (the
// caps); a wrong token is answered only after a delay that grows with its
// address's failures, and at a bounded rate in all (the failed-login pace),
// while the right one is answered at once.
// Once logged in, a connection is a peer task or a client: the total cap
// applies to it, and what it makes the task hold is bounded — each frame,
// and all its frames held at once, by max_message_bytes; every connection's
// frames together by the task's memory budget (which also counts the
// constants of its sessions' graphs and its feeds); its sessions by
// max_sessions_per_client; the partitions registered here by
// max_registered_graphs.
//
//   ServerLimits limits;               // the defaults below
//   limits.login_timeout = std::chrono::seconds(2);
//   TaskServer server(env, io, timer, token, limits);
#pragma once

#include <chrono>
#include <cstdint>

namespace tfd {

struct ServerLimits {
  // Connections of every kind at once. One fd and a few KiB each. At the
  // cap, the oldest connection that has not logged in makes room; when every
  // connection has logged in, the new one is refused — before the process
  // runs out of descriptors, where accept() would fail for everyone.
  // 0: as many as the open-file limit leaves room for
  // (ConnectionCapForFileLimit, open_file_limit.h), which tfd raises to the
  // hard limit at start: a ps of a 1,000-worker job holds about 2,000.
  int max_connections = 0;

  // Connections from one address that have not logged in yet. Logged-in
  // connections do not count: a cluster of tens of tasks on one host, each
  // with its clients, all come from 127.0.0.1 and log in within a round
  // trip, so the pending ones from one address stay few. At the cap, the
  // oldest pending connection of that address makes room for the new one:
  // a stranger sharing the address (loopback, a NAT) cannot keep the
  // task's peers and clients out by holding connections open, while one
  // address still cannot take every pending slot of the task.
  int max_pending_per_peer = 64;

  // A connection that has not logged in by then is closed.
  std::chrono::milliseconds login_timeout{10000};

  // Bytes of Cap'n Proto frames (headers included) a connection may send
  // before it has logged in. A login takes well under 1 KiB; the budget is
  // checked against each frame's declared size before its body is read, so a
  // header claiming gigabytes costs nothing.
  uint64_t pre_login_bytes = uint64_t{1} << 20;

  // The largest Cap'n Proto frame a logged-in connection may send; a header
  // announcing more closes the connection before its body is read. 0: room
  // for the largest tensor and graph a task accepts, and 64 MiB for the
  // rest of a request (DefaultMaxMessageBytes, daemon/rpc/connection.h).
  // A connection's frames held at once (calls not done with their params)
  // are bounded by it too. A frame also waits for room in the
  // task's memory budget before its body is read, at most login_timeout.
  uint64_t max_message_bytes = 0;

  // Sessions one connection may hold at once (each login is a client): the
  // next createSession is RESOURCE_EXHAUSTED until one goes. A trainer holds
  // one or two; 64 leaves room for tools and notebooks.
  int max_sessions_per_client = 64;

  // Partitions masters have registered with this task (registerGraph) and
  // hold at once. A worker's session registers one per task per signature
  // of its runs, a handful; 4096 serves hundreds of workers' sessions.
  int max_registered_graphs = 4096;

  // Failed logins (daemon/distributed/login_throttle.h): an address's first
  // few failures are answered at once, then after 100 ms, doubling up to
  // failed_login_max_delay; and at most failed_login_rate failed logins are
  // answered a second across all addresses (0: no such cap). A right token
  // is never delayed. Five seconds and ten a second leave room for people
  // retrying a token file path, and hold a guesser that waits for its
  // answers to ten guesses a second, against a token of 128 bits or more.
  int failed_login_rate = 10;
  std::chrono::milliseconds failed_login_max_delay{5000};
};

}  // namespace tfd
