// The delaying proxy that the scale benchmark puts between tasks
// (bench/delay_proxy.h): every byte arrives intact, in order, in both
// directions, and never before the delay has passed since it was sent; an
// EOF passes through the same way; a target that refuses closes the client's
// connection instead of leaving it hanging. "No earlier than the delay" is
// the proxy's contract, not a timing target: nothing here asserts an upper
// bound on any time.
#include <catch2/catch.hpp>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bench/delay_proxy.h"
#include "bench/raw_tcp.h"

namespace tfd::bench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::microseconds kDelay = 20ms;

// One read: the bytes [begin, end) of the stream, and when read returned.
struct Arrival {
  size_t begin, end;
  Clock::time_point at;
};

// Reads `fd` until EOF (or an error), keeping the bytes and each read's arrival.
std::vector<Arrival> ReadAll(int fd, std::string& out) {
  std::vector<Arrival> arrivals;
  char buffer[16 << 10];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n <= 0) return arrivals;
    arrivals.push_back({out.size(), out.size() + static_cast<size_t>(n), Clock::now()});
    out.append(buffer, static_cast<size_t>(n));
  }
}

// An echo peer on `listen_fd` that also keeps what it read, and when.
struct Echo {
  std::string received;
  std::vector<Arrival> arrivals;
  std::thread thread;

  explicit Echo(int listen_fd) {
    thread = std::thread([this, listen_fd] {
      const int fd = accept(listen_fd, nullptr, nullptr);
      if (fd < 0) return;
      char buffer[16 << 10];
      for (;;) {
        const ssize_t n = read(fd, buffer, sizeof(buffer));
        if (n <= 0) break;
        arrivals.push_back({received.size(), received.size() + static_cast<size_t>(n),
                            Clock::now()});
        received.append(buffer, static_cast<size_t>(n));
        if (send(fd, buffer, static_cast<size_t>(n), MSG_NOSIGNAL) != n) break;
      }
      close(fd);
    });
  }
  ~Echo() {
    if (thread.joinable()) thread.join();
  }
};

// The latest time any byte of [a.begin, a.end) was handed to send():
// message k holds bytes [k * size, (k + 1) * size).
Clock::time_point LatestSend(const Arrival& a, const std::vector<Clock::time_point>& sent,
                             size_t size) {
  return sent[(a.end - 1) / size];
}

TEST_CASE("every byte arrives intact, in order, both ways, and never before the delay") {
  int port = 0;
  auto listener = ListenLoopback(&port);
  REQUIRE(listener.ok());
  auto proxy = DelayProxy::Start(kDelay);
  REQUIRE(proxy.ok());
  auto proxy_port = (*proxy)->Forward(port);
  REQUIRE(proxy_port.ok());
  Echo echo(*listener);
  auto client = ConnectLoopback(*proxy_port);
  REQUIRE(client.ok());

  constexpr size_t kMessage = 32 << 10, kMessages = 32;
  std::string sent_bytes;
  for (size_t i = 0; i < kMessage * kMessages; ++i) {
    sent_bytes.push_back(static_cast<char>((i * 131 + i / 4099) & 0xff));
  }
  std::vector<Clock::time_point> sent;
  for (size_t k = 0; k < kMessages; ++k) {
    sent.push_back(Clock::now());
    REQUIRE(send(*client, sent_bytes.data() + k * kMessage, kMessage, MSG_NOSIGNAL) ==
            static_cast<ssize_t>(kMessage));
  }
  shutdown(*client, SHUT_WR);
  std::string echoed;
  const std::vector<Arrival> back = ReadAll(*client, echoed);
  close(*client);
  echo.thread.join();
  close(*listener);

  CHECK(echo.received == sent_bytes);
  CHECK(echoed == sent_bytes);
  for (const Arrival& a : echo.arrivals) {
    INFO("bytes " << a.begin << ".." << a.end << " reached the target");
    CHECK(a.at - LatestSend(a, sent, kMessage) >= kDelay);
  }
  for (const Arrival& a : back) {
    INFO("bytes " << a.begin << ".." << a.end << " came back");
    CHECK(a.at - LatestSend(a, sent, kMessage) >= 2 * kDelay);
  }
  CHECK((*proxy)->counters().connections == 1);
  CHECK((*proxy)->counters().bytes == 2 * sent_bytes.size());
}

TEST_CASE("an EOF passes through after the delay, and the answer's EOF comes back") {
  int port = 0;
  auto listener = ListenLoopback(&port);
  REQUIRE(listener.ok());
  auto proxy = DelayProxy::Start(kDelay);
  REQUIRE(proxy.ok());
  auto proxy_port = (*proxy)->Forward(port);
  REQUIRE(proxy_port.ok());
  Clock::time_point target_saw_eof;
  std::thread target([&] {
    const int fd = accept(*listener, nullptr, nullptr);
    if (fd < 0) return;
    std::string got;
    ReadAll(fd, got);
    target_saw_eof = Clock::now();
    send(fd, "bye", 3, MSG_NOSIGNAL);
    close(fd);
  });
  auto client = ConnectLoopback(*proxy_port);
  REQUIRE(client.ok());
  const Clock::time_point shut = Clock::now();
  shutdown(*client, SHUT_WR);
  std::string answer;
  ReadAll(*client, answer);  // returns at the EOF that follows "bye"
  const Clock::time_point client_saw_eof = Clock::now();
  close(*client);
  target.join();
  close(*listener);

  CHECK(answer == "bye");
  CHECK(target_saw_eof - shut >= kDelay);
  CHECK(client_saw_eof - shut >= 2 * kDelay);
}

TEST_CASE("a target that refuses closes the client's connection rather than leaving it open") {
  int port = 0;
  auto unused = ListenLoopback(&port);
  REQUIRE(unused.ok());
  close(*unused);  // nothing listens on `port` now
  auto proxy = DelayProxy::Start(kDelay);
  REQUIRE(proxy.ok());
  auto proxy_port = (*proxy)->Forward(port);
  REQUIRE(proxy_port.ok());
  auto client = ConnectLoopback(*proxy_port);
  REQUIRE(client.ok());
  char byte;
  const ssize_t n = read(*client, &byte, 1);  // ConnectLoopback's timeout bounds it
  const int error = errno;
  close(*client);
  CHECK(n <= 0);
  if (n < 0) CHECK(error != EAGAIN);  // EAGAIN: the read timed out, the proxy kept it open
}

TEST_CASE("a negative delay is refused") {
  auto proxy = DelayProxy::Start(std::chrono::microseconds(-1));
  REQUIRE_FALSE(proxy.ok());
  CHECK(proxy.status().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd::bench
