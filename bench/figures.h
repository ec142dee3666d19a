// The figures one rpc_bench run measures, passed from the measuring code
// (bench/measure.h) to the printing code (bench/report.h).
//
// Thread-safety: plain values.
#pragma once

#include <string>
#include <vector>

#include "bench/memory_copy.h"
#include "bench/peer_figures.h"
#include "bench/proc_counters.h"
#include "bench/tfd_runs.h"

namespace tfd::bench {

// What to measure and where.
struct BenchSetup {
  std::string tfd;  // the daemon binary
  int iterations = 2000;
  int transfers = 5;
  std::vector<size_t> sizes_mib = {1, 16, 64, 256, 1024};
  // Data-plane transports to measure, each with its own cluster: "" is
  // tfd's default (shared memory between tasks of this host), else a
  // --data-plane-transports value: "stream" (tfd's own TCP streams).
  std::vector<std::string> transports = {"", "stream"};
  // The peers' figures to print beside tfd's (../shared/peers/run.sh bw
  // gloo writes them); empty: none.
  std::string peers_file;
  // Where to write the figures as JSON too (bench/figures_json.h); empty: nowhere.
  std::string json_path;
  int cpu_a = -1;  // the client, the receivers, the far end of a relay
  int cpu_b = -1;  // the other end of each pair
};

struct RawRoundTrips {
  std::vector<double> one_hop, two_hops;   // µs per round trip
  std::vector<ProcCounters> per_two_hops;  // client, relay, echo
  // The same with the echo and the relay polling (PeerWait::kPoll); the
  // client sleeps, as tfd's client does beside polling tasks.
  std::vector<double> one_hop_polling, two_hops_polling;
};

struct RawStreams {
  std::vector<std::vector<double>> seconds;         // per size, per pull
  std::vector<std::vector<ProcCounters>> per_pull;  // per size: sender, receiver
};

// Transfers over one data-plane transport.
struct TransportFigures {
  std::string transports;                               // as in BenchSetup
  std::vector<std::vector<TransferSample>> transfers;   // per size
  std::vector<std::vector<ProcCounters>> per_transfer;  // per size: worker:1, worker:0
  // Peak RSS of worker:1 and worker:0 after each size's transfers (sizes
  // ascend, so each is the peak with that size), bytes.
  std::vector<std::pair<size_t, size_t>> peak_rss;
  std::vector<double> ucx_perftest_gbps;                // per size; 0 when not measured
};

struct TfdFigures {
  std::vector<double> empty_one_hop, empty_two_hops;    // µs per run
  std::vector<double> empty_one_hop_callable;           // the one hop as a Callable's runs
  std::vector<ProcCounters> per_empty_run;              // client, ps:0, worker:0
  // The two hops again, in alternating rounds against a second cluster
  // running --no-step-channel (runStep calls): µs per run, per round.
  std::vector<std::vector<double>> channel_rounds, runstep_rounds;
  std::vector<TransportFigures> by_transport;           // as BenchSetup::transports
};

struct Figures {
  PeerTransfers peers;  // empty maps when no --peers file
  RawRoundTrips raw;
  RawStreams streams;
  std::vector<MemoryCopy> copies;  // per size
  TfdFigures tfd;
};

}  // namespace tfd::bench
