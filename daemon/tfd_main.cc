// tfd: one task of a cluster. Serves its master (sessions, barriers) and
// worker (partitions, transfers, variables) over Cap'n Proto RPC until
// SIGTERM or SIGINT.
//
// Exit status: 0 after a clean stop; 1 when the task cannot run (the
// address is taken, ...); 2 for bad flags or configuration.
#include <kj/async-io.h>
#include <kj/async-unix.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include <spdlog/spdlog.h>

#include "common/heap_policy.h"
#include "common/thread_name.h"
#include "daemon/distributed/open_file_limit.h"
#include "daemon/systemd_notify.h"
#include "daemon/rpc/spin_wait.h"
#include "daemon/task_host.h"
#include "daemon/tfd_config.h"
#include "daemon/tfd_flags_doc.h"
#include "tfd_version.h"

namespace tfd {
namespace {

// What a task's start allocates on the heap before it listens (the op
// registry's definitions, 0.5 MiB), with some room: faulted in at once.
constexpr size_t kStartHeap = 640 << 10;

int Serve(const TfdConfig& config) {
  KeepHeapForSteps();
  (void)FaultInHeap(kStartHeap);  // an optimisation: without it, the pages fault in one by one
  // Signals must be captured before any thread starts, or a thread without
  // the mask could take them.
  kj::UnixEventPort::captureSignal(SIGTERM);
  kj::UnixEventPort::captureSignal(SIGINT);
  auto io = kj::setupAsyncIo();
  NameThisThread("event loop");

  auto logger = TaskHost::StderrLogger(config);
  // Before the server counts its connections against it.
  if (std::string raised = RaiseOpenFileLimit(); !raised.empty()) logger->debug("{}", raised);

  // systemd's Type=notify and watchdog (daemon/systemd_notify.h); nothing
  // without $NOTIFY_SOCKET. A bad one is logged: systemd will say the rest.
  std::unique_ptr<SystemdNotifier> systemd;
  if (auto n = SystemdNotifier::FromEnvironment([](const char* v) { return std::getenv(v); });
      n.ok()) {
    systemd = std::move(n).value();
  } else {
    logger->error("cannot notify systemd: {}", n.status().ToString());
  }
  auto notify = [&](const std::string& state) {
    if (!systemd) return;
    if (Status s = systemd->Notify(state); !s.ok()) logger->warn("{}", s.ToString());
  };

  auto host = TaskHost::Start(config, io, logger);
  if (!host.ok()) {
    logger->error("{}", host.status().ToString());
    return 1;
  }
  notify("READY=1\nSTATUS=serving " + (*host)->env().task + " on " + config.listen);
  kj::Promise<void> keep_alive =
      systemd ? systemd->KeepAlive(io.provider->getTimer(), logger) : kj::NEVER_DONE;

  auto stop = io.unixEventPort.onSignal(SIGTERM).exclusiveJoin(io.unixEventPort.onSignal(SIGINT));
  const siginfo_t info = WaitSpinning(stop, io, config.spin_wait);
  logger->info("received {}: stopping", info.si_signo == SIGTERM ? "SIGTERM" : "SIGINT");
  notify("STOPPING=1\nSTATUS=draining");
  // A second signal ends the grace: what still runs is cancelled now.
  auto again = io.unixEventPort.onSignal(SIGTERM)
                   .exclusiveJoin(io.unixEventPort.onSignal(SIGINT))
                   .then([&logger](siginfo_t again) {
                     logger->warn("received {} again: cancelling the running steps now",
                                  again.si_signo == SIGTERM ? "SIGTERM" : "SIGINT");
                   });
  (*host)->Drain(kj::mv(again));
  host->reset();
  logger->info("stopped");
  return 0;
}

}  // namespace
}  // namespace tfd

int main(int argc, char** argv) {
  auto config = tfd::ParseTfdConfig(argc, argv, [](const char* n) { return std::getenv(n); });
  if (!config.ok()) {
    std::fprintf(stderr, "tfd: error: %s\n", config.status().ToString().c_str());
    return 2;
  }
  if (config->help) {
    const std::string& format = config->help_format;
    const std::string text = format == "man"               ? tfd::TfdManPage(TFD_VERSION)
                             : format == "markdown"        ? tfd::TfdFlagsMarkdown()
                             : format == "bash-completion" ? tfd::TfdBashCompletion()
                                                           : config->usage;
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  if (config->version) {
    std::printf("tfd %s\n", TFD_VERSION);
    return 0;
  }
  return tfd::Serve(*config);
}
