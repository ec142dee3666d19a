// Asks every task of a cluster spec one question at once, for the commands
// that report on a whole cluster (tfctl status, vars list --cluster). Each
// task is dialled and asked on a thread with an event loop of its own (a
// Client, and a Tls, serve one loop's thread), at most kMaxProbeThreads at
// a time, so tasks that are down or hung cost about one timeout in all, not
// one each.
//
//   ProbeDial dial{token, tls_files, timeout};
//   auto answers = AskEveryTask<TaskStatusInfo>(spec, dial, [&](Client& c) {
//     return c.GetStatus(timeout);
//   });
//   for (const auto& a : answers) ... a.task, a.address, a.answer.ok() ...
//
// Thread-safety: `ask` runs on several threads at once, each with a Client
// of its own; the answers come back on the caller's thread, in the order of
// ClusterSpec::TaskNames.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/cluster_spec.h"
#include "common/status.h"
#include "daemon/client/client.h"
#include "daemon/rpc/tls.h"

namespace tfd::cli {

// Past this many tasks, each thread asks several in turn.
inline constexpr size_t kMaxProbeThreads = 64;

// How each task is dialled: Client::Connect's token and timeout, and the
// TLS files (each else its TFD_TLS_* variable, as cli/connection_flags.h's
// LoadTls reads them), loaded on every probing thread.
struct ProbeDial {
  std::string token;
  TlsFiles tls;
  std::chrono::milliseconds timeout;
};

struct ProbedTask {
  std::string task;     // "/job:J/replica:0/task:T"
  std::string address;  // as the spec gives it
};

// Every task of `spec` with its address, in the order of TaskNames.
std::vector<ProbedTask> TasksToProbe(const ClusterSpec& spec);

// Calls `ask(i, client)` for each of `tasks`, with a Client connected to
// tasks[i] per `dial` or the status of the connection or TLS files that
// failed; returns once every call has.
void ForEachTaskAtOnce(const std::vector<ProbedTask>& tasks, const ProbeDial& dial,
                       const std::function<void(size_t, StatusOr<Client*>)>& ask);

template <typename T>
struct TaskAnswer {
  std::string task, address;
  StatusOr<T> answer;  // what `ask` returned, or why the task was not asked
};

template <typename T>
std::vector<TaskAnswer<T>> AskEveryTask(const ClusterSpec& spec, const ProbeDial& dial,
                                        const std::function<StatusOr<T>(Client&)>& ask) {
  const std::vector<ProbedTask> tasks = TasksToProbe(spec);
  std::vector<std::optional<StatusOr<T>>> got(tasks.size());
  ForEachTaskAtOnce(tasks, dial, [&](size_t i, StatusOr<Client*> client) {
    got[i] = client.ok() ? ask(**client) : StatusOr<T>(client.status());
  });
  std::vector<TaskAnswer<T>> answers;
  answers.reserve(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    answers.push_back({tasks[i].task, tasks[i].address, std::move(*got[i])});
  }
  return answers;
}

}  // namespace tfd::cli
