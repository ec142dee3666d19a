#include "cli/chrome_trace.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "daemon/runtime/partition.h"

namespace tfd::cli {

Json ChromeTrace(const StepStats& stats) {
  Json events = Json::array();
  std::map<std::string, int> pids;
  // Thread ids are per process (task), and a task's devices share threads:
  // each (device, thread) pair gets its name once.
  std::set<std::pair<int, uint64_t>> named;
  // _Send names hold their source node and receiving task: unique in a step.
  std::map<std::string, const NodeExecStats*> sends;
  for (const NodeExecStats& n : stats.nodes) {
    auto [it, added] = pids.emplace(n.device, static_cast<int>(pids.size()));
    const int pid = it->second;
    if (added) {
      events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid},
                        {"args", {{"name", n.device}}}});
    }
    if (!n.thread_name.empty() && named.emplace(pid, n.thread).second) {
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", n.thread},
                        {"args", {{"name", n.thread_name}}}});
    }
    Json args{{"op", n.op}};
    if (!n.label.empty()) args["label"] = n.label;
    events.push_back({{"name", n.node}, {"cat", n.op}, {"ph", "X"}, {"pid", pid},
                      {"tid", n.thread}, {"ts", n.start_micros},
                      {"dur", std::max<int64_t>(0, n.end_micros - n.start_micros)},
                      {"args", std::move(args)}});
    if (n.op == "_Send") sends[n.node] = &n;
  }
  int flow = 0;
  for (const NodeExecStats& recv : stats.nodes) {
    if (recv.op != "_Recv") continue;
    auto it = sends.find(SendNodeFor(recv.node, recv.device));
    if (it == sends.end()) continue;
    const NodeExecStats* send = it->second;
    const std::string name = recv.label.empty() ? "transfer" : recv.label;
    // The arrow leaves the _Send's slice; its head binds to the enclosing
    // slice ("bp": "e"), the _Recv's, which may have started waiting before
    // the send did: the head is never before the tail.
    events.push_back({{"name", name}, {"cat", "transfer"}, {"ph", "s"}, {"id", flow},
                      {"pid", pids[send->device]}, {"tid", send->thread},
                      {"ts", send->start_micros}});
    events.push_back({{"name", name}, {"cat", "transfer"}, {"ph", "f"}, {"bp", "e"}, {"id", flow},
                      {"pid", pids[recv.device]}, {"tid", recv.thread},
                      {"ts", std::max(recv.start_micros, send->start_micros)}});
    ++flow;
  }
  return Json{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

Status WriteChromeTrace(const StepStats& stats, const std::string& path) {
  std::ofstream out(path);
  out << DumpJson(ChromeTrace(stats)) << "\n";
  out.close();
  if (!out) return errors::InvalidArgument("cannot write trace file '", path, "'");
  return OkStatus();
}

}  // namespace tfd::cli
