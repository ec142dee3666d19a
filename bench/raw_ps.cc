#include "bench/raw_ps.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

#include "bench/bench_child.h"
#include "bench/hand_mlp.h"
#include "bench/raw_tcp.h"
#include "bench/stats.h"
#include "common/subprocess.h"

namespace tfd::bench {
namespace {

using Clock = std::chrono::steady_clock;

// What a worker's message starts with: whether gradients follow (a
// worker's first message only asks for the parameters).
constexpr uint64_t kNoGradients = 0, kGradients = 1;

// Moves every byte of `blocks` over `fd` with readv or writev, one call
// for all of them unless the socket takes them in parts. OUT_OF_RANGE at a
// clean end of stream before the first byte read.
Status MoveBlocks(int fd, std::vector<iovec> blocks, bool send) {
  size_t first = 0, moved = 0;
  while (true) {
    while (first < blocks.size() && blocks[first].iov_len == 0) ++first;
    if (first == blocks.size()) break;
    const int count = static_cast<int>(blocks.size() - first);
    const ssize_t k = send ? writev(fd, &blocks[first], count) : readv(fd, &blocks[first], count);
    if (k < 0 && errno == EINTR) continue;
    if (k == 0 && !send) {
      return moved == 0 ? errors::OutOfRange("end of stream")
                        : errors::Unavailable("the peer closed after ", moved, " bytes");
    }
    if (k <= 0) return errors::Unavailable(send ? "writev" : "readv", ": ", strerror(errno));
    moved += static_cast<size_t>(k);
    for (size_t left = static_cast<size_t>(k); left > 0 && first < blocks.size();) {
      iovec& b = blocks[first];
      const size_t step = std::min(left, b.iov_len);
      b.iov_base = static_cast<char*>(b.iov_base) + step;
      b.iov_len -= step;
      left -= step;
      if (b.iov_len == 0) ++first;
    }
  }
  return OkStatus();
}

std::vector<iovec> Iovecs(uint64_t* header, const HandMlp::Blocks& blocks) {
  std::vector<iovec> v;
  if (header != nullptr) v.push_back({header, sizeof(*header)});
  for (const auto& b : blocks) v.push_back({b.data(), b.size_bytes()});
  return v;
}

// The ps: accepts `workers` connections, then answers each message with
// the parameters after applying the gradients it carried, until every
// worker has closed. Single-threaded, like a ps's event loop.
int RunPsPeer(int listen_fd, int workers) {
  HandMlp model;  // the same seed as the workers': the same initial parameters
  const HandMlp::Blocks parameters = model.Parameters();
  const HandMlp::Blocks gradients = model.Gradients();  // a receive buffer here
  std::vector<pollfd> conns;
  while (static_cast<int>(conns.size()) < workers) {
    pollfd p{listen_fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(kIoTimeout.count() * 1000)) != 1) return 1;
    const int fd = accept(listen_fd, nullptr, nullptr);
    if (fd < 0) return 1;
    ConfigureSocket(fd);
    conns.push_back({fd, POLLIN, 0});
  }
  close(listen_fd);
  while (!conns.empty()) {
    const int ready = poll(conns.data(), conns.size(), static_cast<int>(kIoTimeout.count() * 1000));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return 1;
    for (size_t i = 0; i < conns.size();) {
      if (conns[i].revents == 0) {
        ++i;
        continue;
      }
      const int fd = conns[i].fd;
      uint64_t header = 0;
      Status s = MoveBlocks(fd, {{&header, sizeof(header)}}, false);
      if (s.code() == Code::kOutOfRange) {  // this worker is done
        close(fd);
        conns.erase(conns.begin() + static_cast<long>(i));
        continue;
      }
      if (s.ok() && header == kGradients) s = MoveBlocks(fd, Iovecs(nullptr, gradients), false);
      if (!s.ok() || header > kGradients) return 1;
      if (header == kGradients) HandMlp::Apply(parameters, gradients);
      if (!MoveBlocks(fd, Iovecs(nullptr, parameters), true).ok()) return 1;
      conns[i].revents = 0;
      ++i;
    }
  }
  return 0;
}

// One worker's side: the hand-written step with its update on the ps.
class RawWorker {
 public:
  explicit RawWorker(int fd) : fd_(fd) {}
  ~RawWorker() { close(fd_); }  // the ps sees the end

  // Sends the last gradients (none the first time), takes the parameters
  // back, and computes the next gradients at them.
  StatusOr<float> Step() {
    uint64_t header = sent_once_ ? kGradients : kNoGradients;
    std::vector<iovec> out = sent_once_ ? Iovecs(&header, mlp_.Gradients())
                                        : std::vector<iovec>{{&header, sizeof(header)}};
    sent_once_ = true;
    TFD_RETURN_IF_ERROR(MoveBlocks(fd_, std::move(out), true));
    TFD_RETURN_IF_ERROR(MoveBlocks(fd_, Iovecs(nullptr, mlp_.Parameters()), false));
    return mlp_.ComputeGradients();
  }

 private:
  int fd_;
  HandMlp mlp_;
  bool sent_once_ = false;
};

// `workers` workers (on A, then B) against one ps (on B); each repetition
// starts them at one barrier, as MeasureTwoWorkers does. Returns the
// aggregate steps/s per repetition (AggregateRates).
StatusOr<std::vector<double>> MeasureCluster(const TrainSetup& o, int workers) {
  int port = 0;
  TFD_ASSIGN_OR_RETURN(int listen_fd, ListenLoopback(&port));
  auto ps = Subprocess::Fork([listen_fd, workers] { return RunPsPeer(listen_fd, workers); },
                             BenchChild(o.cpu_b));
  close(listen_fd);
  if (!ps.ok()) return ps.status();

  std::barrier<> sync(workers);
  std::vector<Status> status(static_cast<size_t>(workers));
  std::vector<std::vector<Clock::time_point>> starts(workers), ends(workers);
  auto worker = [&](int w) {
    Status s = [&]() -> Status {
      TFD_RETURN_IF_ERROR(PinSelf(w == 0 ? o.cpu_a : o.cpu_b));
      TFD_ASSIGN_OR_RETURN(int fd, ConnectLoopback(port));
      RawWorker me(fd);
      for (int i = 0; i < o.warmup; ++i) TFD_RETURN_IF_ERROR(me.Step().status());
      for (int r = 0; r < o.reps; ++r) {
        sync.arrive_and_wait();
        starts[w].push_back(Clock::now());
        for (int i = 0; i < o.steps; ++i) TFD_RETURN_IF_ERROR(me.Step().status());
        ends[w].push_back(Clock::now());
      }
      return OkStatus();
    }();
    if (!s.ok()) {
      status[w] = s.WithContext("raw worker " + std::to_string(w));
      sync.arrive_and_drop();
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.emplace_back(worker, w);
  for (std::thread& t : threads) t.join();
  for (const Status& s : status) TFD_RETURN_IF_ERROR(s);
  // Every worker closed its socket, so the ps has ended or is ending.
  if (StatusOr<int> code = ps->Wait(kIoTimeout); !code.ok() || *code != 0) {
    return errors::Internal("the raw ps ended badly: ",
                            code.ok() ? "exit status " + std::to_string(*code)
                                      : code.status().ToString());
  }
  return AggregateRates(starts, ends, o.steps);
}

}  // namespace

StatusOr<RawPsFigures> MeasureRawPs(const TrainSetup& o) {
  RawPsFigures f;
  {
    TFD_RETURN_IF_ERROR(PinSelf(o.cpu_a));
    HandMlp alone;
    for (int i = 0; i < o.warmup; ++i) alone.Step();
    for (int r = 0; r < o.reps; ++r) {
      const auto start = Clock::now();
      for (int i = 0; i < o.steps; ++i) alone.Step();
      f.local.push_back(o.steps / Seconds(Clock::now() - start));
    }
  }
  TFD_ASSIGN_OR_RETURN(f.one_worker, MeasureCluster(o, 1));
  if (o.two_workers) {
    TFD_ASSIGN_OR_RETURN(f.two_workers, MeasureCluster(o, 2));
  }
  return f;
}

}  // namespace tfd::bench
