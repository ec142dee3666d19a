// InitPoll: whom one waitInitialized call asks in each round, and what the
// answers say.
//
// The barrier used to ask every task of the cluster every 100 ms, so with
// W workers waiting every task answered 10 W calls a second, workers that
// hold no variable included: O(N²) across the cluster. Now a round asks
//   - every task in a *discovery* round: the first, then ones spaced 1, 2,
//     4, 8 and at most kMaxDiscoveryGap rounds apart, which find where the
//     named variables (or, with no names, any variable) live;
//   - in the rounds between, only the tasks still holding something to wait
//     for: a named (or, with no names, any) variable they last reported
//     uninitialized, or, with no names, no answer (a task unreachable).
// A task that holds none of the variables waited for is asked only in
// discovery rounds, and not at all once every name has been found. Without
// names the barrier means "every variable of the cluster", so it passes
// only on a discovery round's answers: a round of the pending tasks alone
// that finds them initialized is followed at once by a discovery round.
//
//   InitPoll poll(cluster.TaskNames(), names);
//   for (;;) {
//     for (task : poll.TasksToAsk()) poll.Record(task, answer or nullopt);
//     switch (poll.EndRound()) { kDone: pass; kNow: ask again; kLater: wait 100 ms }
//     // poll.Waiting() names what is missing, for the deadline's error
//   }
//
// Thread-safety: none; one barrier call owns one InitPoll on the event loop.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tfd {

class InitPoll {
 public:
  // Rounds between discovery rounds, at most (10 rounds of 100 ms: 1 s).
  static constexpr int kMaxDiscoveryGap = 10;
  // What a task said: each variable's name and whether it is initialized.
  using Listing = std::vector<std::pair<std::string, bool>>;
  enum class Next { kDone, kNow, kLater };

  InitPoll(std::vector<std::string> tasks, std::vector<std::string> names);

  // The tasks this round asks.
  std::vector<std::string> TasksToAsk() const;
  // `task`'s answer this round; nullopt when it gave none.
  void Record(const std::string& task, std::optional<Listing> answer);
  // Ends the round: kDone when nothing is missing, kNow for a discovery
  // round that must follow at once, kLater to ask again after a pause.
  Next EndRound();
  // What is still missing, as "NAME (uninitialized)", "NAME (not found)",
  // "TASK (unreachable)" or "any variable (none exists yet)"; empty when
  // the barrier may pass.
  std::vector<std::string> Waiting() const;
  // After a round that asked every task (the first), for a report rather
  // than a wait: the tasks that gave no answer, and the names waited for
  // (with no names, every variable seen) that no task holds initialized,
  // whether uninitialized or not found.
  std::vector<std::string> Unanswered() const;
  std::vector<std::string> Uninitialized() const;

 private:
  bool Discovering() const { return round_ == next_discovery_; }
  // Whether the barrier waits for `name`.
  bool WaitsFor(const std::string& name) const;
  // Whether `task`'s last answer leaves something to wait for there.
  bool Pending(const std::string& task) const;
  // Each variable any task listed, and whether any holds it initialized.
  std::map<std::string, bool> Seen() const;

  std::vector<std::string> tasks_;
  std::vector<std::string> names_;  // empty: every variable
  std::map<std::string, std::optional<Listing>> last_;  // per task; nullopt: no answer
  int round_ = 0;
  int next_discovery_ = 0;
  int discovery_gap_ = 1;
};

}  // namespace tfd
