#include "bench/ucx_perftest.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "bench/bench_child.h"

namespace tfd::bench {
namespace {

std::string Which(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = dir + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// ucx_perftest's closing line: "Final: ITER p50 avg overall BW_AVG BW_OVERALL
// RATE_AVG RATE_OVERALL", bandwidth in MiB/s.
StatusOr<double> FinalBandwidth(const std::string& output_path) {
  std::ifstream in(output_path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Final:", 0) != 0) continue;
    std::stringstream fields(line.substr(6));
    std::vector<double> v;
    double x = 0;
    while (fields >> x) v.push_back(x);
    if (v.size() >= 6) return v[5] * 1048576.0 / 1e9;
  }
  return errors::Unavailable("ucx_perftest gave no bandwidth (see ", output_path, ")");
}

}  // namespace

StatusOr<double> UcxPerftestGbps(size_t bytes, const std::string& tls, int server_cpu,
                                 int client_cpu, int iterations) {
  const std::string perftest = Which("ucx_perftest");
  if (perftest.empty()) return errors::NotFound("ucx_perftest is not installed (Debian ucx-utils)");
  char dir_template[] = "/tmp/tfd-ucx-perftest-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return errors::Internal("mkdtemp failed");
  const std::string dir = dir_template;
  const std::string port = std::to_string(20000 + getpid() % 20000);
  // UCX_TLS for both ends; `env` sets it for the child alone.
  std::vector<std::string> prefix = {"env", "UCX_TLS=" + (tls.empty() ? std::string("all") : tls),
                                     perftest};
  SubprocessOptions server_options = BenchChild(server_cpu);
  server_options.stdout_path = server_options.stderr_path = dir + "/server";
  std::vector<std::string> server_argv = prefix;
  server_argv.insert(server_argv.end(), {"-p", port});
  TFD_ASSIGN_OR_RETURN(Subprocess server, Subprocess::Start(server_argv, server_options));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // its listener comes up
  SubprocessOptions client_options = BenchChild(client_cpu);
  client_options.stdout_path = client_options.stderr_path = dir + "/client";
  std::vector<std::string> client_argv = prefix;
  client_argv.insert(client_argv.end(), {"127.0.0.1", "-p", port, "-t", "ucp_am_bw", "-s",
                                         std::to_string(bytes), "-n", std::to_string(iterations)});
  TFD_ASSIGN_OR_RETURN(Subprocess client, Subprocess::Start(client_argv, client_options));
  auto finished = client.Wait(std::chrono::minutes(1));
  if (!finished.ok()) return errors::Unavailable("ucx_perftest did not finish within a minute");
  server.Stop(std::chrono::seconds(2));
  auto gbps = FinalBandwidth(dir + "/client");
  if (gbps.ok()) {
    for (const char* f : {"/server", "/client"}) unlink((dir + f).c_str());
    rmdir(dir.c_str());
  }
  return gbps;
}

}  // namespace tfd::bench
