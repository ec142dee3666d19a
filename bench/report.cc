#include "bench/report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/stats.h"

namespace tfd::bench {
namespace {

double Gbps(size_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0;
}

void PrintRoundTrip(const char* what, const std::vector<double>& micros, double raw_p50,
                    double raw_p99) {
  const double p50 = Percentile(micros, 0.5), p99 = Percentile(micros, 0.99);
  std::printf("  %-44s %9.1f %9.1f %9.2fx %9.2fx\n", what, p50, p99, p50 / raw_p50, p99 / raw_p99);
}

void PrintMain(const BenchSetup& o, const RawRoundTrips& raw, const RawStreams& streams,
               const std::vector<MemoryCopy>& copies, const TfdFigures& t) {
  const double raw_p50 = Percentile(raw.one_hop, 0.5), raw_p99 = Percentile(raw.one_hop, 0.99);
  std::printf("\nRound trips, %d each after a warm-up (µs; ratios against raw TCP 1 hop)\n",
              o.iterations);
  std::printf("  %-44s %9s %9s %10s %10s\n", "", "p50", "p99", "p50 ratio", "p99 ratio");
  PrintRoundTrip("raw TCP 1 byte, 1 hop A->B->A", raw.one_hop, raw_p50, raw_p99);
  PrintRoundTrip("raw TCP 1 byte, 2 hops via a relay on B", raw.two_hops, raw_p50, raw_p99);
  PrintRoundTrip("  1 hop, the echo polling", raw.one_hop_polling, raw_p50, raw_p99);
  PrintRoundTrip("  2 hops, the relay and the echo polling", raw.two_hops_polling, raw_p50,
                 raw_p99);
  PrintRoundTrip("tfd empty run, NoOp on the master ps:0", t.empty_one_hop, raw_p50, raw_p99);
  PrintRoundTrip("  the same as a callable's runs", t.empty_one_hop_callable, raw_p50, raw_p99);
  PrintRoundTrip("tfd empty run, client->ps:0->worker:0", t.empty_two_hops, raw_p50, raw_p99);
  const double one_hop = Percentile(t.empty_one_hop, 0.5) / raw_p50;
  const double two_hops = Percentile(t.empty_two_hops, 0.5) / Percentile(raw.two_hops, 0.5);
  std::printf("  target: one hop p50 within %.1fx raw 1 hop: %s (%.2fx)\n", kOneHopTarget,
              one_hop <= kOneHopTarget ? "met" : "NOT met", one_hop);
  std::printf("  target: two hops p50 within %.1fx the raw 2-hop relay: %s (%.2fx)\n",
              kTwoHopTarget, two_hops <= kTwoHopTarget ? "met" : "NOT met", two_hops);
  // Tasks run with --spin-wait-us (TFD_SPIN_WAIT_US) save the wake-ups that
  // the sleeping peers above pay: their fair yardstick is peers that poll.
  std::printf("  against peers that poll (for tasks run with TFD_SPIN_WAIT_US%s%s): one hop "
              "%.2fx, two hops %.2fx\n",
              std::getenv("TFD_SPIN_WAIT_US") ? ", here " : ", not set here",
              std::getenv("TFD_SPIN_WAIT_US") ? std::getenv("TFD_SPIN_WAIT_US") : "",
              Percentile(t.empty_one_hop, 0.5) / Percentile(raw.one_hop_polling, 0.5),
              Percentile(t.empty_two_hops, 0.5) / Percentile(raw.two_hops_polling, 0.5));

  for (const TransportFigures& tf : t.by_transport) {
    const bool tcp = tf.transports != "shm";
    std::printf("\nTransfers worker:1 (B) -> worker:0 (A) over %s, median of %d (GB/s = 1e9 B/s)\n",
                tf.transports.empty() ? "the default (streams)"
                                      : ("--data-plane-transports=" + tf.transports).c_str(),
                o.transfers);
    std::printf("  %8s %9s %9s %7s %9s %7s %9s %7s %11s %7s %8s\n", "size", "tfd push", "raw TCP",
                "ratio", "memcpy", "ratio", "ucx_perf", "ratio", "tfd steps", "spread", "target");
    std::printf("  %8s %9s %9s %7s %9s %7s %9s %7s %11s %7s %8s\n", "", "(trace)", "stream", "",
                "warm", "", "same tls", "", "(delta)", "min-max", "");
    for (size_t i = 0; i < o.sizes_mib.size(); ++i) {
      const size_t bytes = o.sizes_mib[i] << 20;
      std::vector<double> trace, delta;
      for (const TransferSample& s : tf.transfers[i]) {
        trace.push_back(s.trace_seconds);
        delta.push_back(s.remote_step_seconds - s.local_step_seconds);
      }
      const double push = Gbps(bytes, Median(trace));
      const double raw = Gbps(bytes, Median(streams.seconds[i]));
      const double copy = copies[i].warm_gbps;
      const double ucx = tf.ucx_perftest_gbps[i];
      const char* target = "-";
      if (tcp) {
        const double want = o.sizes_mib[i] >= 16 ? kTransferTarget : kSmallTransferTarget;
        target = push / raw >= want ? "met" : "NOT met";
      } else if (o.sizes_mib[i] >= 16) {
        target = push / copy >= kSameHostTarget ? "met" : "NOT met";
      }
      std::printf("  %4zu MiB %9.2f %9.2f %7.2f %9.2f %7.2f %9.2f %7.2f %11.2f %3.1f-%-3.1f %8s\n",
                  o.sizes_mib[i], push, raw, push / raw, copy, push / copy, ucx,
                  ucx > 0 ? push / ucx : 0.0, Gbps(bytes, Median(delta)),
                  Gbps(bytes, *std::max_element(trace.begin(), trace.end())),
                  Gbps(bytes, *std::min_element(trace.begin(), trace.end())), target);
    }
    std::printf("  targets: over TCP %.1f of raw TCP from 16 MiB, %.1f at 1 MiB; on one host %.1f "
                "of a warm memcpy from 16 MiB\n",
                kTransferTarget, kSmallTransferTarget, kSameHostTarget);
    std::printf("  peak RSS after each size, producer / consumer (MiB; the consumer also keeps\n"
                "  up to 1 GiB of received blocks for reuse):\n   ");
    for (size_t i = 0; i < o.sizes_mib.size() && i < tf.peak_rss.size(); ++i) {
      std::printf(" %zu MiB %zu / %zu;", o.sizes_mib[i], tf.peak_rss[i].first >> 20,
                  tf.peak_rss[i].second >> 20);
    }
    std::printf("\n  tfd step medians, consumer on the other task / on the producer (ms):\n   ");
    for (size_t i = 0; i < o.sizes_mib.size(); ++i) {
      std::vector<double> remote, local;
      for (const TransferSample& s : tf.transfers[i]) {
        remote.push_back(s.remote_step_seconds);
        local.push_back(s.local_step_seconds);
      }
      std::printf(" %zu MiB %.2f / %.2f;", o.sizes_mib[i], Median(remote) * 1e3,
                  Median(local) * 1e3);
    }
    std::printf("\n");
  }
}

void PrintCostRow(const char* what, const std::vector<ProcCounters>& c, double scale,
                  const char* fmt) {
  std::printf("  %-26s", what);
  for (const ProcCounters& p : c) {
    std::printf(fmt, p.cpu_seconds * scale, p.runqueue_seconds * scale, p.context_switches,
                p.minor_faults);
  }
  std::printf("\n");
}

// Per timed run: CPU = on a CPU, wait = runnable but waiting for one (other
// programs on the machine), sw = context switches, faults = minor page faults.
void PrintCosts(const BenchSetup& o, const RawRoundTrips& raw, const RawStreams& streams,
                const TfdFigures& t) {
  std::printf(
      "\nWhere the time goes: per timed run, from /proc (CPU = on a CPU, wait = "
      "runnable but waiting for one, sw = context switches, faults = minor faults)\n");
  const char* rt = " %7.1f %7.1f %5.1f %6.1f |";
  std::printf("  %-26s %-28s | %-28s | %-28s |\n", "2-hop round trip (us)", "client (A)",
              "middle (B)", "far end (A)");
  std::printf("  %-26s", "");
  for (int i = 0; i < 3; ++i) std::printf(" %7s %7s %5s %6s |", "CPU", "wait", "sw", "faults");
  std::printf("\n");
  PrintCostRow("raw TCP via relay", raw.per_two_hops, 1e6, rt);
  PrintCostRow("tfd client->ps:0->worker:0", t.per_empty_run, 1e6, rt);

  const char* tr = " %8.1f %8.1f %6.0f %8.0f |";
  std::printf("  %-26s %-33s | %-33s |\n", "transfer (ms)", "sender (B)", "receiver (A)");
  std::printf("  %-26s", "");
  for (int i = 0; i < 2; ++i) std::printf(" %8s %8s %6s %8s |", "CPU", "wait", "sw", "faults");
  std::printf(" 1 MiB = 256 pages of 4 KiB\n");
  for (size_t i = 0; i < o.sizes_mib.size(); ++i) {
    const std::string size = std::to_string(o.sizes_mib[i]) + " MiB";
    PrintCostRow((size + " raw TCP").c_str(), streams.per_pull[i], 1e3, tr);
    for (const TransportFigures& tf : t.by_transport) {
      const std::string name = size + " tfd " + (tf.transports.empty() ? "default" : tf.transports);
      PrintCostRow(name.c_str(), tf.per_transfer[i], 1e3, tr);
    }
  }
}

// tfd's push figure on each transport beside torch rpc's push and gloo's
// send from the peers' file (measured by run.sh, ideally just before).
void PrintPeers(const BenchSetup& o, const PeerTransfers& peers, const TfdFigures& t) {
  if (peers.source.empty()) return;
  std::printf("\nAgainst the peers (GB/s, from %s; torch rpc push over TensorPipe, gloo send)\n",
              peers.source.c_str());
  std::printf("  %8s %10s %10s", "size", "torch rpc", "gloo");
  for (const TransportFigures& tf : t.by_transport) {
    const std::string name = "tfd " + (tf.transports.empty() ? std::string("default") : tf.transports);
    std::printf(" %12s %9s %9s", name.c_str(), "/torch", "/gloo");
  }
  std::printf("\n");
  auto find = [](const std::map<size_t, double>& m, size_t mib) {
    auto it = m.find(mib);
    return it == m.end() ? 0.0 : it->second;
  };
  for (size_t i = 0; i < o.sizes_mib.size(); ++i) {
    const size_t mib = o.sizes_mib[i];
    const double torch = find(peers.torch_rpc_push_gbps, mib);
    const double gloo = find(peers.gloo_send_gbps, mib);
    std::printf("  %4zu MiB %10.2f %10.2f", mib, torch, gloo);
    for (const TransportFigures& tf : t.by_transport) {
      std::vector<double> trace;
      for (const TransferSample& s : tf.transfers[i]) trace.push_back(s.trace_seconds);
      const double push = Gbps(mib << 20, Median(trace));
      std::printf(" %12.2f %9.2f %9.2f", push, torch > 0 ? push / torch : 0.0,
                  gloo > 0 ? push / gloo : 0.0);
    }
    std::printf("\n");
  }
  std::printf("  targets: ahead of gloo and torch rpc over TCP at every size; on one host at least "
              "2x torch rpc\n");
}

}  // namespace

void PrintReport(const BenchSetup& setup, const Figures& f) {
  PrintMain(setup, f.raw, f.streams, f.copies, f.tfd);
  PrintPeers(setup, f.peers, f.tfd);
  PrintCosts(setup, f.raw, f.streams, f.tfd);
}

}  // namespace tfd::bench
