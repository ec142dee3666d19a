// LocalCluster: real tfd processes on free loopback ports, for integration
// tests. Every process it starts is stopped (SIGTERM, then SIGKILL after a
// bound) when the fixture goes away, also when a test fails.
//
//   LocalCluster cluster({{"ps", 1}, {"worker", 2}});
//   REQUIRE(cluster.StartAll().ok());
//   auto client = cluster.Connect("worker", 0);
//
// Thread-safety: one test thread.
#pragma once

#include <kj/async-io.h>
#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/cluster_spec.h"
#include "common/subprocess.h"
#include "daemon/client/client.h"
#include "bench/port_reservation.h"

namespace tfd::testing {

class LocalCluster {
 public:
  // jobs: name -> number of tasks. Each task's port on 127.0.0.1 is reserved
  // for the fixture's life (bench/port_reservation.h).
  explicit LocalCluster(const std::vector<std::pair<std::string, int>>& jobs,
                        std::vector<std::string> extra_flags = {});
  ~LocalCluster();

  const ClusterSpec& spec() const { return spec_; }
  std::string Address(const std::string& job, int task) const;
  // Starts one task and waits until it accepts connections.
  Status Start(const std::string& job, int task, std::vector<std::string> flags = {});
  // Starts one task without waiting (safe from another thread while the
  // test thread waits on the cluster).
  Status Spawn(const std::string& job, int task, std::vector<std::string> flags = {});
  Status StartAll();
  // SIGKILL (crash) or SIGTERM (clean stop, returns the exit status).
  void Kill(const std::string& job, int task);
  StatusOr<int> Stop(const std::string& job, int task, std::chrono::milliseconds timeout);
  // The exit status of a task that was told to stop some other way (a
  // signal the test sent); DEADLINE_EXCEEDED, and still running, when it
  // has not exited within `timeout`.
  StatusOr<int> Wait(const std::string& job, int task, std::chrono::milliseconds timeout);
  // The task's log so far (stderr of tfd).
  std::string Log(const std::string& job, int task) const;
  // The task's process id; -1 when it is not running.
  pid_t Pid(const std::string& job, int task) const;
  // Tasks started from now on run with at most `n` open file descriptors
  // (RLIMIT_NOFILE, set in the child before tfd is executed); 0 inherits
  // the test's limit.
  void LimitOpenFiles(int n) { open_files_ = n; }
  // Tasks started from now on run pinned to `cpu` (sched_setaffinity in the
  // child before tfd is executed); -1, the default, leaves them unpinned.
  void PinTo(int cpu) { cpu_ = cpu; }

  kj::AsyncIoContext& io() { return io_; }
  StatusOr<std::unique_ptr<Client>> Connect(const std::string& job, int task,
                                            std::chrono::milliseconds timeout = std::chrono::seconds(10));

 private:
  struct Process {
    Subprocess process;
    std::string log_path;
  };
  kj::AsyncIoContext io_;
  std::vector<bench::PortReservation> ports_;  // the spec's, held while the fixture lives
  ClusterSpec spec_;
  std::vector<std::string> extra_flags_;
  std::string dir_;  // temporary directory for logs
  int open_files_ = 0;
  int cpu_ = -1;
  std::map<std::pair<std::string, int>, Process> processes_;
};

// The tfd binary under test (from the TFD environment variable).
std::string TfdBinary();

}  // namespace tfd::testing
