// `tfctl health`: whether one task is up and serving, for probes — a
// container's HEALTHCHECK, a Kubernetes exec probe, a script. It connects
// and logs in as every client does (the token and TLS from the same flags
// and variables as the other commands), asks the task's worker for its
// status, and exits 0 when the task answers within --timeout, 1 with
// `error: CODE: message` saying why when it does not. It needs no HTTP
// port: tfd serves /healthz only with --http-listen.
#include <kj/async-io.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/connection_flags.h"
#include "cli/output.h"
#include "daemon/tfd_config.h"

namespace tfd::cli {
namespace {
namespace po = boost::program_options;

// The probe answers within seconds or not at all: a kubelet's exec probe
// gives it 1 s by default, Docker's HEALTHCHECK 30 s.
constexpr double kDefaultTimeoutS = 5;

// "HOST:PORT" with a wildcard host ("*", "0.0.0.0", "::", empty) made the
// loopback address of its family: where a probe on the same host reaches a
// task that listens on every address.
std::string DialableAddress(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return listen;
  const std::string host = listen.substr(0, colon), port = listen.substr(colon + 1);
  if (host.empty() || host == "*" || host == "0.0.0.0") return "127.0.0.1:" + port;
  if (host == "::" || host == "[::]") return "[::1]:" + port;
  return listen;
}

// --self: the address this environment's tfd listens on, from what tfd
// itself reads when it has no flags (TFD_LISTEN, else the task that
// TFD_CLUSTER/TFD_JOB/TFD_TASK, TF_CONFIG or TFD_CONFIG's file make it).
StatusOr<std::string> SelfAddress() {
  if (const char* listen = std::getenv("TFD_LISTEN"); listen != nullptr && *listen != '\0') {
    return DialableAddress(listen);
  }
  auto config = ParseTfdFlags({}, [](const char* name) { return std::getenv(name); });
  if (!config.ok()) {
    return errors::InvalidArgument("--self: cannot tell where this host's tfd listens from its "
                                   "variables (TFD_LISTEN, TFD_CLUSTER with TFD_JOB and TFD_TASK, "
                                   "or TF_CONFIG): ", config.status().message());
  }
  return DialableAddress(config->listen);
}

}  // namespace

int HealthCommand(const Args& args) {
  ConnectionFlags remote;
  remote.timeout_s = kDefaultTimeoutS;
  bool self = false;
  std::string output = "human";
  po::options_description options;
  options.add_options()
      ("self", po::bool_switch(&self), "the task this host's tfd serves, by the variables tfd "
                                       "reads (TFD_LISTEN, TFD_CLUSTER/TFD_JOB/TFD_TASK, "
                                       "TF_CONFIG); a wildcard address as loopback")
      ("output", po::value(&output), "human|json");
  AddConnectionFlags(options, remote);
  ParseArgs(args, options);
  if (self && !remote.target.empty()) throw UsageError("give --target or --self, not both");
  const OutputFormat format = ParseOutputFormat(output, false);
  if (!(remote.timeout_s > 0)) throw UsageError("--timeout must be a positive number of seconds");
  if (self) {
    auto address = SelfAddress();
    if (!address.ok()) return ReportError(address.status(), format);
    remote.target = *address;
  }
  const std::string target = TargetOrTfConfig(remote.target, std::getenv("TF_CONFIG"));
  auto io = kj::setupAsyncIo();
  auto client = ConnectToTarget(io, remote);
  StatusOr<TaskStatusInfo> status =
      client.ok() ? (*client)->GetStatus(remote.timeout()) : StatusOr<TaskStatusInfo>(client.status());
  if (!status.ok()) return ReportError(status.status().WithContext("health of " + target), format);
  if (format == OutputFormat::kJson) {
    std::cout << DumpJson(Json{{"healthy", true}, {"task", status->task}, {"address", target},
                               {"uptime_seconds", status->uptime_seconds}, {"pid", status->pid}})
              << std::endl;
  } else {
    std::printf("ok: %s serving at %s, up %.0f s\n", status->task.c_str(), target.c_str(),
                status->uptime_seconds);
  }
  return 0;
}

}  // namespace tfd::cli
