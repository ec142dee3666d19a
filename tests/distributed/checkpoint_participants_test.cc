// Which tasks a cluster checkpoint may go on without: only those whose last
// answer said they have nothing to save. A task never heard from, or one
// whose part or files held something, is needed; an answer that left a task
// out teaches nothing; what a task says later wins.
#include "daemon/distributed/checkpoint_participants.h"

#include <catch2/catch.hpp>

namespace tfd {
namespace {

const std::string kPs = "/job:ps/replica:0/task:0";
const std::string kWorker = "/job:worker/replica:0/task:1";

TaskCheckpoints Part(const std::string& task, uint32_t tensors, bool verified = true) {
  TaskCheckpoints t;
  t.task = task;
  t.directory = "/ckpt/" + task;
  CheckpointInfo c;
  c.variables = tensors;
  c.verified = verified;
  t.checkpoints.push_back(c);
  return t;
}

TEST_CASE("a task never heard from is needed") {
  CheckpointParticipants p;
  CHECK_FALSE(p.Optional(kPs));
  CHECK_FALSE(p.Optional(kWorker));
}

TEST_CASE("an empty part or no directory makes a task optional; a full part needed") {
  CheckpointParticipants p;
  p.LearnFromPart(Part(kWorker, 0));
  p.LearnFromPart(Part(kPs, 3));
  CHECK(p.Optional(kWorker));
  CHECK_FALSE(p.Optional(kPs));
  TaskCheckpoints no_dir;
  no_dir.task = kPs;
  p.LearnFromAnswer(no_dir);
  CHECK(p.Optional(kPs));
}

TEST_CASE("a task that now holds something is needed again") {
  CheckpointParticipants p;
  p.LearnFromPart(Part(kWorker, 0));
  p.LearnFromPart(Part(kWorker, 1));  // it read a dataset since
  CHECK_FALSE(p.Optional(kWorker));
}

TEST_CASE("an answer that left a task out teaches nothing") {
  CheckpointParticipants p;
  TaskCheckpoints left;
  left.task = kPs;
  left.left_out = "holdSteps did not finish before the deadline";
  p.LearnFromPart(left);
  p.LearnFromList(left);
  p.LearnFromAnswer(left);
  CHECK_FALSE(p.Optional(kPs));
}

TEST_CASE("a listing: empty verified files make a task optional, unchecked ones do not") {
  CheckpointParticipants p;
  p.LearnFromList(Part(kWorker, 0));
  CHECK(p.Optional(kWorker));
  p.LearnFromList(Part(kWorker, 0, /*verified=*/false));
  CHECK_FALSE(p.Optional(kWorker));
  TaskCheckpoints none = Part(kPs, 0);
  none.checkpoints.clear();  // no file says nothing of what it holds
  p.LearnFromList(none);
  CHECK_FALSE(p.Optional(kPs));
}

}  // namespace
}  // namespace tfd
