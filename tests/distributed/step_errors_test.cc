// Which of its partitions' errors a step reports, and to which task each is
// attributed: decided on the errors' details, so that a rewording of their
// messages changes nothing (and text that only looks like a detail counts
// for nothing).
#include "daemon/distributed/step_errors.h"

#include <catch2/catch.hpp>

namespace tfd {
namespace {

const std::string kPs = "/job:ps/replica:0/task:0";
const std::string kWorker = "/job:worker/replica:0/task:0";

TEST_CASE("a _Recv that only waited yields to the error of the same code that says why") {
  const Status waited = errors::DeadlineExceeded("nothing came for 'w:0'")
                            .WithNode("w/recv", "_Recv")
                            .WithTask(kWorker);
  const Status why = errors::DeadlineExceeded("the queue stayed empty")
                         .WithNode("q", "QueueDequeue")
                         .WithTask(kPs);
  CHECK(MostTelling({waited, why}) == why);
  CHECK(MostTelling({why, waited}) == why);
  // Another code says something else: the first stands.
  const Status other = errors::Internal("boom").WithNode("x", "Add").WithTask(kPs);
  CHECK(MostTelling({waited, other}) == waited);
  CHECK(MostTelling({}).ok());
}

TEST_CASE("the _Recv is known by its details, however its message is worded") {
  // Reworded: no "node '...' (_Recv):" anywhere in the text.
  const Status waited = errors::DeadlineExceeded("the transfer of 'w:0' never came")
                            .WithDetails({.task = kWorker, .node = "w/recv", .op = "_Recv"});
  const Status why = errors::DeadlineExceeded("the queue stayed empty").WithTask(kPs);
  CHECK(MostTelling({waited, why}) == why);
  // Text that names a _Recv node is not a detail: this error failed in a
  // queue op, and it says what it waited on.
  const Status says_recv = errors::DeadlineExceeded("node 'r' (_Recv): the queue stayed empty")
                               .WithDetails({.node = "q", .op = "QueueDequeue"});
  CHECK(MostTelling({says_recv, why}) == says_recv);
}

TEST_CASE("an error is attributed to its task once, whatever its message mentions") {
  const Status plain = errors::Internal("boom");
  const Status on_ps = OnTask(kPs, plain);
  CHECK(on_ps.task() == kPs);
  CHECK(on_ps.message() == kPs + ": boom");
  CHECK(OnTask(kPs, on_ps) == on_ps);  // a peer names itself: not again
  // Naming the task in the text is not being attributed to it.
  const Status mentions = errors::Cancelled("step cancelled; while pushing to ", kPs);
  CHECK(OnTask(kPs, mentions).task() == kPs);
  CHECK(OnTask(kPs, mentions).message() == kPs + ": step cancelled; while pushing to " + kPs);
  // Attributed to another task: this one is named in front.
  CHECK(OnTask(kWorker, on_ps).message() == kWorker + ": " + kPs + ": boom");
  CHECK(OnTask(kWorker, on_ps).task() == kWorker);
}

}  // namespace
}  // namespace tfd
