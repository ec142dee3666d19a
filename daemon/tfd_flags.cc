// The table of tfd's flags (tfd_flags.h). To add a flag: a field in
// TfdConfig, one entry here, and `tfd --help=markdown` into docs/cli.md
// (tests/daemon/tfd_flags_doc_test.sh says when it is stale).
#include "daemon/tfd_flags.h"

#include <array>
#include <cctype>
#include <limits>

#include "common/cluster_spec.h"
#include "common/token_file.h"
#include "daemon/rpc/connection.h"
#include "daemon/tfd_config.h"

namespace tfd {
namespace {

using std::chrono::milliseconds;
constexpr int64_t kIntMax = std::numeric_limits<int>::max();

Status SetCluster(TfdConfig& c, const FlagValue& v) {
  auto spec = ClusterSpec::FromFlag(v.text);
  if (!spec.ok()) return spec.status().WithContext(v.source);
  c.cluster = std::move(spec).value();
  return OkStatus();
}

Status SetHttpListen(TfdConfig& c, const FlagValue& v) {
  const std::string& a = v.text;
  const size_t colon = a.rfind(':');
  const std::string port = colon == std::string::npos ? "" : a.substr(colon + 1);
  if (colon == 0 || port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
    return errors::InvalidArgument(v.source, " '", a,
                                   "' is not HOST:PORT (\"*:9090\", \"127.0.0.1:0\")");
  }
  c.http_listen = a;
  return OkStatus();
}

Status SetAuthTokenFile(TfdConfig& c, const FlagValue& v) {
  auto file = ReadTokenFile(v.text);
  if (!file.ok()) return file.status().WithContext(v.source);
  c.auth_token = std::move(file->token);
  c.auth_token_warning = std::move(file->warning);
  return OkStatus();
}

std::string TransportHint(std::string_view bad) {
  if (bad.find("tcp") != std::string_view::npos || bad.find("sm") != std::string_view::npos) {
    return "UCX transports are no longer chosen (UCX's TCP listener parsed bytes from anyone); "
           "tasks on other hosts are reached over tfd's own streams";
  }
  return "'stream' (streams to every task) or 'shm' (shared memory between tasks of one host, "
         "streams to the others)";
}

constexpr std::array<std::string_view, 5> kLogLevels = {"trace", "debug", "info", "warn", "error"};
constexpr std::array<std::string_view, 3> kLogFormats = {"text", "journal", "json"};
constexpr std::array<std::string_view, 2> kTransports = {"stream", "shm"};

constexpr std::string_view kLockoutRemoved =
    "wrong tokens no longer lock an address out, their answers are delayed instead; see "
    "--failed-login-rate and --failed-login-max-delay";

using G = FlagGroup;

// One entry per flag: name, group, value name, default, help, kind.
const TfdFlag kFlags[] = {
    {"help", G::kProgram, "", "", "print this help; --help=man, --help=markdown and "
     "--help=bash-completion print it as a man page, docs/cli.md's table, a bash completion",
     CommandLineFlag{}, 'h'},
    {"version", G::kProgram, "", "", "print tfd's version", CommandLineFlag{}},
    {"config", G::kProgram, "FILE", "", "a file of NAME = VALUE lines, NAME a flag without its "
     "dashes; flags and TFD_* win over it",
     TextFlag{[](TfdConfig& c, std::string v) { c.config_file = std::move(v); }}},

    {"cluster", G::kTask, "SPEC", "", "cluster spec: JSON or a file holding it; else TF_CONFIG's",
     CheckedFlag{SetCluster}},
    {"job", G::kTask, "NAME", "", "this task's job; else TF_CONFIG's task.type",
     TextFlag{[](TfdConfig& c, std::string v) { c.job = std::move(v); }}},
    {"task", G::kTask, "N", "", "this task's index in its job; else TF_CONFIG's task.index",
     IntFlag{0, kIntMax, [](TfdConfig& c, int64_t v) { c.task = static_cast<int>(v); }}},
    {"listen", G::kTask, "HOST:PORT", "every interface on the port of the task's own address, "
     "or that address itself when it is a loopback one", "address to listen on",
     TextFlag{[](TfdConfig& c, std::string v) { c.listen = std::move(v); }}},
    {"data-dir", G::kTask, "DIR", "", "directory data readers and Save/Restore may use",
     TextFlag{[](TfdConfig& c, std::string v) { c.data_dir = std::move(v); }}},
    {"checkpoint-dir", G::kTask, "DIR", "", "directory for checkpoints, restored from on start",
     TextFlag{[](TfdConfig& c, std::string v) { c.checkpoint_dir = std::move(v); }}},
    {"checkpoint-keep", G::kTask, "N", "5", "checkpoints kept after each save",
     IntFlag{1, kIntMax, [](TfdConfig& c, int64_t v) { c.checkpoint_keep = static_cast<int>(v); },
             {}, true}},

    {"log-level", G::kLogging, "LEVEL", "info", "the least severe log lines written",
     ChoiceFlag{kLogLevels, [](TfdConfig& c, std::string_view v) { c.log_level = v; }}},
    {"log-format", G::kLogging, "FORMAT", "journal when stderr is systemd's journal stream, "
     "else text", "how log lines look",
     ChoiceFlag{kLogFormats,
                [](TfdConfig& c, std::string_view v) { c.log_format = ParseLogFormat(v); }}},
    {"log-device-placement", G::kLogging, "", "off", "log where each node runs",
     SwitchFlag{[](TfdConfig& c) { c.log_device_placement = true; }}},
    {"http-listen", G::kLogging, "HOST:PORT", "none", "serve /metrics (Prometheus) and "
     "/healthz there over plain HTTP",
     CheckedFlag{SetHttpListen}},

    {"threads", G::kExecution, "N", "0", "compute threads, and the most one large kernel splits "
     "over; 0 = one per CPU this process may run on, and on one CPU kernels run where they "
     "became ready",
     IntFlag{0, kIntMax, [](TfdConfig& c, int64_t v) { c.threads = static_cast<int>(v); }, {},
             true}},
    {"step-timeout", G::kExecution, "S", "30", "seconds a step may take",
     SecondsFlag{[](TfdConfig& c, milliseconds v) { c.step_timeout = v; }, true}},
    {"spin-wait-us", G::kExecution, "US", "0", "microseconds the event loop keeps polling after "
     "its last event before it sleeps: saves the wake-ups of a busy task at the price of that "
     "much CPU",
     IntFlag{0, kMaxSpinWait.count(),
             [](TfdConfig& c, int64_t v) { c.spin_wait = std::chrono::microseconds(v); },
             " (microseconds)"}},
    {"drain-grace", G::kExecution, "S", "2", "seconds the steps still running at SIGTERM get to "
     "finish before they are cancelled; a second SIGTERM or SIGINT cancels them at once",
     SecondsFlag{[](TfdConfig& c, milliseconds v) { c.drain_grace = v; }}},
    {"allow-soft-placement", G::kExecution, "", "off", "run a GPU request that cannot be met (no "
     "such GPU, an op without a GPU kernel) on the CPU instead of failing the run",
     SwitchFlag{[](TfdConfig& c) { c.allow_soft_placement = true; }}},
    {"pin-host-buffers", G::kExecution, "N", "1", "1: on a host with a GPU, page-lock the blocks "
     "of the host tensor pool, so copies between them and the device run at the bus's speed; "
     "0: leave them pageable (to measure what that gains)",
     IntFlag{0, 1, [](TfdConfig& c, int64_t v) { c.pin_host_buffers = v != 0; }}},

    // daemon/distributed/server_limits.h says why each default.
    {"auth-token-file", G::kConnections, "FILE", "", "require the token this file holds from "
     "every client and peer",
     CheckedFlag{SetAuthTokenFile}},
    {"max-connections", G::kConnections, "N", "0", "connections at once; 0: the open-file limit "
     "less 256 (tfd raises its soft limit to the hard one at start)",
     IntFlag{0, kIntMax,
             [](TfdConfig& c, int64_t v) { c.server_limits.max_connections = static_cast<int>(v); }}},
    {"max-connections-per-peer", G::kConnections, "N", "64", "connections from one address not "
     "yet logged in",
     IntFlag{1, kIntMax, [](TfdConfig& c, int64_t v) {
               c.server_limits.max_pending_per_peer = static_cast<int>(v); }}},
    {"login-timeout", G::kConnections, "S", "10", "seconds a connection has to log in",
     SecondsFlag{[](TfdConfig& c, milliseconds v) { c.server_limits.login_timeout = v; }}},
    {"failed-login-rate", G::kConnections, "N", "10", "failed logins answered a second, all "
     "addresses together; 0 = no such cap; a right token is never delayed",
     IntFlag{0, kIntMax, [](TfdConfig& c, int64_t v) {
               c.server_limits.failed_login_rate = static_cast<int>(v); }}},
    {"failed-login-max-delay", G::kConnections, "S", "5", "seconds the answer to an address's "
     "repeated failed logins may be delayed",
     SecondsFlag{[](TfdConfig& c, milliseconds v) { c.server_limits.failed_login_max_delay = v; }}},
    {"max-message-bytes", G::kConnections, "BYTES", "--max-tensor-bytes + --max-graph-bytes + 64M",
     "largest Cap'n Proto frame a logged-in connection may send, at most 16G",
     BytesFlag{[](TfdConfig& c, uint64_t v) { c.server_limits.max_message_bytes = v; },
               kMaxMessageWords * 8, "Cap'n Proto's own limit"}},
    {"max-sessions-per-client", G::kConnections, "N", "64", "sessions one connection may hold "
     "at once",
     IntFlag{1, kIntMax, [](TfdConfig& c, int64_t v) {
               c.server_limits.max_sessions_per_client = static_cast<int>(v); }}},
    {"max-registered-graphs", G::kConnections, "N", "4096", "partitions masters may have "
     "registered with this task at once",
     IntFlag{1, kIntMax, [](TfdConfig& c, int64_t v) {
               c.server_limits.max_registered_graphs = static_cast<int>(v); }}},
    {"max-failed-logins", G::kConnections, "N", "", "", RemovedFlag{kLockoutRemoved}},
    {"failed-login-window", G::kConnections, "S", "", "", RemovedFlag{kLockoutRemoved}},

    {"max-graph-tensor-bytes", G::kSizes, "BYTES", "64M", "largest tensor a graph may hold in "
     "an attr (a Const)",
     BytesFlag{[](TfdConfig& c, uint64_t v) { c.size_limits.max_graph_tensor_bytes = v; }}},
    {"max-graph-bytes", G::kSizes, "BYTES", "256M", "all attr tensors of one graph together",
     BytesFlag{[](TfdConfig& c, uint64_t v) { c.size_limits.max_graph_bytes = v; }}},
    {"max-tensor-bytes", G::kSizes, "BYTES", "4G", "largest tensor a kernel may output or a feed "
     "may be",
     BytesFlag{[](TfdConfig& c, uint64_t v) { c.size_limits.max_tensor_bytes = v; }}},
    {"memory-budget", G::kSizes, "BYTES", "3/4 of memory", "bytes kernels' tensors, graphs' "
     "constants and received frames may hold at once",
     BytesFlag{[](TfdConfig& c, uint64_t v) { c.memory_budget = v; }}},

    // docs/cli.md, "The data plane".
    {"data-plane-transports", G::kDataPlane, "KIND", "stream", "how tensors reach other tasks: "
     "stream (a stream to every task) or shm (UCX shared memory with the tasks of this host, "
     "streams to the others; faster on one host, see docs/cli.md)",
     ChoiceFlag{kTransports,
                [](TfdConfig& c, std::string_view v) { c.data_plane_transports = v; },
                TransportHint}},
    {"max-received-bytes", G::kDataPlane, "BYTES", "4G", "bytes of tensors pushed by peers held "
     "at once before pushes wait",
     BytesFlag{[](TfdConfig& c, uint64_t v) { c.max_received_bytes = v; }}},

    // Mutual TLS: docs/operations.md, "TLS". All three or none.
    {"tls-cert", G::kTls, "FILE", "", "this task's certificate (PEM); with --tls-key and --tls-ca",
     TextFlag{[](TfdConfig& c, std::string v) { c.tls_files.cert = std::move(v); }}},
    {"tls-key", G::kTls, "FILE", "", "the private key of --tls-cert (PEM)",
     TextFlag{[](TfdConfig& c, std::string v) { c.tls_files.key = std::move(v); }}},
    {"tls-ca", G::kTls, "FILE", "", "the CA that signs the cluster's and clients' certificates "
     "(PEM)",
     TextFlag{[](TfdConfig& c, std::string v) { c.tls_files.ca = std::move(v); }}},
};

}  // namespace

std::string_view FlagGroupTitle(FlagGroup group) {
  static constexpr std::string_view kTitles[] = {
      "Program", "The task", "Logging and metrics", "Execution", "Connections and logins",
      "Sizes and memory", "The data plane", "Mutual TLS"};
  static_assert(std::size(kTitles) == kNumFlagGroups, "a title for each FlagGroup");
  return kTitles[static_cast<int>(group)];
}

std::span<const TfdFlag> TfdFlags() { return kFlags; }

std::string EnvName(std::string_view flag_name) {
  std::string name = "TFD_";
  for (char ch : flag_name) {
    name += ch == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  }
  return name;
}

bool HasEnvName(const TfdFlag& flag) { return !std::holds_alternative<CommandLineFlag>(flag.kind); }

bool IsListed(const TfdFlag& flag) { return !std::holds_alternative<RemovedFlag>(flag.kind); }

std::span<const std::string_view> FlagChoices(const TfdFlag& flag) {
  if (const auto* choice = std::get_if<ChoiceFlag>(&flag.kind)) return choice->choices;
  return {};
}

}  // namespace tfd
