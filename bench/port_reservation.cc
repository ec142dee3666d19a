#include "bench/port_reservation.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <utility>

#include "common/io_error.h"

namespace tfd::bench {
namespace {

// Candidates drawn by Any before it gives up; the range holds over 20000.
constexpr int kAttempts = 1000;

struct Range {
  int first;
  int end;  // one past the last candidate: the ephemeral range's first port
};

// Rule 1 of the header.
Range Candidates() {
  int low = 32768, high = 60999;
  if (std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range"); range) range >> low >> high;
  return {low - 10000 >= 1000 ? 10000 : 1024, low};
}

// The lock directory, made shared (1777) when this call creates it.
Status EnsureDirectory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 01777) == 0) {
    ::chmod(dir.c_str(), 01777);  // mkdir's mode went through the umask
    return OkStatus();
  }
  if (errno == EEXIST) return OkStatus();
  return IoError(errno, "creating the port lock directory '" + dir + "'");
}

// Whether nothing is bound to `port` on 127.0.0.1 now; the error says why not.
Status BindCheck(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError(errno, "opening a socket to check port " + std::to_string(port));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const int rc = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int err = errno;
  ::close(fd);
  if (rc == 0) return OkStatus();
  return errors::Unavailable("port ", port, " is in use on 127.0.0.1: binding it failed: ",
                             std::strerror(err));
}

}  // namespace

std::string PortLockDirectory() {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tfd-test-ports";
}

StatusOr<PortReservation> PortReservation::Exactly(int port) {
  if (port < 1 || port > 65535) {
    return errors::InvalidArgument("port ", port, " is outside 1..65535");
  }
  const std::string dir = PortLockDirectory();
  TFD_RETURN_IF_ERROR(EnsureDirectory(dir));
  const std::string path = dir + "/" + std::to_string(port);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    // Another user's file the umask kept to themselves: theirs to use.
    if (errno == EACCES) return errors::Unavailable("port ", port, ": lock file '", path,
                                                    "' belongs to another user");
    return IoError(errno, "opening the port lock file '" + path + "'");
  }
  ::fchmod(fd, 0666);  // fails harmlessly on a file another user created
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return errors::Unavailable("port ", port, " is reserved already (lock file '", path, "')");
    }
    return IoError(err, "locking the port lock file '" + path + "'");
  }
  if (Status free = BindCheck(port); !free.ok()) {
    ::close(fd);
    return free;
  }
  return PortReservation(port, fd);
}

StatusOr<PortReservation> PortReservation::Any() {
  const Range range = Candidates();
  thread_local std::mt19937 rng{std::random_device{}()};
  std::uniform_int_distribution<int> pick(range.first, range.end - 1);
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto reservation = Exactly(pick(rng));
    if (reservation.ok() || reservation.status().code() != Code::kUnavailable) {
      return reservation;
    }
  }
  return errors::Unavailable("no free port on 127.0.0.1 in ", range.first, "..", range.end - 1,
                             " after ", kAttempts, " tries (lock directory '",
                             PortLockDirectory(), "')");
}

PortReservation::PortReservation(PortReservation&& other) noexcept
    : port_(other.port_), lock_fd_(std::exchange(other.lock_fd_, -1)) {}

PortReservation& PortReservation::operator=(PortReservation&& other) noexcept {
  if (this != &other) {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    port_ = other.port_;
    lock_fd_ = std::exchange(other.lock_fd_, -1);
  }
  return *this;
}

PortReservation::~PortReservation() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

}  // namespace tfd::bench
