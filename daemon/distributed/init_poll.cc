#include "daemon/distributed/init_poll.h"

#include <algorithm>

namespace tfd {

InitPoll::InitPoll(std::vector<std::string> tasks, std::vector<std::string> names)
    : tasks_(std::move(tasks)), names_(std::move(names)) {
  for (const std::string& task : tasks_) last_[task] = std::nullopt;
}

bool InitPoll::WaitsFor(const std::string& name) const {
  return names_.empty() || std::find(names_.begin(), names_.end(), name) != names_.end();
}

bool InitPoll::Pending(const std::string& task) const {
  auto it = last_.find(task);
  // A task that gave no answer may hold a variable nobody has seen; with
  // names, only a name not found yet can be there, which discovery finds.
  if (it == last_.end() || !it->second) return names_.empty();
  for (const auto& [name, initialized] : *it->second) {
    if (!initialized && WaitsFor(name)) return true;
  }
  return false;
}

std::vector<std::string> InitPoll::TasksToAsk() const {
  if (Discovering()) return tasks_;
  std::vector<std::string> ask;
  for (const std::string& task : tasks_) {
    if (Pending(task)) ask.push_back(task);
  }
  return ask;
}

void InitPoll::Record(const std::string& task, std::optional<Listing> answer) {
  last_[task] = std::move(answer);
}

InitPoll::Next InitPoll::EndRound() {
  const bool discovered = Discovering();
  if (discovered) {
    next_discovery_ = round_ + discovery_gap_;
    discovery_gap_ = std::min(2 * discovery_gap_, kMaxDiscoveryGap);
  }
  ++round_;
  if (!Waiting().empty()) return Next::kLater;
  // Without names, a variable made since on a task not asked this round
  // counts too: only a round that asked everyone may pass the barrier.
  if (names_.empty() && !discovered) {
    next_discovery_ = round_;
    return Next::kNow;
  }
  return Next::kDone;
}

std::map<std::string, bool> InitPoll::Seen() const {
  std::map<std::string, bool> seen;
  for (const auto& [task, answer] : last_) {
    if (!answer) continue;
    for (const auto& [name, initialized] : *answer) seen[name] = seen[name] || initialized;
  }
  return seen;
}

std::vector<std::string> InitPoll::Unanswered() const {
  std::vector<std::string> unanswered;
  for (const std::string& task : tasks_) {
    if (!last_.at(task)) unanswered.push_back(task);
  }
  return unanswered;
}

std::vector<std::string> InitPoll::Uninitialized() const {
  const std::map<std::string, bool> seen = Seen();
  std::vector<std::string> out;
  if (names_.empty()) {
    for (const auto& [name, initialized] : seen) {
      if (!initialized) out.push_back(name);
    }
    return out;
  }
  for (const std::string& name : names_) {
    auto it = seen.find(name);
    if (it == seen.end() || !it->second) out.push_back(name);
  }
  return out;
}

std::vector<std::string> InitPoll::Waiting() const {
  const std::map<std::string, bool> seen = Seen();  // whether any task has it initialized
  const std::vector<std::string> unreachable = Unanswered();
  std::vector<std::string> waiting;
  if (names_.empty()) {
    for (const auto& [name, initialized] : seen) {
      if (!initialized) waiting.push_back(name + " (uninitialized)");
    }
    if (seen.empty()) waiting.push_back("any variable (none exists yet)");
    for (const std::string& task : unreachable) waiting.push_back(task + " (unreachable)");
    return waiting;
  }
  for (const std::string& name : names_) {
    auto it = seen.find(name);
    if (it == seen.end()) {
      waiting.push_back(name + " (not found)");
    } else if (!it->second) {
      waiting.push_back(name + " (uninitialized)");
    }
  }
  return waiting;
}

}  // namespace tfd
