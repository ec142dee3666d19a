// The parts of scale_bench that concern links with latency (issue 39,
// `--delay-us`): a DelayProxy (bench/delay_proxy.h) between the tasks of a
// scale cluster, and one async worker's step measured through it: worker 0,
// the master of its session (its client beside it, past the proxy), adds a
// value it holds to a variable on ps 0, as an empty model's async training
// step does (one tensor to the ps, one kernel there, one answer back).
//
//   TFD_ASSIGN_OR_RETURN(auto proxy, RouteThroughProxy(cluster, 1000));
//   ... cluster.Start(...), a Client on cluster.ListenAddress("worker", 0) ...
//   TFD_RETURN_IF_ERROR(MeasureWorkerStep(*client, 200, json, "16 tasks, 1000 us"));
//   PrintProxyCounters(*proxy);
//
// Thread-safety: the benchmark's main thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench/delay_proxy.h"
#include "bench/figures_json.h"
#include "bench/scale_cluster.h"
#include "daemon/client/client.h"

namespace tfd::bench {

// A proxy delaying every byte `delay_us` one way, between every pair of the
// cluster's tasks; call before cluster.Start.
StatusOr<std::unique_ptr<DelayProxy>> RouteThroughProxy(ScaleCluster& cluster, int delay_us);

// Traced fan-out steps on `client`'s open session (its targets `noops`, one
// on every task, worker 0 the master): when the other tasks' partitions
// started after the client's call, the first and the last, and when the
// step ended. With every step message sent at once, the last start follows
// the first by CPU alone, not by a round trip per task.
Status TraceFanOut(Client& client, const std::vector<std::string>& noops, FiguresJson& json,
                   const std::string& row);

// `steps` of worker 0's async step (after a warm-up), on `client`'s
// connection to worker 0, in a session of its own that it closes: p50, p99.
// The client must have no session open.
Status MeasureWorkerStep(Client& client, int steps, FiguresJson& json, const std::string& row);

// The connections the proxy accepted and the bytes it relayed so far: what
// shows that the tasks' control and data-plane connections went through it.
void AddProxyCounters(const DelayProxy& proxy, FiguresJson& json, const std::string& row);

}  // namespace tfd::bench
