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
//             [--sizes 1,16,64,256,1024] [--transports default,stream] [--cpus 0,1]
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
#include "bench/measure.h"
#include "bench/proc_counters.h"
#include "bench/report.h"
#include "bench/rpc_json.h"

#ifndef TFD_DEFAULT_PATH
#define TFD_DEFAULT_PATH "tfd"
#endif

namespace tfd::bench {
namespace {

constexpr const char* kUsage =
    "usage: rpc_bench [--tfd PATH] [--iterations N] [--transfers N] [--sizes MIB,...] [--transports T,...] [--peers FILE] "
    "[--cpus A,B] [--json FILE]\n"
    "  --tfd         the tfd binary (default: $TFD, else the one built with this bench)\n"
    "  --iterations  round trips per figure (default 2000)\n"
    "  --transfers   timed transfers per size (default 5)\n"
    "  --sizes       tensor sizes in MiB (default 1,16,64,256,1024)\n"
    "  --transports  data-plane transports to measure, comma-separated: 'default' (shared\n"
    "                memory on this host) and 'stream' (default default,stream)\n"
    "  --peers       JSON lines from ../shared/peers/run.sh bw gloo, printed beside tfd\n"
    "  --cpus        the two CPUs to pin the two ends to (default: the first two allowed)\n"
    "  --json        also write the figures to FILE as JSON (bench/figures_json.h)\n";

StatusOr<std::vector<long>> ParseList(const std::string& flag, const std::string& value) {
  std::vector<long> out;
  std::stringstream in(value);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0) {
      return errors::InvalidArgument(
          flag, " takes non-negative integers separated by commas, got '", value, "'");
    }
    out.push_back(v);
  }
  if (out.empty()) return errors::InvalidArgument(flag, " needs a value");
  return out;
}

StatusOr<BenchSetup> ParseFlags(int argc, char** argv) {
  BenchSetup o;
  const char* env = std::getenv("TFD");
  o.tfd = env != nullptr && *env != '\0' ? env : TFD_DEFAULT_PATH;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") return errors::Cancelled("help");
    if (i + 1 >= argc) return errors::InvalidArgument(flag, " needs a value");
    const std::string value = argv[++i];
    if (flag == "--tfd") {
      o.tfd = value;
      continue;
    }
    if (flag == "--peers") {
      o.peers_file = value;
      continue;
    }
    if (flag == "--json") {
      o.json_path = value;
      continue;
    }
    if (flag == "--transports") {
      o.transports.clear();
      std::stringstream in(value);
      std::string item;
      while (std::getline(in, item, ',')) o.transports.push_back(item == "default" ? "" : item);
      if (o.transports.empty()) return errors::InvalidArgument("--transports needs a value");
      continue;
    }
    TFD_ASSIGN_OR_RETURN(auto list, ParseList(flag, value));
    if (flag == "--iterations" && list.size() == 1 && list[0] > 0) {
      o.iterations = static_cast<int>(std::min(list[0], 1000000L));
    } else if (flag == "--transfers" && list.size() == 1 && list[0] > 0) {
      o.transfers = static_cast<int>(std::min(list[0], 1000L));
    } else if (flag == "--sizes") {
      o.sizes_mib.clear();
      for (long v : list) {
        if (v < 1 || v > 4096)
          return errors::InvalidArgument("--sizes: ", v, " MiB is not in [1, 4096]");
        o.sizes_mib.push_back(static_cast<size_t>(v));
      }
    } else if (flag == "--cpus" && list.size() == 2) {
      o.cpu_a = static_cast<int>(list[0]);
      o.cpu_b = static_cast<int>(list[1]);
    } else {
      return errors::InvalidArgument("unknown flag or bad value: ", flag, " ", value);
    }
  }
  if (o.cpu_a < 0) {
    const std::vector<int> cpus = AllowedCpus();
    if (cpus.empty()) return errors::Internal("no CPU is allowed to this process");
    o.cpu_a = cpus[0];
    o.cpu_b = cpus.size() > 1 ? cpus[1] : cpus[0];
  }
  return o;
}

int Main(int argc, char** argv) {
  auto options = ParseFlags(argc, argv);
  if (!options.ok()) {
    if (options.status().code() == Code::kCancelled) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::fprintf(stderr, "rpc_bench: error: %s\n%s", options.status().ToString().c_str(), kUsage);
    return 2;
  }
  const BenchSetup& o = *options;
  if (access(o.tfd.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "rpc_bench: error: NOT_FOUND: no tfd binary at '%s' (use --tfd or TFD)\n",
                 o.tfd.c_str());
    return 2;
  }
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
