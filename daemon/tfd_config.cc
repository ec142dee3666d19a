#include "daemon/tfd_config.h"

#include <boost/program_options.hpp>
#include <cctype>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>
#include <tuple>

#include "common/token_file.h"
#include "daemon/rpc/connection.h"

namespace tfd {
namespace po = boost::program_options;

bool IsLoopbackAddress(const std::string& address) {
  const std::string host = address.substr(0, address.rfind(':'));
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "[::1]" || host == "::1";
}

std::string DefaultListenAddress(const std::string& own_address) {
  if (IsLoopbackAddress(own_address)) return own_address;
  return "*" + own_address.substr(own_address.rfind(':'));
}

StatusOr<TfdConfig> ParseTfdConfig(int argc, const char* const* argv,
                                   const std::function<const char*(const char*)>& getenv) {
  TfdConfig c;
  po::options_description flags("tfd options");
  flags.add_options()
      ("help,h", "print this help")
      ("version", "print tfd's version")
      ("config", po::value<std::string>(), "a file of NAME = VALUE lines, NAME a flag without its dashes; flags and TFD_* win over it (TFD_CONFIG)")
      ("cluster", po::value<std::string>(), "cluster spec: JSON or a file holding it (TFD_CLUSTER)")
      ("job", po::value<std::string>(), "this task's job (TFD_JOB)")
      ("task", po::value<std::string>(), "this task's index in its job (TFD_TASK)")
      ("listen", po::value<std::string>(), "address to listen on; default: every interface on the port of the task's own address, or that address itself when it is a loopback one (TFD_LISTEN)")
      ("http-listen", po::value<std::string>(), "HOST:PORT serving /metrics (Prometheus) and /healthz over plain HTTP; default: none (TFD_HTTP_LISTEN)")
      ("data-dir", po::value<std::string>(), "directory data readers and Save/Restore may use (TFD_DATA_DIR)")
      ("checkpoint-dir", po::value<std::string>(), "directory for checkpoints, restored from on start (TFD_CHECKPOINT_DIR)")
      ("checkpoint-keep", po::value<std::string>(), "checkpoints kept after each save, default 5 (TFD_CHECKPOINT_KEEP)")
      ("log-level", po::value<std::string>(), "trace|debug|info|warn|error (TFD_LOG_LEVEL)")
      ("log-format", po::value<std::string>(), "text|journal|json; default journal when stderr is systemd's journal stream, else text (TFD_LOG_FORMAT)")
      ("log-device-placement", po::bool_switch(), "log where each node runs (TFD_LOG_DEVICE_PLACEMENT=1)")
      ("allow-soft-placement", po::bool_switch(),
       "run a GPU request that cannot be met (no such GPU, an op without a GPU kernel) on the "
       "CPU instead of failing the run (TFD_ALLOW_SOFT_PLACEMENT=1)")
      ("auth-token-file", po::value<std::string>(), "require this token from every client (TFD_AUTH_TOKEN_FILE)")
      ("threads", po::value<std::string>(), "compute threads, and the most one large kernel splits over; 0 = one per CPU this process may run on, and on one CPU kernels run where they became ready (TFD_THREADS)")
      ("step-timeout", po::value<std::string>(), "seconds a step may take, default 30 (TFD_STEP_TIMEOUT)")
      ("spin-wait-us", po::value<std::string>(),
       "microseconds the event loop keeps polling after its last event before it sleeps, "
       "0 to 10000, default 0: saves the wake-ups of a busy task at the price of that much CPU "
       "(TFD_SPIN_WAIT_US)")
      ("drain-grace", po::value<std::string>(),
       "seconds the steps still running at SIGTERM get to finish before they are cancelled, "
       "default 2; a second SIGTERM or SIGINT cancels them at once (TFD_DRAIN_GRACE)")
      // Connection limits: daemon/distributed/server_limits.h says why each default.
      ("max-connections", po::value<std::string>(), "connections at once, default 1024 (TFD_MAX_CONNECTIONS)")
      ("max-connections-per-peer", po::value<std::string>(), "connections from one address not yet logged in, default 64 (TFD_MAX_CONNECTIONS_PER_PEER)")
      ("login-timeout", po::value<std::string>(), "seconds a connection has to log in, default 10 (TFD_LOGIN_TIMEOUT)")
      ("failed-login-rate", po::value<std::string>(), "failed logins answered a second, all addresses together, default 10; 0 = no such cap; a right token is never delayed (TFD_FAILED_LOGIN_RATE)")
      ("failed-login-max-delay", po::value<std::string>(), "seconds the answer to an address's repeated failed logins may be delayed, default 5 (TFD_FAILED_LOGIN_MAX_DELAY)")
      ("max-graph-tensor-bytes", po::value<std::string>(), "largest tensor a graph may hold in an attr (a Const), default 64M (TFD_MAX_GRAPH_TENSOR_BYTES)")
      ("max-graph-bytes", po::value<std::string>(), "all attr tensors of one graph together, default 256M (TFD_MAX_GRAPH_BYTES)")
      ("max-tensor-bytes", po::value<std::string>(), "largest tensor a kernel may output or a feed may be, default 4G (TFD_MAX_TENSOR_BYTES)")
      ("memory-budget", po::value<std::string>(), "bytes kernels' tensors, graphs' constants and received frames may hold at once, default 3/4 of memory (TFD_MEMORY_BUDGET)")
      ("max-message-bytes", po::value<std::string>(), "largest Cap'n Proto frame a logged-in connection may send, at most 16G; default --max-tensor-bytes + --max-graph-bytes + 64M (TFD_MAX_MESSAGE_BYTES)")
      ("max-sessions-per-client", po::value<std::string>(), "sessions one connection may hold at once, default 64 (TFD_MAX_SESSIONS_PER_CLIENT)")
      ("max-registered-graphs", po::value<std::string>(), "partitions masters may have registered with this task at once, default 4096 (TFD_MAX_REGISTERED_GRAPHS)")
      // The data plane: docs/cli.md, "The data plane".
      ("max-received-bytes", po::value<std::string>(), "bytes of tensors pushed by peers held at once before pushes wait, default 4G (TFD_MAX_RECEIVED_BYTES)")
      ("data-plane-transports", po::value<std::string>(), "how tensors reach other tasks: stream (a stream to every task; the default) or shm (UCX shared memory with the tasks of this host, streams to the others; faster on one host, see docs/cli.md) (TFD_DATA_PLANE_TRANSPORTS)")
      // Mutual TLS: docs/operations.md, "TLS".
      ("tls-cert", po::value<std::string>(), "this task's certificate (PEM); with --tls-key and --tls-ca (TFD_TLS_CERT)")
      ("tls-key", po::value<std::string>(), "the private key of --tls-cert (PEM) (TFD_TLS_KEY)")
      ("tls-ca", po::value<std::string>(), "the CA that signs the cluster's and clients' certificates (PEM) (TFD_TLS_CA)");
  std::ostringstream usage;
  usage << "usage: tfd --cluster SPEC --job NAME --task N [options]\n" << flags;
  c.usage = usage.str();
  // Flags tfd no longer has, parsed only to say what replaced them.
  po::options_description removed;
  removed.add_options()
      ("max-failed-logins", po::value<std::string>())
      ("failed-login-window", po::value<std::string>());
  po::options_description known;
  known.add(flags).add(removed);

  // Three sources, read by program_options and consulted in this order:
  // the command line, TFD_* variables (TFD_ and the flag's name in capitals,
  // '-' as '_'), and the --config file.
  po::variables_map vm, env_vm, file_vm;
  try {
    po::store(po::parse_command_line(argc, argv, known), vm);
  } catch (const po::error& e) {
    return errors::InvalidArgument(e.what());
  }
  if (vm.count("help")) {
    c.help = true;
    return c;
  }
  if (vm.count("version")) {
    c.version = true;
    return c;
  }
  auto env_name = [](const std::string& flag) {
    std::string name = "TFD_";
    for (char ch : flag) name += ch == '-' ? '_' : static_cast<char>(std::toupper(ch));
    return name;
  };
  // What po::parse_environment does, through `getenv` (so tests and
  // embedders choose the environment) rather than the process's environ.
  po::parsed_options from_env(&known);
  for (const auto& option : known.options()) {
    const std::string& flag = option->long_name();
    if (flag == "help" || flag == "version") continue;
    if (const char* v = getenv(env_name(flag).c_str()); v != nullptr && *v != '\0') {
      // A switch set in the environment: "1" or "true" turn it on.
      if (flag == "log-device-placement" || flag == "allow-soft-placement") {
        if (std::string(v) != "1" && std::string(v) != "true") continue;
        from_env.options.push_back(po::option(flag, {}));
      } else {
        from_env.options.push_back(po::option(flag, {v}));
      }
    }
  }
  try {
    po::store(from_env, env_vm);
  } catch (const po::error& e) {
    return errors::InvalidArgument("the TFD_* variables: ", e.what());
  }
  std::string config_source;
  if (vm.count("config")) {
    config_source = vm["config"].as<std::string>();
  } else if (env_vm.count("config")) {
    config_source = env_vm["config"].as<std::string>();
  }
  if (!config_source.empty()) {
    std::ifstream in(config_source);
    if (!in) return errors::InvalidArgument("--config: cannot read '", config_source, "'");
    try {
      po::store(po::parse_config_file(in, known), file_vm);
    } catch (const po::error& e) {
      return errors::InvalidArgument("--config '", config_source, "': ", e.what());
    }
  }
  // A value from the flag, else TFD_NAME, else the config file; with where
  // it came from, for error messages.
  auto get = [&](const char* flag,
                 const char* env) -> std::optional<std::pair<std::string, std::string>> {
    if (vm.count(flag) && !vm[flag].defaulted()) {
      return std::make_pair(vm[flag].as<std::string>(), std::string("--") + flag);
    }
    if (env_vm.count(flag)) return std::make_pair(env_vm[flag].as<std::string>(), std::string(env));
    if (file_vm.count(flag) && !file_vm[flag].defaulted()) {
      return std::make_pair(file_vm[flag].as<std::string>(),
                            std::string(flag) + " in '" + config_source + "'");
    }
    return std::nullopt;
  };

  std::optional<TfConfig> tf_config;
  if (const char* tc = getenv("TF_CONFIG"); tc && *tc) {
    auto parsed = ParseTfConfig(tc);
    if (!parsed.ok()) return parsed.status();
    tf_config = std::move(parsed).value();
  }

  if (auto v = get("cluster", "TFD_CLUSTER")) {
    auto spec = ClusterSpec::FromFlag(v->first);
    if (!spec.ok()) return spec.status().WithContext(v->second);
    c.cluster = std::move(spec).value();
  } else if (tf_config && !tf_config->cluster.jobs().empty()) {
    c.cluster = tf_config->cluster;
  } else {
    return errors::InvalidArgument("--cluster is required (or TFD_CLUSTER, or TF_CONFIG's cluster)");
  }
  if (auto v = get("job", "TFD_JOB")) {
    c.job = v->first;
  } else if (tf_config && !tf_config->task_type.empty()) {
    c.job = tf_config->task_type;
  } else {
    return errors::InvalidArgument("--job is required (or TFD_JOB, or TF_CONFIG's task.type)");
  }
  if (auto v = get("task", "TFD_TASK")) {
    try {
      size_t used = 0;
      c.task = std::stoi(v->first, &used);
      if (used != v->first.size() || c.task < 0) throw std::invalid_argument("");
    } catch (...) {
      return errors::InvalidArgument(v->second, " must be a non-negative integer, not '", v->first, "'");
    }
  } else if (tf_config && tf_config->task_index >= 0) {
    c.task = tf_config->task_index;
  } else {
    return errors::InvalidArgument("--task is required (or TFD_TASK, or TF_CONFIG's task.index)");
  }
  if (!c.cluster.HasJob(c.job)) {
    return errors::InvalidArgument("--job '", c.job, "' is not in the cluster spec");
  }
  if (c.task >= c.cluster.NumTasks(c.job)) {
    return errors::InvalidArgument("--task ", c.task, " is out of range: job '", c.job, "' has ",
                                   c.cluster.NumTasks(c.job), " tasks");
  }
  if (auto v = get("listen", "TFD_LISTEN")) {
    c.listen = v->first;
  } else {
    c.listen = DefaultListenAddress(*c.cluster.TaskAddress(c.job, c.task));
  }
  if (auto v = get("http-listen", "TFD_HTTP_LISTEN")) {
    const std::string& a = v->first;
    const size_t colon = a.rfind(':');
    const std::string port = colon == std::string::npos ? "" : a.substr(colon + 1);
    if (colon == 0 || port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
      return errors::InvalidArgument(v->second, " '", a, "' is not HOST:PORT (\"*:9090\", "
                                     "\"127.0.0.1:0\")");
    }
    c.http_listen = a;
  }
  if (auto v = get("data-dir", "TFD_DATA_DIR")) c.data_dir = v->first;
  if (auto v = get("checkpoint-dir", "TFD_CHECKPOINT_DIR")) c.checkpoint_dir = v->first;
  if (auto v = get("log-level", "TFD_LOG_LEVEL")) {
    static const char* kLevels[] = {"trace", "debug", "info", "warn", "error"};
    if (std::find(std::begin(kLevels), std::end(kLevels), v->first) == std::end(kLevels)) {
      return errors::InvalidArgument(v->second, " '", v->first,
                                     "' is not one of trace, debug, info, warn, error");
    }
    c.log_level = v->first;
  }
  if (auto v = get("log-format", "TFD_LOG_FORMAT")) {
    c.log_format = ParseLogFormat(v->first);
    if (!c.log_format) {
      return errors::InvalidArgument(v->second, " '", v->first,
                                     "' is not one of text, journal, json");
    }
  }
  for (const po::variables_map* m : {&vm, &env_vm, &file_vm}) {
    if (m->count("log-device-placement") && (*m)["log-device-placement"].as<bool>()) {
      c.log_device_placement = true;
    }
    if (m->count("allow-soft-placement") && (*m)["allow-soft-placement"].as<bool>()) {
      c.allow_soft_placement = true;
    }
  }
  if (auto v = get("auth-token-file", "TFD_AUTH_TOKEN_FILE")) {
    auto file = ReadTokenFile(v->first);
    if (!file.ok()) return file.status().WithContext(v->second);
    c.auth_token = std::move(file->token);
    c.auth_token_warning = std::move(file->warning);
  }
  if (auto v = get("checkpoint-keep", "TFD_CHECKPOINT_KEEP")) {
    try {
      c.checkpoint_keep = std::stoi(v->first);
      if (c.checkpoint_keep < 1) throw std::invalid_argument("");
    } catch (...) {
      return errors::InvalidArgument(v->second, " must be an integer of at least 1");
    }
  }
  if (auto v = get("threads", "TFD_THREADS")) {
    try {
      c.threads = std::stoi(v->first);
      if (c.threads < 0) throw std::invalid_argument("");
    } catch (...) {
      return errors::InvalidArgument(v->second, " must be a non-negative integer");
    }
  }
  if (auto v = get("step-timeout", "TFD_STEP_TIMEOUT")) {
    try {
      const double s = std::stod(v->first);
      if (!(s > 0)) throw std::invalid_argument("");
      c.step_timeout = std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
    } catch (...) {
      return errors::InvalidArgument(v->second, " must be a positive number of seconds");
    }
  }
  if (auto v = get("spin-wait-us", "TFD_SPIN_WAIT_US")) {
    int64_t us = -1;
    try {
      size_t used = 0;
      us = std::stoll(v->first, &used);
      if (used != v->first.size()) us = -1;
    } catch (...) {
    }
    if (us < 0 || us > kMaxSpinWait.count()) {
      return errors::InvalidArgument(v->second, " must be an integer from 0 to ",
                                     kMaxSpinWait.count(), " (microseconds), not '", v->first, "'");
    }
    c.spin_wait = std::chrono::microseconds(us);
  }
  // Connection limits.
  auto count = [&](const char* flag, const char* env, int minimum, int& out) -> Status {
    if (auto v = get(flag, env)) {
      try {
        size_t used = 0;
        out = std::stoi(v->first, &used);
        if (used != v->first.size() || out < minimum) throw std::invalid_argument("");
      } catch (...) {
        return errors::InvalidArgument(v->second, " must be an integer of at least ", minimum,
                                       ", not '", v->first, "'");
      }
    }
    return OkStatus();
  };
  auto seconds = [&](const char* flag, const char* env, std::chrono::milliseconds& out) -> Status {
    if (auto v = get(flag, env)) {
      try {
        size_t used = 0;
        const double s = std::stod(v->first, &used);
        if (used != v->first.size() || !(s > 0) || s > 1e9) throw std::invalid_argument("");
        out = std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(s * 1000)));
      } catch (...) {
        return errors::InvalidArgument(v->second, " must be a positive number of seconds, not '",
                                       v->first, "'");
      }
    }
    return OkStatus();
  };
  TFD_RETURN_IF_ERROR(count("max-connections", "TFD_MAX_CONNECTIONS", 1, c.server_limits.max_connections));
  TFD_RETURN_IF_ERROR(count("max-connections-per-peer", "TFD_MAX_CONNECTIONS_PER_PEER", 1,
                            c.server_limits.max_pending_per_peer));
  TFD_RETURN_IF_ERROR(seconds("drain-grace", "TFD_DRAIN_GRACE", c.drain_grace));
  TFD_RETURN_IF_ERROR(seconds("login-timeout", "TFD_LOGIN_TIMEOUT", c.server_limits.login_timeout));
  TFD_RETURN_IF_ERROR(count("failed-login-rate", "TFD_FAILED_LOGIN_RATE", 0,
                            c.server_limits.failed_login_rate));
  TFD_RETURN_IF_ERROR(seconds("failed-login-max-delay", "TFD_FAILED_LOGIN_MAX_DELAY",
                              c.server_limits.failed_login_max_delay));
  TFD_RETURN_IF_ERROR(count("max-sessions-per-client", "TFD_MAX_SESSIONS_PER_CLIENT", 1,
                            c.server_limits.max_sessions_per_client));
  TFD_RETURN_IF_ERROR(count("max-registered-graphs", "TFD_MAX_REGISTERED_GRAPHS", 1,
                            c.server_limits.max_registered_graphs));
  for (const char* flag : {"max-failed-logins", "failed-login-window"}) {
    if (auto v = get(flag, env_name(flag).c_str())) {
      return errors::InvalidArgument(
          v->second, " was removed: wrong tokens no longer lock an address out, their answers "
          "are delayed instead; see --failed-login-rate and --failed-login-max-delay");
    }
  }
  // Sizes: a positive number of bytes, with an optional binary suffix.
  for (auto [flag, env, field] : {
           std::tuple{"max-graph-tensor-bytes", "TFD_MAX_GRAPH_TENSOR_BYTES",
                      &c.size_limits.max_graph_tensor_bytes},
           std::tuple{"max-graph-bytes", "TFD_MAX_GRAPH_BYTES", &c.size_limits.max_graph_bytes},
           std::tuple{"max-tensor-bytes", "TFD_MAX_TENSOR_BYTES", &c.size_limits.max_tensor_bytes},
           std::tuple{"memory-budget", "TFD_MEMORY_BUDGET", &c.memory_budget},
           std::tuple{"max-received-bytes", "TFD_MAX_RECEIVED_BYTES", &c.max_received_bytes},
           std::tuple{"max-message-bytes", "TFD_MAX_MESSAGE_BYTES",
                      &c.server_limits.max_message_bytes}}) {
    if (auto v = get(flag, env)) {
      auto bytes = ParseByteSize(v->first);
      if (!bytes) {
        return errors::InvalidArgument(v->second, " must be a positive number of bytes, "
                                       "optionally with K, M, G or T, not '", v->first, "'");
      }
      *field = *bytes;
    }
  }
  // Cap'n Proto reads no larger frame, whatever we allow.
  if (constexpr uint64_t kMost = kMaxMessageWords * 8; c.server_limits.max_message_bytes > kMost) {
    return errors::InvalidArgument("--max-message-bytes must be at most ", FormatBytes(kMost),
                                   " (Cap'n Proto's own limit), not ",
                                   FormatBytes(c.server_limits.max_message_bytes));
  }
  if (auto v = get("data-plane-transports", "TFD_DATA_PLANE_TRANSPORTS")) {
    if (v->first != "stream" && v->first != "shm") {
      return errors::InvalidArgument(
          v->second, " takes 'stream' (streams to every task) or 'shm' (shared memory between "
          "tasks of one host, streams to the others), not '", v->first, "'",
          v->first.find("tcp") != std::string::npos || v->first.find("sm") != std::string::npos
              ? ": UCX transports are no longer chosen (UCX's TCP listener parsed bytes from "
                "anyone); tasks on other hosts are reached over tfd's own streams"
              : "");
    }
    c.data_plane_transports = v->first;
  }
  TlsFiles tls;
  if (auto v = get("tls-cert", "TFD_TLS_CERT")) tls.cert = v->first;
  if (auto v = get("tls-key", "TFD_TLS_KEY")) tls.key = v->first;
  if (auto v = get("tls-ca", "TFD_TLS_CA")) tls.ca = v->first;
  if (tls.enabled()) {
    // Loaded now, so a bad file stops the task before it serves anyone.
    TFD_ASSIGN_OR_RETURN(c.tls, Tls::Load(tls));
    // Peers take who a task is from its certificate: it must be this one's.
    const std::string task = "/job:" + c.job + "/replica:0/task:" + std::to_string(c.task);
    if (c.tls->identity().task != task) {
      return errors::InvalidArgument(
          "--tls-cert '", tls.cert, "' names ", c.tls->identity().Describe(), ", but this is ",
          task, ": each task needs its own certificate, with URI:tfd:task/", c.job, "/", c.task,
          " among its subjectAltNames (docs/operations.md, TLS)");
    }
  }
  return c;
}

std::optional<uint64_t> ParseByteSize(const std::string& text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  size_t used = 0;
  uint64_t n = 0;
  try {
    n = std::stoull(text, &used);
  } catch (...) {
    return std::nullopt;
  }
  // K, M, G or T, alone or followed by B or iB; all binary.
  const std::string_view suffix = std::string_view(text).substr(used);
  int shift = 0;
  if (!suffix.empty()) {
    static constexpr std::string_view kUnits = "KMGT";
    const size_t unit =
        kUnits.find(static_cast<char>(std::toupper(static_cast<unsigned char>(suffix[0]))));
    const std::string_view rest = suffix.substr(1);
    if (unit == std::string_view::npos || !(rest.empty() || rest == "B" || rest == "iB")) {
      return std::nullopt;
    }
    shift = 10 * static_cast<int>(unit + 1);
  }
  if (n == 0 || n > (std::numeric_limits<uint64_t>::max() >> shift)) return std::nullopt;
  return n << shift;
}

StatusOr<TfdConfig> ParseTfdFlags(const std::vector<std::string>& flags,
                                  const std::function<const char*(const char*)>& getenv) {
  std::vector<const char*> argv{"tfd"};
  for (const std::string& flag : flags) argv.push_back(flag.c_str());
  return ParseTfdConfig(static_cast<int>(argv.size()), argv.data(), getenv);
}

}  // namespace tfd
