// ChildProcess: a program an integration test runs beside the tfd tasks —
// tfctl, mostly — with its stdout and stderr kept in files, so a test can
// check exit statuses and error text, or kill a client mid-step. A child
// still running when its ChildProcess goes away is killed (SIGKILL) and
// reaped, also when the test fails. (The process itself is a Subprocess,
// common/subprocess.h; this adds the files and reading them back.)
//
//   auto run = RunProcess({TfctlBinary(), "status", "--cluster", spec}, 30s);
//   REQUIRE(run.ok());
//   CHECK(run->exit_status == 0);
//
// Thread-safety: one test thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/subprocess.h"

namespace tfd::testing {

class ChildProcess {
 public:
  // Starts argv[0] (looked up in PATH) with the test's environment and
  // stdin from /dev/null.
  static StatusOr<std::unique_ptr<ChildProcess>> Spawn(const std::vector<std::string>& argv);
  ChildProcess(Subprocess process, std::string dir)
      : process_(std::move(process)), dir_(std::move(dir)) {}
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The exit status (128 + N when killed by signal N) once it has exited;
  // DEADLINE_EXCEEDED, and still running, when it has not within `timeout`.
  StatusOr<int> Wait(std::chrono::milliseconds timeout) { return process_.Wait(timeout); }
  // SIGKILL, as a crash or `kill -9` would, and reap.
  void Kill() { process_.Kill(); }
  // Sends `signal` (SIGTERM, SIGINT) without waiting.
  void Signal(int signal) { process_.Signal(signal); }
  bool running() const { return process_.running(); }
  pid_t pid() const { return process_.pid(); }

  std::string Stdout() const;
  std::string Stderr() const;

 private:
  Subprocess process_;  // declared first: gone before the files are removed
  std::string dir_;     // holds the stdout and stderr files
};

struct ProcessResult {
  int exit_status = -1;
  std::string out, err;
};

// Runs argv to completion; a child still running after `timeout` is killed
// and the result is DEADLINE_EXCEEDED with what it printed.
StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout);

// The tfctl binary under test (from the TFCTL environment variable).
std::string TfctlBinary();

// `text` with its line breaks shown as " | ", for test messages: the TAP
// reporter that `meson test` reads takes one line per result.
std::string OneLine(std::string text);

// Resident memory of a process in KiB, from /proc; -1 when it cannot be read.
inline int64_t RssKib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

}  // namespace tfd::testing
