#include "bench/peer_figures.h"

#include <fstream>
#include <nlohmann/json.hpp>

namespace tfd::bench {

StatusOr<PeerTransfers> ReadPeerTransfers(const std::string& path) {
  std::ifstream in(path);
  if (!in) return errors::NotFound("cannot read the peers' figures at '", path, "'");
  PeerTransfers out;
  out.source = path;
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("test") || !j.contains("size_mb") ||
        !j.contains("GBps_median")) {
      continue;
    }
    const std::string test = j["test"].is_string() ? j["test"].get<std::string>() : "";
    if (!j["size_mb"].is_number() || !j["GBps_median"].is_number()) continue;
    const auto mib = j["size_mb"].get<size_t>();
    const double gbps = j["GBps_median"].get<double>();
    if (test == "rpc_tensor_push") out.torch_rpc_push_gbps[mib] = gbps;
    if (test == "gloo_send_stream") out.gloo_send_gbps[mib] = gbps;
  }
  return out;
}

}  // namespace tfd::bench
