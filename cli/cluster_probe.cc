#include "cli/cluster_probe.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <system_error>
#include <thread>

#include <kj/async-io.h>

#include "cli/connection_flags.h"

namespace tfd::cli {

std::vector<ProbedTask> TasksToProbe(const ClusterSpec& spec) {
  std::vector<ProbedTask> tasks;
  for (const auto& [job, addresses] : spec.jobs()) {
    for (size_t i = 0; i < addresses.size(); ++i) {
      tasks.push_back({"/job:" + job + "/replica:0/task:" + std::to_string(i), addresses[i]});
    }
  }
  return tasks;
}

void ForEachTaskAtOnce(const std::vector<ProbedTask>& tasks, const ProbeDial& dial,
                       const std::function<void(size_t, StatusOr<Client*>)>& ask) {
  std::atomic<size_t> next{0};
  auto probe = [&] {
    auto io = kj::setupAsyncIo();
    const auto tls = LoadTls(dial.tls);
    for (size_t i = next++; i < tasks.size(); i = next++) {
      if (!tls.ok()) {
        ask(i, tls.status());
        continue;
      }
      auto client = Client::Connect(io, tasks[i].address, dial.token, dial.timeout, *tls);
      ask(i, client.ok() ? StatusOr<Client*>(client->get()) : StatusOr<Client*>(client.status()));
    }
  };
  std::vector<std::thread> threads;
  const size_t n = std::min(tasks.size(), kMaxProbeThreads);
  threads.reserve(n);
  for (size_t t = 0; t < n; ++t) {
    try {
      threads.emplace_back(probe);
    } catch (const std::system_error&) {
      break;  // out of threads: those started ask more tasks each
    }
  }
  if (threads.empty()) probe();
  for (std::thread& t : threads) t.join();
}

}  // namespace tfd::cli
