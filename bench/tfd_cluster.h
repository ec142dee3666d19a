// BenchCluster: real tfd daemons on 127.0.0.1 ports reserved for the
// cluster's life (bench/port_reservation.h), each pinned to a CPU or a set
// of CPUs (and so sizing its compute pools by that set, as tfd does with its
// default --threads 0), for the benchmark. The daemons are stopped (SIGTERM,
// bounded wait, SIGKILL) when the cluster goes away, on every path.
//
//   BenchCluster cluster(tfd_path, {{"ps", {1}}, {"worker", {0, 1}}});
//   BenchCluster big(tfd_path, {{"ps", {TaskCpus({0, 1, 2, 3})}},
//                               {"worker", {TaskCpus({4, 5, 6, 7})}}});
//   TFD_RETURN_IF_ERROR(cluster.Start(io));
//   TFD_ASSIGN_OR_RETURN(auto client, cluster.Connect(io, "ps", 0));
//
// Thread-safety: the benchmark's main thread.
#pragma once

#include <kj/async-io.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_child.h"
#include "bench/port_reservation.h"
#include "common/cluster_spec.h"
#include "daemon/client/client.h"

namespace tfd::bench {

// The CPUs one task may run on; none: every CPU the benchmark may use.
// Implicit from one CPU, -1 meaning none, so that {"ps", {1}} reads as it
// always has.
struct TaskCpus {
  TaskCpus(int cpu) : cpus(cpu < 0 ? std::vector<int>{} : std::vector<int>{cpu}) {}  // NOLINT
  explicit TaskCpus(std::vector<int> set) : cpus(std::move(set)) {}
  std::vector<int> cpus;
};

class BenchCluster {
 public:
  // jobs: name -> the CPUs of each task, in task order. `daemon_flags` go to
  // every task's command line (e.g. --data-dir for a training benchmark).
  BenchCluster(std::string tfd_path,
               const std::vector<std::pair<std::string, std::vector<TaskCpus>>>& jobs,
               std::vector<std::string> daemon_flags = {});
  ~BenchCluster();
  BenchCluster(const BenchCluster&) = delete;
  BenchCluster& operator=(const BenchCluster&) = delete;

  // This process hosts the task (daemon/task_host.h): Start starts no
  // daemon for it, and Pid says -1. Before Start.
  void HostHere(const std::string& job, int task);

  // Starts every task and waits until each accepts connections. On failure
  // the error carries the failing task's log; UNAVAILABLE when the
  // constructor could not reserve a port for every task.
  Status Start(kj::AsyncIoContext& io);
  StatusOr<std::unique_ptr<Client>> Connect(kj::AsyncIoContext& io, const std::string& job,
                                            int task);
  // SIGTERM to every task; the first non-zero exit status is an error.
  Status Stop();

  const ClusterSpec& spec() const { return spec_; }
  // The task's process id; -1 when it is not running.
  pid_t Pid(const std::string& job, int task) const;
  // Where a running daemon is, read from /proc: "CPUs 8-15, 8 compute
  // threads" (its affinity, and the threads of its compute pool, which tfd
  // sizes by that affinity unless given --threads); "not running" else.
  std::string Placement(const std::string& job, int task) const;

 private:
  std::string Log(const std::string& job, int task) const;
  // "127.0.0.1:PORT" on a port reserved in ports_; a failure is kept in
  // ports_status_.
  std::string ReserveAddress();

  std::string tfd_path_;
  std::vector<std::string> daemon_flags_;
  std::vector<PortReservation> ports_;  // the spec's, held while the cluster lives
  Status ports_status_;                 // why a port could not be reserved
  ClusterSpec spec_;
  std::map<std::pair<std::string, int>, std::vector<int>> cpus_;
  std::map<std::pair<std::string, int>, Subprocess> processes_;
  std::string dir_;  // the daemons' logs
};

}  // namespace tfd::bench
