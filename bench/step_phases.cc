#include "bench/step_phases.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>

#include "bench/stats.h"

namespace tfd::bench {
namespace {

bool OnPs(const NodeExecStats& n) { return n.device.find("/job:ps") != std::string::npos; }

// Control edges cross tasks as _Recv nodes named "_recv/~source"
// (daemon/runtime/partition.cc): they carry no tensor, so they do not mark the
// arrival of a parameter.
bool IsDataRecv(const NodeExecStats& n) {
  return n.op == "_Recv" && n.node.rfind("_recv/~", 0) != 0;
}

double Ms(int64_t micros) { return static_cast<double>(micros) * 1e-3; }

}  // namespace

int64_t WallMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

StepPhases PhasesOf(const StepStats& stats, int64_t client_start, int64_t client_end) {
  StepPhases p;
  p.total = Ms(client_end - client_start);
  if (stats.nodes.empty()) return p;
  int64_t first = std::numeric_limits<int64_t>::max(), last = 0;
  int64_t params_ready = 0, grads_sent = 0;
  for (const NodeExecStats& n : stats.nodes) {
    first = std::min(first, n.start_micros);
    last = std::max(last, n.end_micros);
    const double took = Ms(n.end_micros - n.start_micros);
    if (n.op == "_Recv") {
      if (OnPs(n)) {
        ++(IsDataRecv(n) ? p.ps_recvs : p.ps_control_recvs);
      } else {
        ++(IsDataRecv(n) ? p.worker_recvs : p.worker_control_recvs);
      }
    } else if (n.op != "_Send") {
      (OnPs(n) ? p.ps_kernels : p.worker_kernels) += took;
    }
    if (OnPs(n)) continue;
    if (IsDataRecv(n)) params_ready = std::max(params_ready, n.end_micros);
    if (n.op == "_Send") grads_sent = std::max(grads_sent, n.end_micros);
  }
  if (params_ready == 0) params_ready = first;  // one process: nothing to receive
  if (grads_sent == 0) grads_sent = last;       // ... and nothing to send
  params_ready = std::clamp(params_ready, first, last);
  grads_sent = std::clamp(grads_sent, params_ready, last);
  p.dispatch = Ms(first - client_start);
  p.params_in = Ms(params_ready - first);
  p.compute = Ms(grads_sent - params_ready);
  p.apply = Ms(last - grads_sent);
  p.completion = Ms(client_end - last);
  return p;
}

StepPhases MedianPhases(const std::vector<StepPhases>& samples) {
  auto median = [&](double StepPhases::*field) {
    std::vector<double> v;
    v.reserve(samples.size());
    for (const StepPhases& s : samples) v.push_back(s.*field);
    return Median(v);
  };
  StepPhases m;
  for (double StepPhases::*f :
       {&StepPhases::total, &StepPhases::dispatch, &StepPhases::params_in, &StepPhases::compute,
        &StepPhases::apply, &StepPhases::completion, &StepPhases::worker_kernels,
        &StepPhases::ps_kernels, &StepPhases::worker_recvs, &StepPhases::worker_control_recvs,
        &StepPhases::ps_recvs, &StepPhases::ps_control_recvs}) {
    m.*f = median(f);
  }
  return m;
}

}  // namespace tfd::bench
