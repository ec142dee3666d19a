#include "python/src/session_common.h"

#include <cmath>

#include "common/token_file.h"
#include "daemon/rpc/tls.h"
#include "python/src/convert.h"
#include "python/src/errors.h"

namespace tfd::python {

namespace py = pybind11;

std::chrono::milliseconds Millis(double seconds) {
  if (seconds <= 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(std::max<int64_t>(1, std::llround(seconds * 1000)));
}

Status OwnTensors(std::vector<Tensor>& tensors) {
  for (Tensor& t : tensors) {
    if (!t.initialized()) continue;
    TFD_ASSIGN_OR_RETURN(Tensor host, t.ToHost());
    TFD_ASSIGN_OR_RETURN(t, host.DeepCopy());
  }
  return OkStatus();
}

Status CheckSameGraph(const GraphBuilder* sent, const GraphBuilder& graph) {
  if (sent != nullptr && sent != &graph) {
    return errors::InvalidArgument(
        "this session runs another graph: a tfd.Session runs the graph it was made with (or the "
        "default graph of its first run)");
  }
  return OkStatus();
}

std::vector<std::pair<std::string, Tensor>> TensorFeeds(const PyFeeds& feeds, bool local) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, array] : feeds) {
    const bool alias = !local || !array.writeable();
    auto t = TensorFromArray(array, alias);
    if (!t.ok()) ThrowIfError(t.status().WithContext("feed '" + name + "'"));
    out.emplace_back(name, std::move(t).value());
  }
  return out;
}

py::list ToNumpy(std::vector<Tensor> tensors) {
  py::list out;
  for (Tensor& t : tensors) out.append(ValueOrThrow(TensorToNumpy(std::move(t))));
  return out;
}

StatusOr<Client::RunOutput> OwnSmallFetches(Client::RunOutput out) {
  for (Tensor& t : out.fetches) {
    if (!t.initialized() || t.total_bytes() >= kViewedFetchBytes) continue;
    TFD_ASSIGN_OR_RETURN(Tensor host, t.ToHost());
    TFD_ASSIGN_OR_RETURN(t, host.DeepCopy());
  }
  return out;
}

StatusOr<std::unique_ptr<Client>> ConnectClient(kj::AsyncIoContext& io, const std::string& target,
                                                const std::string& token_file, TlsFiles tls,
                                                std::chrono::milliseconds timeout) {
  std::string path = token_file;
  if (path.empty()) {
    if (const char* env = std::getenv("TFD_AUTH_TOKEN_FILE")) path = env;
  }
  std::string token;
  if (!path.empty()) {
    TFD_ASSIGN_OR_RETURN(TokenFile file, ReadTokenFile(path));
    token = std::move(file.token);
  }
  for (auto [value, env] : {std::pair{&tls.cert, "TFD_TLS_CERT"},
                            std::pair{&tls.key, "TFD_TLS_KEY"}, std::pair{&tls.ca, "TFD_TLS_CA"}}) {
    if (value->empty()) {
      if (const char* v = std::getenv(env)) *value = v;
    }
  }
  std::shared_ptr<Tls> client_tls;
  if (tls.enabled()) {
    TFD_ASSIGN_OR_RETURN(client_tls, Tls::Load(tls));
  }
  return Client::Connect(io, target, token, timeout, client_tls);
}

py::list StatsToPython(const StepStats& stats) {
  py::list out;
  for (const NodeExecStats& n : stats.nodes) {
    out.append(py::make_tuple(n.device, n.node, n.op, n.start_micros, n.end_micros, n.thread,
                              n.thread_name, n.label));
  }
  return out;
}

}  // namespace tfd::python
