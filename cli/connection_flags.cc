#include "cli/connection_flags.h"

#include <cstdlib>
#include <fstream>

namespace tfd::cli {
namespace po = boost::program_options;

void AddConnectionFlags(po::options_description& options, ConnectionFlags& flags, bool need_target) {
  if (need_target) {
    options.add_options()("target", po::value(&flags.target)->required(),
                          "HOST:PORT of the task to talk to");
  }
  options.add_options()
      ("token-file", po::value(&flags.token_file), "file holding the cluster's auth token")
      ("timeout", po::value(&flags.timeout_s), "seconds to wait (default 30)");
}

StatusOr<std::string> ReadToken(const std::string& token_file) {
  std::string path = token_file;
  if (path.empty()) {
    if (const char* env = std::getenv("TFD_AUTH_TOKEN_FILE")) path = env;
  }
  if (path.empty()) return std::string();
  std::ifstream in(path);
  if (!in) return errors::InvalidArgument("cannot read token file '", path, "'");
  std::string token;
  std::getline(in, token);
  return token;
}

StatusOr<std::unique_ptr<Client>> ConnectToTarget(kj::AsyncIoContext& io, const ConnectionFlags& flags) {
  TFD_ASSIGN_OR_RETURN(std::string token, ReadToken(flags.token_file));
  return Client::Connect(io, flags.target, token, flags.timeout());
}

}  // namespace tfd::cli
