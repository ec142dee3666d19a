#include "bench/torch_peer.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace tfd::bench {
namespace {

// 'text' for the shell, with embedded quotes escaped.
std::string Quoted(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct PipeCloser {
  void operator()(FILE* f) const { pclose(f); }
};

}  // namespace

StatusOr<double> TorchEagerStepsPerSecond(const std::string& peers_dir) {
  const std::string script = peers_dir + "/run.sh";
  if (access(script.c_str(), X_OK) != 0) {
    return errors::NotFound("no peers script at '", script, "'");
  }
  // run.sh installs torch when it is missing and it runs as root: check
  // first, so that a benchmark never installs anything.
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    return errors::NotFound("python3 cannot import torch (Debian's python3-torch)");
  }
  const std::string command = "PEERS_RESULTS=/dev/null " + Quoted(script) + " mlp 2>/dev/null";
  std::unique_ptr<FILE, PipeCloser> pipe(popen(command.c_str(), "r"));
  if (pipe == nullptr) return errors::Internal("cannot run '", script, "'");
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), pipe.get())) > 0;) out.append(buf, n);
  // One JSON line: {..., "steps_per_s": 1298.3, ...}
  const std::string key = "\"steps_per_s\":";
  const size_t at = out.find(key);
  if (at == std::string::npos) {
    return errors::Internal("'", script, " mlp' printed no steps_per_s: '", out, "'");
  }
  return std::strtod(out.c_str() + at + key.size(), nullptr);
}

}  // namespace tfd::bench
