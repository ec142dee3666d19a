// rpc_bench: tfd's RPC path against raw TCP, in one run on loopback.
//
// Prints (1) the round trip of an empty run — client -> master (ps:0) -> one
// worker -> back — beside a raw TCP one-byte round trip, p50 and p99; and
// (2) task-to-task transfer of 1, 16, 64 and 256 MiB float32 tensors in GB/s
// beside a raw TCP stream of the same sizes. Every process is pinned to a CPU
// and every process the benchmark starts, it stops. What it measures and
// today's figures: docs/performance.md, "The data plane" and "The step path".
//
//   rpc_bench [--tfd PATH] [--iterations 2000] [--transfers 5]
//             [--sizes 1,16,64,256,1024] [--transports stream,shm] [--cpus 0,1]
//             [--json FILE]
//
// Exit status: 0 after printing the tables (targets missed are reported, not
// failed); 1 when a measurement could not be made; 2 for bad flags.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>

#include "common/subprocess.h"
#include "bench/bench_flags.h"
#include "bench/measure.h"
#include "bench/proc_counters.h"
#include "bench/report.h"
#include "bench/rpc_json.h"

#ifndef TFD_DEFAULT_PATH
#define TFD_DEFAULT_PATH "tfd"
#endif

namespace tfd::bench {
namespace {

// The command line into `o`; exits on --help or a bad flag.
void ParseFlags(int argc, char** argv, BenchSetup& o) {
  std::vector<int64_t> sizes(o.sizes_mib.begin(), o.sizes_mib.end());
  std::vector<int> cpus;
  std::string transports = "stream,shm";
  BenchFlags flags("rpc_bench", "round trips and tensor transfers between tfd tasks on one host, "
                                "beside raw TCP, UCX and gloo");
  flags.TfdBinary(TFD_DEFAULT_PATH, &o.tfd)
      .Int("iterations", 1, 1000000, "round trips per figure", &o.iterations)
      .Int("transfers", 1, 1000, "timed transfers per size", &o.transfers)
      .IntList("sizes", 1, 4096, "tensor sizes in MiB", &sizes)
      .Text("transports", "T,...", "data-plane transports to measure, comma-separated: 'stream' "
            "(tfd's default) and 'shm' (UCX shared memory on one host); 'default' runs tfd "
            "without the flag", &transports)
      .Text("peers", "FILE", "JSON lines from ../shared/peers/run.sh bw gloo, printed beside tfd",
            &o.peers_file)
      .IntList("cpus", 0, CPU_SETSIZE - 1, "the two CPUs to pin the two ends to, A,B", &cpus)
      .ShownDefault("the first two allowed")
      .Json(&o.json_path);
  flags.ParseOrExit(argc, argv);
  o.sizes_mib.assign(sizes.begin(), sizes.end());
  o.transports.clear();
  std::stringstream in(transports);
  for (std::string item; std::getline(in, item, ',');) {
    o.transports.push_back(item == "default" ? "" : item);
  }
  const std::vector<int> allowed = AllowedCpus();
  if (cpus.empty() && !allowed.empty()) {
    cpus = {allowed[0], allowed.size() > 1 ? allowed[1] : allowed[0]};
  }
  const char* bad = o.transports.empty() ? "--transports needs a value"
                    : allowed.empty()    ? "no CPU is allowed to this process"
                    : cpus.size() != 2   ? "--cpus takes two CPUs, A,B"
                                         : nullptr;
  if (bad != nullptr) {
    std::fprintf(stderr, "rpc_bench: error: INVALID_ARGUMENT: %s\n", bad);
    std::exit(2);
  }
  o.cpu_a = cpus[0];
  o.cpu_b = cpus[1];
}

int Main(int argc, char** argv) {
  BenchSetup o;
  ParseFlags(argc, argv, o);
  if (Status s = PinSelf(o.cpu_a); !s.ok()) {
    std::fprintf(stderr, "rpc_bench: error: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("rpc_bench: loopback 127.0.0.1; %u CPUs (%s); kernel %s\n",
              std::thread::hardware_concurrency(), ProcLine("/proc/cpuinfo", "model name").c_str(),
              ProcLine("/proc/sys/kernel/osrelease").c_str());
  std::printf(
      "pinning: A = CPU %d (this client, raw receiver, worker:0), B = CPU %d (raw peer, "
      "ps:0, worker:1)%s\n",
      o.cpu_a, o.cpu_b, o.cpu_a == o.cpu_b ? "  [one CPU only: both ends share it]" : "");
  std::printf("tfd: %s\nload average before: %s\n", o.tfd.c_str(),
              ProcLine("/proc/loadavg").c_str());
  std::fflush(stdout);

  FiguresJson json("rpc_bench", argc, argv);  // records the load before

  // Raw peers are forked copies of this process: fork before any thread.
  Figures f;
  if (!o.peers_file.empty()) {
    auto peers = ReadPeerTransfers(o.peers_file);
    if (!peers.ok()) {
      std::fprintf(stderr, "rpc_bench: error: %s\n", peers.status().ToString().c_str());
      return 2;
    }
    f.peers = std::move(peers).value();
  }
  auto fail = [](const char* what, const Status& s) {
    std::fprintf(stderr, "rpc_bench: error: %s: %s\n", what, s.ToString().c_str());
    return 1;
  };
  auto raw = MeasureRawRoundTrips(o);
  if (!raw.ok()) return fail("raw TCP round trips", raw.status());
  f.raw = std::move(raw).value();
  auto streams = MeasureRawStreams(o);
  if (!streams.ok()) return fail("raw TCP streams", streams.status());
  f.streams = std::move(streams).value();
  for (size_t mib : o.sizes_mib) f.copies.push_back(MeasureCopy(mib << 20, o.transfers));
  auto tfd = MeasureTfd(o);
  if (!tfd.ok()) return fail("tfd", tfd.status());
  f.tfd = std::move(tfd).value();
  PrintReport(o, f);
  std::printf("load average after: %s\n", ProcLine("/proc/loadavg").c_str());
  AddRpcFigures(o, f, json);
  if (Status s = json.Write(o.json_path); !s.ok()) return fail("--json", s);
  return 0;
}

}  // namespace
}  // namespace tfd::bench

int main(int argc, char** argv) { return tfd::bench::Main(argc, argv); }
