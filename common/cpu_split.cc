#include "common/cpu_split.h"

#include <charconv>

namespace tfd {
namespace {

// The CPUs per task that `per_task` asks for; 0 for "even".
StatusOr<int> ParsePerTask(const std::string& per_task) {
  if (per_task == "even") return 0;
  int n = 0;
  const char* end = per_task.data() + per_task.size();
  const auto [ptr, ec] = std::from_chars(per_task.data(), end, n);
  if (ec != std::errc() || ptr != end || n < 1) {
    return errors::InvalidArgument(
        "--cpus-per-task must be a positive number of CPUs or 'even', not '", per_task, "'");
  }
  return n;
}

}  // namespace

StatusOr<std::vector<std::vector<int>>> SplitCpus(const std::string& per_task,
                                                  const std::vector<int>& allowed, int tasks) {
  if (per_task.empty() || tasks <= 0) return std::vector<std::vector<int>>(std::max(tasks, 0));
  TFD_ASSIGN_OR_RETURN(int n, ParsePerTask(per_task));
  const int64_t have = static_cast<int64_t>(allowed.size());
  if (n == 0) n = static_cast<int>(have / tasks);
  const int64_t need = static_cast<int64_t>(std::max(n, 1)) * tasks;
  if (need > have) {
    return errors::InvalidArgument(
        "--cpus-per-task ", per_task, " needs ", need, " CPUs for the ", tasks,
        tasks == 1 ? " task" : " tasks", " on this host (", std::max(n, 1),
        " each), but this process may use only ", have, " (", FormatCpuList(allowed), ")");
  }
  std::vector<std::vector<int>> sets(tasks);
  for (int k = 0; k < tasks; ++k) {
    sets[k].assign(allowed.begin() + int64_t{k} * n, allowed.begin() + int64_t{k + 1} * n);
  }
  return sets;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace tfd
