// ScaleCluster: N tfd daemons on 127.0.0.1 ports reserved for the cluster's
// life (bench/port_reservation.h), started and stopped the way a user does
// it, with `tfctl start` and `tfctl stop` on one cluster spec, for the scale
// benchmark: what it measures is tfctl's start as well
// as the daemons'. The daemons are found by the pid files tfctl writes in the
// run directory; whatever is still running when the cluster goes away (an
// error path, a failed stop) gets SIGKILL, so no path leaves daemons behind.
//
//   ScaleCluster cluster(tfctl, tfd, /*ps=*/2, /*workers=*/14);
//   TFD_RETURN_IF_ERROR(cluster.Start(60s));        // runs `tfctl start`
//   pid_t chief = cluster.Pid("worker", 0);
//   TFD_RETURN_IF_ERROR(cluster.Stop(60s));         // runs `tfctl stop`
//
// Thread-safety: the benchmark's main thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "bench/port_reservation.h"
#include "common/cluster_spec.h"
#include "common/status.h"

namespace tfd::bench {

class DelayProxy;

// What /proc says about one process now.
struct TaskFootprint {
  double rss_mib = 0;
  // RSS counts the pages of tfd's code and libraries that every task on the
  // host shares; these say what one more task costs: its share of each page
  // (PSS), and the pages it alone holds (private: its heap, stacks, data).
  double pss_mib = 0;
  double private_mib = 0;
  int fds = 0;      // open file descriptors (sockets, pipes, files)
  int sockets = 0;  // of which sockets
  int threads = 0;
};

// Zeros when the process is gone.
TaskFootprint ReadFootprint(pid_t pid);

class ScaleCluster {
 public:
  // `tfd_flags` go to every task (as `--tfd-flag`s of tfctl start).
  ScaleCluster(std::string tfctl, std::string tfd, int ps, int workers,
               std::vector<std::string> tfd_flags = {});
  ~ScaleCluster();
  ScaleCluster(const ScaleCluster&) = delete;
  ScaleCluster& operator=(const ScaleCluster&) = delete;

  // Puts `proxy` between the tasks (bench/delay_proxy.h), before Start: the
  // spec names a port of the proxy for each task, which relays to the port
  // the task listens on (its --listen). Every connection a task makes to
  // another, control and data plane (streams) alike, dials the spec's
  // address, so all of them go through the proxy.
  Status RouteThrough(DelayProxy& proxy);
  // `tfctl start` of every task; fails with tfctl's output when it fails.
  // Routed through a proxy, one `tfctl start --job J --task N` per task, all
  // at once, each with the task's own --listen.
  Status Start(std::chrono::milliseconds timeout);
  // `tfctl stop` of every task.
  Status Stop(std::chrono::milliseconds timeout);

  const ClusterSpec& spec() const { return spec_; }
  // Where the task listens: a client on this host dials it there, past any
  // proxy (as a client beside its master would).
  StatusOr<std::string> ListenAddress(const std::string& job, int task) const;
  // Every task, ps first: {"ps", 0}, ..., {"worker", 0}, ...
  const std::vector<std::pair<std::string, int>>& tasks() const { return tasks_; }
  // From the task's pid file; -1 when there is none.
  pid_t Pid(const std::string& job, int task) const;
  std::vector<pid_t> Pids() const;

 private:
  Status Tfctl(const std::string& command, std::chrono::milliseconds timeout);
  Status StartEachTask(std::chrono::milliseconds timeout);
  // `count` ports reserved in ports_; a failure is kept in ports_status_.
  std::vector<int> ReservePorts(int count);

  std::string tfctl_, tfd_;
  std::vector<std::string> tfd_flags_;
  std::vector<PortReservation> ports_;  // the spec's and listen_'s, held while it lives
  Status ports_status_;                 // why a port could not be reserved
  ClusterSpec spec_;
  std::vector<std::pair<std::string, int>> tasks_;
  ClusterSpec listen_;  // where the tasks listen, when not at spec_'s addresses (a proxy's)
  std::string dir_;  // the run directory: pid files, logs
};

}  // namespace tfd::bench
