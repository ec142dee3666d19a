#include "bench/measure.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "bench/bench_child.h"
#include "bench/raw_tcp.h"
#include "bench/tfd_cluster.h"
#include "bench/ucx_perftest.h"

namespace tfd::bench {
namespace {

constexpr int kRawWarmup = 200;

StatusOr<std::vector<double>> TimePingPong(int port, int iterations,
                                           const TimedSection& section = {}) {
  TFD_ASSIGN_OR_RETURN(int fd, ConnectLoopback(port));
  auto timed = PingPong(fd, kRawWarmup);
  if (timed.ok()) {
    if (section) section(true);
    timed = PingPong(fd, iterations);
    if (section) section(false);
  }
  close(fd);  // the peer sees the end and exits
  return timed;
}

// Round trips to an echo on B, its peer waiting as `wait` says.
StatusOr<std::vector<double>> MeasureOneHop(const BenchSetup& o, PeerWait wait) {
  int port = 0;
  TFD_ASSIGN_OR_RETURN(int listen_fd, ListenLoopback(&port));
  auto echo = Subprocess::Fork([listen_fd, wait] { return RunEchoPeer(listen_fd, wait); },
                               BenchChild(o.cpu_b));
  close(listen_fd);
  if (!echo.ok()) return echo.status();
  return TimePingPong(port, o.iterations);
}

// client (A) -> relay (B) -> echo (A): the placement of the tfd empty run.
// With `counters`, each process's counters over the timed trips.
StatusOr<std::vector<double>> MeasureTwoHops(const BenchSetup& o, PeerWait wait,
                                             std::vector<ProcCounters>* counters) {
  int echo_port = 0, relay_port = 0;
  TFD_ASSIGN_OR_RETURN(int echo_fd, ListenLoopback(&echo_port));
  auto echo = Subprocess::Fork([echo_fd, wait] { return RunEchoPeer(echo_fd, wait); },
                               BenchChild(o.cpu_a));
  close(echo_fd);
  if (!echo.ok()) return echo.status();
  TFD_ASSIGN_OR_RETURN(int relay_fd, ListenLoopback(&relay_port));
  auto relay = Subprocess::Fork(
      [relay_fd, echo_port, wait] { return RunRelayPeer(relay_fd, echo_port, wait); },
      BenchChild(o.cpu_b));
  close(relay_fd);
  if (!relay.ok()) return relay.status();
  if (counters == nullptr) return TimePingPong(relay_port, o.iterations);
  CounterWatch watch({getpid(), relay->pid(), echo->pid()});
  return TimePingPong(relay_port, o.iterations, watch.Section(o.iterations, counters));
}

}  // namespace

StatusOr<RawRoundTrips> MeasureRawRoundTrips(const BenchSetup& o) {
  RawRoundTrips r;
  TFD_ASSIGN_OR_RETURN(r.one_hop, MeasureOneHop(o, PeerWait::kSleep));
  TFD_ASSIGN_OR_RETURN(r.two_hops, MeasureTwoHops(o, PeerWait::kSleep, &r.per_two_hops));
  TFD_ASSIGN_OR_RETURN(r.one_hop_polling, MeasureOneHop(o, PeerWait::kPoll));
  TFD_ASSIGN_OR_RETURN(r.two_hops_polling, MeasureTwoHops(o, PeerWait::kPoll, nullptr));
  return r;
}

StatusOr<RawStreams> MeasureRawStreams(const BenchSetup& o) {
  size_t max_bytes = 0;
  for (size_t mib : o.sizes_mib) max_bytes = std::max(max_bytes, mib << 20);
  int port = 0;
  TFD_ASSIGN_OR_RETURN(int listen_fd, ListenLoopback(&port));
  auto sender = Subprocess::Fork(
      [listen_fd, max_bytes] { return RunStreamPeer(listen_fd, max_bytes); }, BenchChild(o.cpu_b));
  close(listen_fd);
  if (!sender.ok()) return sender.status();
  TFD_ASSIGN_OR_RETURN(int fd, ConnectLoopback(port));
  auto buffer = std::make_unique<char[]>(max_bytes);
  std::memset(buffer.get(), 0, max_bytes);  // touched: receive, not page faults
  RawStreams out;
  CounterWatch watch({sender->pid(), getpid()});
  Status status;
  for (size_t mib : o.sizes_mib) {
    std::vector<double> seconds;
    out.per_pull.emplace_back();
    auto section = watch.Section(o.transfers, &out.per_pull.back());
    for (int i = 0; i <= o.transfers && status.ok(); ++i) {  // the first is a warm-up
      if (i == 1) section(true);
      auto s = PullStream(fd, buffer.get(), mib << 20);
      if (!s.ok()) status = s.status();
      if (s.ok() && i > 0) seconds.push_back(*s);
    }
    if (status.ok()) section(false);
    out.seconds.push_back(std::move(seconds));
  }
  close(fd);
  if (!status.ok()) return status.WithContext("raw TCP stream");
  return out;
}

StatusOr<TfdFigures> MeasureTfd(const BenchSetup& o) {
  auto io = kj::setupAsyncIo();
  // ps:0 is the master of the empty runs; worker:0 is the master and the
  // consumer of the transfers, worker:1 their producer. The client sits on A.
  TfdFigures f;
  {
    BenchCluster cluster(o.tfd, {{"ps", {o.cpu_b}}, {"worker", {o.cpu_a}}});
    TFD_RETURN_IF_ERROR(cluster.Start(io));
    TFD_ASSIGN_OR_RETURN(auto client, cluster.Connect(io, "ps", 0));
    TFD_ASSIGN_OR_RETURN(f.empty_one_hop, EmptyRuns(*client, "/job:ps/task:0", o.iterations));
    TFD_ASSIGN_OR_RETURN(f.empty_one_hop_callable,
                         EmptyRuns(*client, "/job:ps/task:0", o.iterations, {}, RunKind::kCallable));
    CounterWatch watch({getpid(), cluster.Pid("ps", 0), cluster.Pid("worker", 0)});
    TFD_ASSIGN_OR_RETURN(f.empty_two_hops,
                         EmptyRuns(*client, "/job:worker/task:0", o.iterations,
                                   watch.Section(o.iterations, &f.per_empty_run)));
    client.reset();
    TFD_RETURN_IF_ERROR(cluster.Stop());
  }
  for (const std::string& transports : o.transports) {
    TransportFigures t;
    t.transports = transports;
    std::vector<std::string> flags;
    if (!transports.empty()) flags.push_back("--data-plane-transports=" + transports);
    BenchCluster cluster(o.tfd, {{"worker", {o.cpu_a, o.cpu_b}}}, flags);
    TFD_RETURN_IF_ERROR(cluster.Start(io));
    TFD_ASSIGN_OR_RETURN(auto client, cluster.Connect(io, "worker", 0));
    CounterWatch watch({cluster.Pid("worker", 1), cluster.Pid("worker", 0)});
    const std::string what = transports.empty() ? "the default" : transports;
    for (size_t mib : o.sizes_mib) {
      t.per_transfer.emplace_back();
      auto samples = Transfers(*client, mib << 20, "/job:worker/task:1", "/job:worker/task:0",
                               o.transfers, watch.Section(o.transfers, &t.per_transfer.back()));
      if (!samples.ok()) {
        return samples.status().WithContext(std::to_string(mib) + " MiB transfer over " + what);
      }
      t.transfers.push_back(std::move(samples).value());
      t.peak_rss.emplace_back(PeakRssBytes(cluster.Pid("worker", 1)),
                              PeakRssBytes(cluster.Pid("worker", 0)));
    }
    client.reset();
    TFD_RETURN_IF_ERROR(cluster.Stop());
    // UCX's own figure on the same transport, the two ends pinned as tfd's.
    for (size_t mib : o.sizes_mib) {
      // tfd's streams are TCP: UCX's TCP transport is their counterpart.
      auto gbps = UcxPerftestGbps(mib << 20, transports == "shm" ? "posix" : "tcp",
                                  o.cpu_b, o.cpu_a,
                                  std::max(3, static_cast<int>(std::min<size_t>(50, 2048 / mib))));
      if (!gbps.ok()) {
        std::fprintf(stderr, "rpc_bench: ucx_perftest %zu MiB over %s: %s\n", mib, what.c_str(),
                     gbps.status().ToString().c_str());
      }
      t.ucx_perftest_gbps.push_back(gbps.ok() ? *gbps : 0.0);
    }
    f.by_transport.push_back(std::move(t));
  }
  return f;
}

}  // namespace tfd::bench
