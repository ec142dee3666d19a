#include "bench/delay_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <queue>
#include <string>
#include <unordered_map>

namespace tfd::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadSize = 64 << 10;

// What an epoll event is about: the low two bits of its data, the rest an id.
enum Tag : uint64_t { kListener = 0, kClient = 1, kUpstream = 2, kControl = 3 };
constexpr uint64_t kWakeId = 0, kTimerId = 1;

uint64_t EventData(uint64_t id, Tag tag) { return id << 2 | tag; }

Status Errno(const std::string& what) {
  return errors::Unavailable("delay proxy: ", what, ": ", std::strerror(errno));
}

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

void NoDelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Bytes read from one end, to be written to the other once due; or that
// end's EOF.
struct Chunk {
  Clock::time_point due;
  std::string bytes;
  bool eof = false;
};

// One direction of a link: what `from` sent that `to` has not been given.
struct Direction {
  int from = -1, to = -1;
  std::deque<Chunk> held;
  size_t held_bytes = 0;
  size_t offset = 0;      // of held.front(), already written
  bool read_eof = false;  // `from` has nothing more to send
  bool blocked = false;   // `to` took less than offered: wait until it is writable
  bool done = false;      // the EOF was passed on
};

// An accepted connection and the one the proxy made to the target.
struct Link {
  Link(int client_fd, int upstream_fd) : client(client_fd), upstream(upstream_fd) {
    up.from = down.to = client;
    up.to = down.from = upstream;
  }
  ~Link() {
    close(client);
    close(upstream);
  }
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  const int client, upstream;
  bool connecting = true;
  Direction up, down;  // client -> upstream, upstream -> client
  uint32_t client_events = 0, upstream_events = 0;  // registered with epoll
};

// A direction's earliest held bytes fall due: (due, link id, up?).
struct Due {
  Clock::time_point due;
  uint64_t link;
  bool up;
  bool operator>(const Due& o) const { return due > o.due; }
};

}  // namespace

// The proxy's thread and everything it owns. Run() is that thread's body;
// Add() and Stop() may be called from any thread.
class DelayProxy::Loop {
 public:
  Loop(std::chrono::microseconds delay, int epoll_fd, int wake_fd, int timer_fd)
      : delay_(delay), epoll_(epoll_fd), wake_(wake_fd), timer_(timer_fd) {}
  ~Loop() {
    links_.clear();
    for (const auto& [id, listener] : listeners_) close(listener.fd);
    MutexLock lock(mu_);
    for (const auto& [fd, target] : pending_) close(fd);
    close(timer_);
    close(wake_);
    close(epoll_);
  }

  void Add(int listen_fd, int target_port) {
    {
      MutexLock lock(mu_);
      pending_.emplace_back(listen_fd, target_port);
    }
    Wake();
  }
  void Stop() {
    stop_ = true;
    Wake();
  }
  void Run();

  std::atomic<uint64_t> connections{0}, bytes{0};
  std::atomic<bool> realtime{false};

 private:
  struct Listener {
    int fd;
    int target_port;
  };

  void Wake() {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_, &one, sizeof(one));
  }
  void TakePending();
  void Accept(const Listener& listener);
  void OnLinkEvent(uint64_t id, bool client_side, uint32_t events);
  bool Read(uint64_t id, Direction& d);
  bool Flush(Link& link, Direction& d);
  void Update(uint64_t id, Link& link);
  void SetEvents(int fd, uint64_t data, uint32_t want, uint32_t& registered);
  void FireDue();
  void ArmTimer();

  const std::chrono::microseconds delay_;
  const int epoll_, wake_, timer_;
  std::atomic<bool> stop_{false};
  Mutex mu_;
  std::vector<std::pair<int, int>> pending_ GUARDED_BY(mu_);  // (listening fd, target port)

  // The proxy's thread alone.
  uint64_t next_id_ = 1;
  std::map<uint64_t, Listener> listeners_;
  std::unordered_map<uint64_t, std::unique_ptr<Link>> links_;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
  Clock::time_point armed_{};
};

void DelayProxy::Loop::Run() {
  prctl(PR_SET_TIMERSLACK, 1UL);  // wake when the bytes are due, not up to 50 µs later
  // A link delivers whatever the hosts' CPUs are doing: on a loaded host a
  // thread of normal priority may wait milliseconds for a CPU once its
  // timer fires, and that wait would count as latency. It sleeps between
  // deliveries, so the CPU it takes first is little.
  const sched_param priority{.sched_priority = 1};
  realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &priority) == 0;
  epoll_event events[64];
  while (!stop_) {
    const int n = epoll_wait(epoll_, events, 64, -1);
    for (int i = 0; i < n; ++i) {
      const uint64_t id = events[i].data.u64 >> 2;
      switch (static_cast<Tag>(events[i].data.u64 & 3)) {
        case kListener:
          if (auto it = listeners_.find(id); it != listeners_.end()) Accept(it->second);
          break;
        case kClient:
        case kUpstream:
          OnLinkEvent(id, (events[i].data.u64 & 3) == kClient, events[i].events);
          break;
        case kControl: {
          uint64_t count;
          [[maybe_unused]] ssize_t r = read(id == kWakeId ? wake_ : timer_, &count, sizeof(count));
          if (id == kWakeId) TakePending();
          break;
        }
      }
    }
    FireDue();
    ArmTimer();
  }
}

void DelayProxy::Loop::TakePending() {
  MutexLock lock(mu_);
  for (const auto& [fd, target] : pending_) {
    const uint64_t id = next_id_++;
    listeners_[id] = Listener{fd, target};
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = EventData(id, kListener);
    epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev);
  }
  pending_.clear();
}

void DelayProxy::Loop::Accept(const Listener& listener) {
  for (;;) {
    const int client = accept4(listener.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client < 0) return;  // EAGAIN, or a connection that went away meanwhile
    ++connections;
    NoDelay(client);
    const int upstream = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (upstream < 0) {
      close(client);
      continue;
    }
    NoDelay(upstream);
    const uint64_t id = next_id_++;
    auto link = std::make_unique<Link>(client, upstream);
    const sockaddr_in target = Loopback(listener.target_port);
    if (connect(upstream, reinterpret_cast<const sockaddr*>(&target), sizeof(target)) == 0) {
      link->connecting = false;
    } else if (errno != EINPROGRESS) {
      continue;  // ~Link closes both: the client sees the target refuse
    }
    Link& l = *link;
    links_[id] = std::move(link);
    Update(id, l);
  }
}

void DelayProxy::Loop::OnLinkEvent(uint64_t id, bool client_side, uint32_t events) {
  auto it = links_.find(id);
  if (it == links_.end()) return;
  Link& link = *it->second;
  bool ok = (events & EPOLLERR) == 0;
  if (ok && !client_side && link.connecting) {
    int error = 0;
    socklen_t len = sizeof(error);
    getsockopt(link.upstream, SOL_SOCKET, SO_ERROR, &error, &len);
    ok = error == 0;
    link.connecting = false;
    if (ok) ok = Flush(link, link.up);  // what the client sent while it connected
  } else if (ok) {
    Direction& reading = client_side ? link.up : link.down;
    Direction& writing = client_side ? link.down : link.up;
    if ((events & (EPOLLIN | EPOLLHUP)) != 0 && !reading.read_eof) ok = Read(id, reading);
    if (ok && (events & EPOLLOUT) != 0 && writing.blocked) {
      writing.blocked = false;
      ok = Flush(link, writing);
    }
  }
  if (!ok || (link.up.done && link.down.done)) {
    links_.erase(it);  // closes both ends
    return;
  }
  Update(id, link);
}

// One read from d.from: held until due, or passed on at once with no delay.
bool DelayProxy::Loop::Read(uint64_t id, Direction& d) {
  char buffer[kReadSize];
  const ssize_t n = read(d.from, buffer, sizeof(buffer));
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  Chunk chunk{.due = Clock::now() + delay_};
  if (n == 0) {
    chunk.eof = true;
    d.read_eof = true;
  } else {
    chunk.bytes.assign(buffer, static_cast<size_t>(n));
    d.held_bytes += static_cast<size_t>(n);
  }
  d.held.push_back(std::move(chunk));
  Link& link = *links_.at(id);
  if (delay_.count() == 0) return Flush(link, d);
  due_.push(Due{d.held.back().due, id, &d == &link.up});
  return true;
}

// Writes what is due of d to d.to; false when d.to has failed.
bool DelayProxy::Loop::Flush(Link& link, Direction& d) {
  if (link.connecting && d.to == link.upstream) return true;
  const Clock::time_point now = Clock::now();
  while (!d.held.empty() && !d.blocked && d.held.front().due <= now) {
    Chunk& chunk = d.held.front();
    if (chunk.eof) {
      shutdown(d.to, SHUT_WR);
      d.done = true;
      d.held.pop_front();
      continue;
    }
    const ssize_t n = send(d.to, chunk.bytes.data() + d.offset, chunk.bytes.size() - d.offset,
                           MSG_NOSIGNAL);
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
      d.blocked = errno != EINTR;
      continue;
    }
    bytes += static_cast<uint64_t>(n);
    d.offset += static_cast<size_t>(n);
    if (d.offset == chunk.bytes.size()) {
      d.held_bytes -= chunk.bytes.size();
      d.offset = 0;
      d.held.pop_front();
    }
  }
  return true;
}

// Reads from an end while its direction has room; waits for an end to be
// writable while bytes due to it are blocked (or while it connects). An end
// with nothing to wait for leaves epoll, so that its hang-up cannot spin.
void DelayProxy::Loop::Update(uint64_t id, Link& link) {
  const auto reads = [](const Direction& d) {
    return !d.read_eof && d.held_bytes < kMaxHeldBytes ? uint32_t{EPOLLIN} : 0u;
  };
  const uint32_t client = reads(link.up) | (link.down.blocked ? uint32_t{EPOLLOUT} : 0u);
  const uint32_t upstream =
      link.connecting ? uint32_t{EPOLLOUT}
                      : reads(link.down) | (link.up.blocked ? uint32_t{EPOLLOUT} : 0u);
  SetEvents(link.client, EventData(id, kClient), client, link.client_events);
  SetEvents(link.upstream, EventData(id, kUpstream), upstream, link.upstream_events);
}

void DelayProxy::Loop::SetEvents(int fd, uint64_t data, uint32_t want, uint32_t& registered) {
  if (want == registered) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.u64 = data;
  const int op = want == 0 ? EPOLL_CTL_DEL : registered == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  epoll_ctl(epoll_, op, fd, &ev);
  registered = want;
}

void DelayProxy::Loop::FireDue() {
  while (!due_.empty() && due_.top().due <= Clock::now()) {
    const Due d = due_.top();
    due_.pop();
    auto it = links_.find(d.link);
    if (it == links_.end()) continue;
    Link& link = *it->second;
    if (!Flush(link, d.up ? link.up : link.down) || (link.up.done && link.down.done)) {
      links_.erase(it);
      continue;
    }
    Update(d.link, link);
  }
}

void DelayProxy::Loop::ArmTimer() {
  const Clock::time_point next = due_.empty() ? Clock::time_point{} : due_.top().due;
  if (next == armed_) return;
  armed_ = next;
  itimerspec spec{};  // all zero: disarmed
  if (next != Clock::time_point{}) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(next.time_since_epoch());
    spec.it_value.tv_sec = static_cast<time_t>(ns.count() / 1000000000);
    spec.it_value.tv_nsec = static_cast<long>(ns.count() % 1000000000);
  }
  timerfd_settime(timer_, TFD_TIMER_ABSTIME, &spec, nullptr);
}

StatusOr<std::unique_ptr<DelayProxy>> DelayProxy::Start(std::chrono::microseconds delay) {
  if (delay.count() < 0) {
    return errors::InvalidArgument("delay proxy: the delay must be >= 0 us, got ", delay.count());
  }
  const int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  const int wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  // steady_clock is CLOCK_MONOTONIC on Linux: the timer's absolute times are its.
  const int timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (epoll_fd < 0 || wake_fd < 0 || timer_fd < 0) {
    Status s = Errno("epoll_create1/eventfd/timerfd_create");
    for (int fd : {epoll_fd, wake_fd, timer_fd}) {
      if (fd >= 0) close(fd);
    }
    return s;
  }
  auto loop = std::make_unique<Loop>(delay, epoll_fd, wake_fd, timer_fd);
  for (auto [fd, id] : {std::pair{wake_fd, kWakeId}, std::pair{timer_fd, kTimerId}}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = EventData(id, kControl);
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) return Errno("epoll_ctl");
  }
  return std::unique_ptr<DelayProxy>(new DelayProxy(delay, std::move(loop)));
}

DelayProxy::DelayProxy(std::chrono::microseconds delay, std::unique_ptr<Loop> loop)
    : delay_(delay), loop_(std::move(loop)) {
  thread_ = std::thread([this] { loop_->Run(); });
}

DelayProxy::~DelayProxy() {
  loop_->Stop();
  thread_.join();
}

StatusOr<int> DelayProxy::Forward(int target_port, int listen_port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket");
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr = Loopback(listen_port);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 512) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    Status s = Errno("listen on 127.0.0.1:" + std::to_string(listen_port) + " for port " +
                     std::to_string(target_port));
    close(fd);
    return s;
  }
  loop_->Add(fd, target_port);
  return static_cast<int>(ntohs(addr.sin_port));
}

DelayProxy::Counters DelayProxy::counters() const {
  return Counters{.connections = loop_->connections.load(),
                  .bytes = loop_->bytes.load(),
                  .realtime = loop_->realtime.load()};
}

}  // namespace tfd::bench
