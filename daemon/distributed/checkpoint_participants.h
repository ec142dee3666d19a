// CheckpointParticipants: what a master has learned of each task's part in
// the cluster's checkpoints, so that a task with nothing to save that does
// not answer (stopped, or too slow) does not fail a save or a restore.
//
// A task is *optional* when the last answer this master had from it said it
// has nothing to save: it has no --checkpoint-dir, or the part it wrote
// (or every checkpoint file it lists) holds no tensor. Every other task is
// required: one whose part held something, and one never heard from (this
// master restarted since, or no checkpoint was taken yet), since nothing
// tells that a task that does not answer holds nothing. The fan-out waits
// for a required task until its deadline and fails naming it; an optional
// one it waits for only `kOptionalPatience` and otherwise leaves out, named
// in the answer (TaskCheckpoints::left_out). What a task answers is learned
// again each time, so a task that has since created a variable is required
// from its next answer on; one that does not answer keeps what it was.
//
//   CheckpointParticipants& p = env.checkpoint_participants;
//   p.LearnFromPart(written);         // after each task's write
//   if (p.Optional(task)) ...         // may be left out
//
// Thread-safety: event-loop thread only (it lives in TaskEnv).
#pragma once

#include <kj/time.h>

#include <map>
#include <string>

#include "daemon/checkpoint/checkpoint_info.h"

namespace tfd {

class CheckpointParticipants {
 public:
  // How long the fan-out waits for an optional task's answer, from the
  // start of a phase: a hold may take up to its drain (a second) to answer
  // while a step runs there, so this leaves a second beyond it. No flag: such a task has
  // nothing to save, so a longer wait only delays saves while it is down (left_out names it).
  static constexpr kj::Duration kOptionalPatience = 2 * kj::SECONDS;

  // From a task's answer to the write of its part of a save.
  void LearnFromPart(const TaskCheckpoints& answer);
  // From a task's listing of its checkpoints.
  void LearnFromList(const TaskCheckpoints& answer);
  // From any other answer (a commit, a restore): only whether it has a dir.
  void LearnFromAnswer(const TaskCheckpoints& answer);

  // True when `task` may be left out: its last answer said it has nothing
  // to save.
  bool Optional(const std::string& task) const;

 private:
  void Set(const std::string& task, bool holds_nothing) { holds_nothing_[task] = holds_nothing; }

  std::map<std::string, bool> holds_nothing_;  // by task; absent: never heard from
};

// Whether every file a task lists is verified and holds no tensor (true
// for none at all).
bool EveryFileEmpty(const TaskCheckpoints& list);

}  // namespace tfd
