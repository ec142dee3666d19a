#include "cli/connection_flags.h"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "cli/args.h"
#include "common/cluster_spec.h"
#include "common/token_file.h"

namespace tfd::cli {
namespace po = boost::program_options;

void CheckTarget(const std::string& target) {
  if (Status s = CheckTaskAddress(target); !s.ok()) throw UsageError("--target: " + s.message());
}

void CheckTimeout(double seconds) {
  // As `run` checks its --timeout: NaN fails both comparisons.
  if (!(seconds > 0 && seconds < 1e9)) {
    throw UsageError("--timeout must be a positive number of seconds");
  }
}

void AddConnectionFlags(po::options_description& options, ConnectionFlags& flags, bool need_target) {
  // The notifiers check values as ParseArgs reads them: a usage error,
  // before anything is dialled.
  if (need_target) {
    options.add_options()("target", po::value(&flags.target)->notifier(CheckTarget),
                          "HOST:PORT of the task to talk to (default: the task TF_CONFIG names)");
  }
  options.add_options()
      ("token-file", po::value(&flags.token_file), "file holding the cluster's auth token")
      ("timeout", po::value(&flags.timeout_s)->notifier(CheckTimeout),
       fmt::format("seconds to wait (default {:g})", flags.timeout_s).c_str());
  AddTlsFlags(options, flags.tls);
}

void AddTlsFlags(po::options_description& options, TlsFiles& files) {
  options.add_options()
      ("tls-cert", po::value(&files.cert), "this client's certificate (PEM), for a cluster with TLS")
      ("tls-key", po::value(&files.key), "the private key of --tls-cert (PEM)")
      ("tls-ca", po::value(&files.ca), "the CA that signs the cluster's certificates (PEM)");
}

StatusOr<std::shared_ptr<Tls>> LoadTls(TlsFiles files) {
  for (auto [value, env] : {std::pair{&files.cert, "TFD_TLS_CERT"},
                            std::pair{&files.key, "TFD_TLS_KEY"}, std::pair{&files.ca, "TFD_TLS_CA"}}) {
    if (value->empty()) {
      if (const char* v = std::getenv(env)) *value = v;
    }
  }
  if (!files.enabled()) return std::shared_ptr<Tls>();
  return Tls::Load(files);
}

StatusOr<std::string> ReadToken(const std::string& token_file) {
  std::string path = token_file;
  if (path.empty()) {
    if (const char* env = std::getenv("TFD_AUTH_TOKEN_FILE")) path = env;
  }
  if (path.empty()) return std::string();
  TFD_ASSIGN_OR_RETURN(TokenFile file, ReadTokenFile(path));
  if (!file.warning.empty()) std::fprintf(stderr, "warning: %s\n", file.warning.c_str());
  return std::move(file.token);
}

std::string TargetOrTfConfig(const std::string& target, const char* tf_config) {
  if (!target.empty()) {
    CheckTarget(target);
    return target;
  }
  if (tf_config == nullptr || *tf_config == '\0') {
    throw UsageError("--target is required (or TF_CONFIG naming this task)");
  }
  auto parsed = ParseTfConfig(tf_config);
  if (!parsed.ok()) {
    throw UsageError("no --target, and TF_CONFIG cannot give one: " + parsed.status().message());
  }
  if (parsed->task_type.empty() || parsed->task_index < 0) {
    throw UsageError("no --target, and TF_CONFIG names no task (its \"task\": {\"type\", "
                     "\"index\"})");
  }
  auto address = parsed->cluster.TaskAddress(parsed->task_type, parsed->task_index);
  if (!address.ok()) {
    throw UsageError("no --target, and TF_CONFIG's task is not in its cluster: " +
                     address.status().message());
  }
  return *address;
}

StatusOr<std::unique_ptr<Client>> ConnectToTarget(kj::AsyncIoContext& io, const ConnectionFlags& flags) {
  const std::string target = TargetOrTfConfig(flags.target, std::getenv("TF_CONFIG"));
  TFD_ASSIGN_OR_RETURN(std::string token, ReadToken(flags.token_file));
  TFD_ASSIGN_OR_RETURN(std::shared_ptr<Tls> tls, LoadTls(flags.tls));
  return Client::Connect(io, target, token, flags.timeout(), std::move(tls));
}

}  // namespace tfd::cli
