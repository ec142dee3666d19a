// What a master knows of each task's part in a cluster checkpoint.
#include "daemon/distributed/checkpoint_participants.h"

namespace tfd {

bool EveryFileEmpty(const TaskCheckpoints& list) {
  for (const CheckpointInfo& c : list.checkpoints) {
    // A file not checked (or damaged) may hold anything.
    if (c.variables > 0 || !c.verified) return false;
  }
  return true;
}

void CheckpointParticipants::LearnFromPart(const TaskCheckpoints& answer) {
  if (!answer.left_out.empty()) return;  // no answer: nothing learned
  Set(answer.task, answer.directory.empty() || EveryFileEmpty(answer));
}

void CheckpointParticipants::LearnFromList(const TaskCheckpoints& answer) {
  if (!answer.left_out.empty()) return;
  if (answer.directory.empty()) return Set(answer.task, true);
  // A listing without files says nothing of what the task holds now.
  if (answer.checkpoints.empty()) return;
  Set(answer.task, EveryFileEmpty(answer));
}

void CheckpointParticipants::LearnFromAnswer(const TaskCheckpoints& answer) {
  if (answer.left_out.empty() && answer.directory.empty()) Set(answer.task, true);
}

bool CheckpointParticipants::Optional(const std::string& task) const {
  auto it = holds_nothing_.find(task);
  return it != holds_nothing_.end() && it->second;
}

}  // namespace tfd
