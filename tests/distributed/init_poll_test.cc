// The init barrier's rounds: the first asks every task; once the named
// variables are found, only the tasks that hold an uninitialized one are
// asked again, so a worker without variables is not asked by every waiting
// worker every round; every task is asked again in discovery rounds that
// back off; the barrier passes once the variables are initialized, and says
// what it still waits for. Without names, only a round that asked everyone
// may pass. One round also makes the report of what is uninitialized.
#include "daemon/distributed/init_poll.h"

#include <catch2/catch.hpp>

namespace tfd {
namespace {

const std::string kPs0 = "/job:ps/replica:0/task:0";
const std::string kPs1 = "/job:ps/replica:0/task:1";
const std::string kWorker0 = "/job:worker/replica:0/task:0";
const std::string kWorker1 = "/job:worker/replica:0/task:1";
const std::vector<std::string> kTasks = {kPs0, kPs1, kWorker0, kWorker1};

using Listing = InitPoll::Listing;
using Next = InitPoll::Next;

// Answers every task `poll` asks from `listings` (a task missing there
// gives no answer); returns whom it asked.
std::vector<std::string> AnswerRound(InitPoll& poll, const std::map<std::string, Listing>& listings) {
  std::vector<std::string> asked = poll.TasksToAsk();
  for (const std::string& task : asked) {
    auto it = listings.find(task);
    poll.Record(task, it == listings.end() ? std::nullopt : std::optional<Listing>(it->second));
  }
  return asked;
}

TEST_CASE("after finding the named variables, only their uninitialized holders are asked") {
  InitPoll poll(kTasks, {"w", "b"});
  std::map<std::string, Listing> now = {
      {kPs0, {{"w", false}}}, {kPs1, {{"b", true}}}, {kWorker0, {}}, {kWorker1, {{"local", false}}}};
  CHECK(AnswerRound(poll, now) == kTasks);  // the first round finds them
  CHECK(poll.EndRound() == Next::kLater);
  CHECK(poll.Waiting() == std::vector<std::string>{"w (uninitialized)"});
  // The next rounds ask ps 0 alone, but for the backed-off discovery rounds.
  std::vector<int> discovery_rounds;
  for (int round = 1; round < 30; ++round) {
    const std::vector<std::string> asked = AnswerRound(poll, now);
    if (asked == kTasks) {
      discovery_rounds.push_back(round);
    } else {
      CHECK(asked == std::vector<std::string>{kPs0});
    }
    REQUIRE(poll.EndRound() == Next::kLater);
  }
  CHECK(discovery_rounds == std::vector<int>{1, 3, 7, 15, 25});
  now[kPs0] = {{"w", true}};
  CHECK(AnswerRound(poll, now) == std::vector<std::string>{kPs0});
  CHECK(poll.EndRound() == Next::kDone);
  CHECK(poll.Waiting().empty());
}

TEST_CASE("a name not found yet is looked for everywhere, and names what is missing") {
  InitPoll poll(kTasks, {"w"});
  std::map<std::string, Listing> now = {{kPs0, {}}, {kPs1, {}}, {kWorker0, {}}};  // worker 1 silent
  AnswerRound(poll, now);
  CHECK(poll.EndRound() == Next::kLater);
  CHECK(poll.Waiting() == std::vector<std::string>{"w (not found)"});
  // Between discovery rounds nobody holds it: nobody is asked.
  AnswerRound(poll, now);  // round 1: discovery
  CHECK(poll.EndRound() == Next::kLater);
  CHECK(poll.TasksToAsk().empty());
  CHECK(poll.EndRound() == Next::kLater);
  // It appears on the silent worker, initialized: the next discovery round sees it.
  now[kWorker1] = {{"w", true}};
  CHECK(AnswerRound(poll, now) == kTasks);
  CHECK(poll.EndRound() == Next::kDone);
}

TEST_CASE("without names, every variable counts and only a round that asked everyone passes") {
  InitPoll poll(kTasks, {});
  std::map<std::string, Listing> now = {
      {kPs0, {{"w", false}}}, {kPs1, {{"b", true}}}, {kWorker0, {}}, {kWorker1, {}}};
  AnswerRound(poll, now);
  CHECK(poll.EndRound() == Next::kLater);
  AnswerRound(poll, now);  // round 1: discovery
  CHECK(poll.EndRound() == Next::kLater);
  CHECK(poll.TasksToAsk() == std::vector<std::string>{kPs0});
  now[kPs0] = {{"w", true}};
  now[kWorker1] = {{"local", false}};  // made meanwhile where nobody looked
  AnswerRound(poll, now);
  CHECK(poll.EndRound() == Next::kNow);  // looks everywhere before passing
  CHECK(AnswerRound(poll, now) == kTasks);
  CHECK(poll.EndRound() == Next::kLater);
  CHECK(poll.Waiting() == std::vector<std::string>{"local (uninitialized)"});
  now[kWorker1] = {{"local", true}};
  CHECK(AnswerRound(poll, now) == std::vector<std::string>{kWorker1});
  CHECK(poll.EndRound() == Next::kNow);
  AnswerRound(poll, now);
  CHECK(poll.EndRound() == Next::kDone);
}

TEST_CASE("without names, a silent task is asked every round and named while it is silent") {
  InitPoll poll(kTasks, {});
  std::map<std::string, Listing> now = {{kPs0, {{"w", true}}}, {kPs1, {}}, {kWorker0, {}}};
  AnswerRound(poll, now);
  CHECK(poll.EndRound() == Next::kLater);
  CHECK(poll.Waiting() == std::vector<std::string>{kWorker1 + " (unreachable)"});
  AnswerRound(poll, now);  // round 1: discovery
  CHECK(poll.EndRound() == Next::kLater);
  CHECK(poll.TasksToAsk() == std::vector<std::string>{kWorker1});
}

TEST_CASE("no variable anywhere keeps the barrier without names waiting") {
  InitPoll poll(kTasks, {});
  AnswerRound(poll, {{kPs0, {}}, {kPs1, {}}, {kWorker0, {}}, {kWorker1, {}}});
  CHECK(poll.EndRound() == Next::kLater);
  CHECK(poll.Waiting() == std::vector<std::string>{"any variable (none exists yet)"});
}

// The report the chief initializes by: one round that asks every task.
TEST_CASE("one round's report: what no task holds initialized, and who did not answer") {
  InitPoll named(kTasks, {"w", "b", "never"});
  AnswerRound(named, {{kPs0, {{"w", false}, {"other", false}}},
                      {kPs1, {{"b", true}}},
                      {kWorker0, {{"w", true}}},
                      {kWorker1, {}}});
  CHECK(named.Unanswered().empty());
  // Initialized on any task counts (a replica's copy), in the order named.
  CHECK(named.Uninitialized() == std::vector<std::string>{"never"});

  InitPoll all(kTasks, {});
  AnswerRound(all, {{kPs0, {{"w", false}}}, {kPs1, {{"b", true}}}, {kWorker1, {{"c", false}}}});
  CHECK(all.Unanswered() == std::vector<std::string>{kWorker0});
  CHECK(all.Uninitialized() == std::vector<std::string>{"c", "w"});

  InitPoll silent(kTasks, {"w"});
  CHECK(silent.Unanswered() == kTasks);  // nobody asked yet: nobody answered
  AnswerRound(silent, {});
  CHECK(silent.Unanswered() == kTasks);
}

}  // namespace
}  // namespace tfd
