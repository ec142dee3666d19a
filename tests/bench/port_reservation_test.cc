// PortReservation (bench/port_reservation.h) across processes: what two
// tests or benchmarks drawing ports at the same time rely on.
// tests/util/port_reservation_test.sh checks that the Python and shell
// reservations follow the same rule.
#include "bench/port_reservation.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <set>
#include <vector>

namespace tfd::bench {
namespace {

// Ports each process draws: enough that two processes drawing at random
// without holding anything would almost surely share one (about four on
// average, for some 22000 candidates).
constexpr int kPerProcess = 300;

// A forked process that reserves `count` ports, reports them on a pipe and
// holds them until it is killed. The child does nothing but that and
// _exit, so Catch2's state in it is never touched.
class HoldingChild {
 public:
  explicit HoldingChild(int count) {
    int report[2];
    REQUIRE(::pipe2(report, O_CLOEXEC) == 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(report[0]);
      Child(count, report[1]);
    }
    ::close(report[1]);
    REQUIRE(pid_ > 0);  // checked here: Catch2 must not report from the child
    report_fd_ = report[0];
  }
  ~HoldingChild() {
    Kill();
    ::close(report_fd_);
  }

  // The ports the child holds; fewer than it was asked for when it failed
  // (or the bound passed before it said).
  std::vector<int> Ports() {
    std::vector<int> ports;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    int port = 0;
    size_t have = 0;  // bytes of `port` read so far
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{report_fd_, POLLIN, 0};
      if (::poll(&p, 1, 1000) <= 0) continue;
      const ssize_t n = ::read(report_fd_, reinterpret_cast<char*>(&port) + have,
                               sizeof(port) - have);
      if (n <= 0) break;  // the child is done: its last port was -1, or it died
      have += static_cast<size_t>(n);
      if (have < sizeof(port)) continue;
      have = 0;
      if (port < 0) break;
      ports.push_back(port);
    }
    return ports;
  }

  // SIGKILL, and the child reaped: its locks are gone once waitpid returns.
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  [[noreturn]] static void Child(int count, int report_fd) {
    std::vector<PortReservation> held;
    for (int i = 0; i < count; ++i) {
      auto port = PortReservation::Any();
      if (!port.ok()) ::_exit(1);
      const int number = port->port();
      if (::write(report_fd, &number, sizeof(number)) != sizeof(number)) ::_exit(1);
      held.push_back(std::move(port).value());
    }
    const int done = -1;
    if (::write(report_fd, &done, sizeof(done)) != sizeof(done)) ::_exit(1);
    for (;;) ::pause();  // holds until killed
  }

  pid_t pid_ = -1;
  int report_fd_ = -1;
};

TEST_CASE("two processes reserving ports at once never hold the same one") {
  HoldingChild child(kPerProcess);
  std::vector<PortReservation> mine;
  std::set<int> my_ports;
  for (int i = 0; i < kPerProcess; ++i) {
    auto port = PortReservation::Any();
    REQUIRE(port.ok());
    my_ports.insert(port->port());
    mine.push_back(std::move(port).value());
  }
  CHECK(my_ports.size() == static_cast<size_t>(kPerProcess));
  const std::vector<int> theirs = child.Ports();
  REQUIRE(theirs.size() == static_cast<size_t>(kPerProcess));
  std::vector<int> shared;
  for (int port : theirs) {
    if (my_ports.count(port) != 0) shared.push_back(port);
  }
  CHECK(shared == std::vector<int>{});  // prints the ports held twice
}

TEST_CASE("a port another process holds is refused until that process is killed") {
  HoldingChild child(1);
  const std::vector<int> ports = child.Ports();
  REQUIRE(ports.size() == 1);
  auto taken = PortReservation::Exactly(ports[0]);
  REQUIRE_FALSE(taken.ok());
  CHECK(taken.status().code() == Code::kUnavailable);

  child.Kill();
  auto freed = PortReservation::Exactly(ports[0]);
  INFO(freed.status().ToString());
  CHECK(freed.ok());
}

TEST_CASE("a released reservation is free again, a port in use is refused") {
  int port = 0;
  {
    auto first = PortReservation::Any();
    REQUIRE(first.ok());
    port = first->port();
    CHECK_FALSE(PortReservation::Exactly(port).ok());  // held, even by this process
  }
  // A listener that holds no lock: the bind check finds it.
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(::listen(fd, 1) == 0);
  auto busy = PortReservation::Exactly(port);
  ::close(fd);
  REQUIRE_FALSE(busy.ok());
  CHECK(busy.status().code() == Code::kUnavailable);
  CHECK(PortReservation::Exactly(port).ok());
}

TEST_CASE("reserved ports lie below the ephemeral range") {
  int low = 32768, high = 60999;
  if (std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range"); range) range >> low >> high;
  for (int i = 0; i < 20; ++i) {
    auto port = PortReservation::Any();
    REQUIRE(port.ok());
    CHECK(port->port() >= 1024);
    CHECK(port->port() < low);
  }
}

}  // namespace
}  // namespace tfd::bench
