// What the commands that talk to running tfd tasks share: the connection
// flags and reading the auth token.
//
//   ConnectionFlags flags; AddConnectionFlags(options, flags);
//   TFD_ASSIGN_OR_RETURN(auto client, ConnectToTarget(io, flags));
#pragma once

#include <kj/async-io.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "daemon/client/client.h"

namespace tfd::cli {

struct ConnectionFlags {
  std::string target;      // host:port of the task to talk to; empty: TF_CONFIG's task
  std::string token_file;  // --token-file, else TFD_AUTH_TOKEN_FILE
  TlsFiles tls;            // --tls-cert, --tls-key, --tls-ca, else TFD_TLS_CERT, ...
  double timeout_s = 30;   // --timeout
  std::chrono::milliseconds timeout() const {
    return std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  }
};

// --target (unless !need_target), --token-file, --timeout (its help shows
// flags.timeout_s as the default) and the TLS flags, into `flags`. A
// --target that is not HOST:PORT (CheckTarget) or a --timeout that is not
// a positive number of seconds (CheckTimeout) is a UsageError as they are
// parsed.
void AddConnectionFlags(boost::program_options::options_description& options, ConnectionFlags& flags,
                        bool need_target = true);
// Throws UsageError naming --target unless `target` is HOST:PORT with a
// port from 1 to 65535 (common/cluster_spec.h's CheckTaskAddress).
void CheckTarget(const std::string& target);
// Throws UsageError naming --timeout unless `seconds` is above 0 (and
// below 1e9), as `run` checks its own.
void CheckTimeout(double seconds);
// --tls-cert, --tls-key, --tls-ca (AddConnectionFlags adds them too).
void AddTlsFlags(boost::program_options::options_description& options, TlsFiles& files);
// The client's TLS from the flags, each else TFD_TLS_CERT, TFD_TLS_KEY,
// TFD_TLS_CA (the variables tfd reads); null when none is set.
// INVALID_ARGUMENT naming a missing flag or a file that cannot be used.
StatusOr<std::shared_ptr<Tls>> LoadTls(TlsFiles files);
// The token from --token-file or TFD_AUTH_TOKEN_FILE ("" when neither), by
// the rules of common/token_file.h (INVALID_ARGUMENT for a weak token or a
// file every user may read); its warning, if any, goes to stderr.
StatusOr<std::string> ReadToken(const std::string& token_file);
// `target` when given, else the address TF_CONFIG (its text; null when
// unset) gives its task, as TensorFlow's TFConfigClusterResolver does.
// Throws UsageError saying what is missing when neither gives one.
std::string TargetOrTfConfig(const std::string& target, const char* tf_config);
// Connects to TargetOrTfConfig(flags.target, $TF_CONFIG).
StatusOr<std::unique_ptr<Client>> ConnectToTarget(kj::AsyncIoContext& io, const ConnectionFlags& flags);

}  // namespace tfd::cli
