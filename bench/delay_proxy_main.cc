// delay_proxy: bench/delay_proxy.h as a command, to put a link with
// latency in front of tasks started by hand (docs/scaling.md, "Links with
// latency"). Each PORT:TARGET listens on 127.0.0.1:PORT and relays to
// 127.0.0.1:TARGET, every byte `--delay-us` after it was read, each way;
// it runs until SIGINT or SIGTERM.
//
//   delay_proxy --delay-us 1000 2222:3222 2223:3223
//
// Exit status: 0 after a signal; 1 when a port cannot be opened; 2 for bad
// arguments.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "bench/delay_proxy.h"

namespace {

constexpr const char* kUsage =
    "usage: delay_proxy --delay-us D PORT:TARGET [PORT:TARGET ...]\n"
    "  relays 127.0.0.1:PORT to 127.0.0.1:TARGET, every byte D microseconds after it was\n"
    "  read, in each direction, until SIGINT or SIGTERM\n";

// A port number, or -1.
int Port(const std::string& text) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  return text.empty() || *end != '\0' || v < 1 || v > 65535 ? -1 : static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
  long delay_us = -1;
  std::vector<std::pair<int, int>> routes;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--delay-us" && i + 1 < argc) {
      char* end = nullptr;
      delay_us = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || delay_us < 0) delay_us = -1;
      continue;
    }
    const size_t colon = arg.find(':');
    const int port = Port(arg.substr(0, colon));
    const int target = colon == std::string::npos ? -1 : Port(arg.substr(colon + 1));
    if (port < 0 || target < 0) {
      std::fprintf(stderr, "delay_proxy: error: expected PORT:TARGET, got '%s'\n%s", arg.c_str(),
                   kUsage);
      return 2;
    }
    routes.emplace_back(port, target);
  }
  if (delay_us < 0 || routes.empty()) {
    std::fprintf(stderr, "delay_proxy: error: needs --delay-us D (D >= 0) and a PORT:TARGET\n%s",
                 kUsage);
    return 2;
  }
  // Blocked before the proxy's thread starts, so that it inherits the mask
  // and the signals wait for sigwait here.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  auto proxy = tfd::bench::DelayProxy::Start(std::chrono::microseconds(delay_us));
  if (!proxy.ok()) {
    std::fprintf(stderr, "delay_proxy: error: %s\n", proxy.status().ToString().c_str());
    return 1;
  }
  for (const auto& [port, target] : routes) {
    if (auto opened = (*proxy)->Forward(target, port); !opened.ok()) {
      std::fprintf(stderr, "delay_proxy: error: %s\n", opened.status().ToString().c_str());
      return 1;
    }
    std::printf("127.0.0.1:%d -> 127.0.0.1:%d, %ld us each way\n", port, target, delay_us);
  }
  std::fflush(stdout);
  int signal = 0;
  sigwait(&stop, &signal);
  const auto c = (*proxy)->counters();
  std::printf("%llu connections, %llu bytes relayed\n",
              static_cast<unsigned long long>(c.connections),
              static_cast<unsigned long long>(c.bytes));
  return 0;
}
