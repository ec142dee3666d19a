#include "bench/rpc_json.h"

#include <map>
#include <string>
#include <vector>

#include "bench/stats.h"

namespace tfd::bench {
namespace {

constexpr const char* kEmptyRun = "empty run";
constexpr const char* kTransfer = "transfer";

void AddRoundTrips(const std::string& row, const std::string& series,
                   const std::vector<double>& micros, FiguresJson& out) {
  if (micros.empty()) return;
  nlohmann::json& f = out.Add(kEmptyRun, row, series, "us", Median(micros));
  f["p99"] = Percentile(micros, 0.99);
  f["samples"] = micros.size();
}

std::vector<double> Gbps(size_t bytes, const std::vector<double>& seconds) {
  std::vector<double> out;
  for (double s : seconds) {
    if (s > 0) out.push_back(static_cast<double>(bytes) / s / 1e9);
  }
  return out;
}

std::string TfdSeries(const std::string& transports) {
  if (transports.empty()) return "tfd (default)";
  return "tfd (--data-plane-transports=" + transports + ")";
}

void AddTransfers(const BenchSetup& o, const Figures& f, size_t i, FiguresJson& out) {
  const size_t mib = o.sizes_mib[i], bytes = mib << 20;
  const std::string row = std::to_string(mib) + " MiB";
  out.AddSamples(kTransfer, row, "raw TCP", "GB/s", Gbps(bytes, f.streams.seconds[i]));
  out.Add(kTransfer, row, "memcpy warm", "GB/s", f.copies[i].warm_gbps);
  out.Add(kTransfer, row, "memcpy fresh", "GB/s", f.copies[i].fresh_gbps);
  for (const TransportFigures& tf : f.tfd.by_transport) {
    std::vector<double> trace;
    for (const TransferSample& s : tf.transfers[i]) trace.push_back(s.trace_seconds);
    out.AddSamples(kTransfer, row, TfdSeries(tf.transports), "GB/s", Gbps(bytes, trace));
    if (i < tf.ucx_perftest_gbps.size() && tf.ucx_perftest_gbps[i] > 0) {
      const std::string on = tf.transports.empty() ? "UCX's choice" : tf.transports;
      out.Add(kTransfer, row, "ucx_perftest (" + on + ")", "GB/s", tf.ucx_perftest_gbps[i]);
    }
  }
  auto peer = [&](const std::map<size_t, double>& by_size, const std::string& series) {
    if (auto it = by_size.find(mib); it != by_size.end()) {
      out.Add(kTransfer, row, series, "GB/s", it->second);
    }
  };
  peer(f.peers.torch_rpc_push_gbps, "torch rpc push");
  peer(f.peers.gloo_send_gbps, "gloo send");
}

}  // namespace

void AddRpcFigures(const BenchSetup& o, const Figures& f, FiguresJson& out) {
  AddRoundTrips("one hop", "raw TCP", f.raw.one_hop, out);
  AddRoundTrips("one hop", "raw TCP, echo polling", f.raw.one_hop_polling, out);
  AddRoundTrips("one hop", "tfd", f.tfd.empty_one_hop, out);
  AddRoundTrips("one hop", "tfd, a callable", f.tfd.empty_one_hop_callable, out);
  AddRoundTrips("two hops", "raw TCP", f.raw.two_hops, out);
  AddRoundTrips("two hops", "raw TCP, relay and echo polling", f.raw.two_hops_polling, out);
  AddRoundTrips("two hops", "tfd", f.tfd.empty_two_hops, out);
  for (size_t i = 0; i < o.sizes_mib.size(); ++i) AddTransfers(o, f, i, out);
}

}  // namespace tfd::bench
