// The sync round: a replica waits for the update its own gradients joined,
// never another's turn; the chief's advance, reset and release; waits that
// end with the step's cancellation; sharing by name.
#include "kernels/data_flow/sync_round.h"

#include <limits>

#include "tests/kernels/data_flow/queue_test_util.h"

namespace tfd::testing {
namespace {

using kernels::SyncRound;

std::shared_ptr<ResourceBase> NewRound(QueueTestEnv& e, const std::string& name = "round") {
  auto out = e.Run("SyncRound", {{"shared_name", name}}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE((*out)[0].is_ref());
  return (*out)[0].ref;
}

SyncRound& Round(const std::shared_ptr<ResourceBase>& r) {
  auto* round = dynamic_cast<SyncRound*>(r.get());
  REQUIRE(round != nullptr);
  return *round;
}

Value Step(int64_t s) { return Val(Tensor::Scalar<int64_t>(s)); }

// A replica's wait, started: it may end at once or park.
std::unique_ptr<AsyncCall> StartWait(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& round,
                                     int64_t pushed_at, CancellationManager* cm = nullptr) {
  return e.Start("SyncRoundWait", {}, {Ref(round), Step(pushed_at)}, cm);
}

Status Set(QueueTestEnv& e, const std::string& op, const std::shared_ptr<ResourceBase>& round,
           int64_t step) {
  return e.Run(op, {}, {Ref(round), Step(step)}).status();
}

Status Release(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& round, int64_t step,
               int64_t passes) {
  return e.Run("SyncRoundRelease", {}, {Ref(round), Step(step), Step(passes)}).status();
}

int64_t Ended(const std::unique_ptr<AsyncCall>& w) {
  REQUIRE(w->finished());
  INFO(w->status().ToString());
  REQUIRE(w->status().ok());
  return w->output(0).scalar<int64_t>();
}

// A gradient accumulator of scalars and one replica's push into it.
std::shared_ptr<ResourceBase> NewAccumulator(QueueTestEnv& e) {
  auto out = e.Run("ConditionalAccumulator",
                   {{"dtype", DType::kFloat32},
                    {"shape", PartialShape(std::vector<int64_t>{})},
                    {"shared_name", std::string("grads")}},
                   {});
  REQUIRE(out.ok());
  return (*out)[0].ref;
}

void Push(QueueTestEnv& e, const std::shared_ptr<ResourceBase>& acc, int64_t step,
          const std::string& replica) {
  auto out = e.Run("AccumulatorApplyGradient", {{"dtype", DType::kFloat32}},
                   {Ref(acc), Step(step), Val(Tensor::Scalar(1.0f))}, nullptr, replica);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
}

TEST_CASE("a replica waits for the update its gradients joined") {
  QueueTestEnv e;
  auto round = NewRound(e);
  REQUIRE(Set(e, "SyncRoundReset", round, 4).ok());

  SECTION("parked until an advance past its step, which it returns") {
    auto at4 = StartWait(e, round, 4);
    auto at5 = StartWait(e, round, 5);  // restored ahead: waits for step 6
    CHECK_FALSE(at4->finished());
    CHECK(Round(round).num_waiting() == 2);
    REQUIRE(Set(e, "SyncRoundAdvance", round, 5).ok());
    CHECK(Ended(at4) == 5);
    CHECK_FALSE(at5->finished());
    REQUIRE(Set(e, "SyncRoundAdvance", round, 6).ok());
    CHECK(Ended(at5) == 6);
    CHECK(Round(round).num_waiting() == 0);
  }
  SECTION(
      "at once when its update is applied already, or its gradients were "
      "stale") {
    REQUIRE(Set(e, "SyncRoundAdvance", round, 5).ok());
    auto at4 = StartWait(e, round, 4);
    auto at2 = StartWait(e, round, 2);
    CHECK(Ended(at4) == 5);
    CHECK(Ended(at2) == 5);
  }
  SECTION("a reset ends every wait, also those ahead of it") {
    auto at4 = StartWait(e, round, 4);
    auto at9 = StartWait(e, round, 9);
    REQUIRE(Set(e, "SyncRoundReset", round, 3).ok());  // restored from an older checkpoint
    CHECK(Ended(at4) == 3);
    CHECK(Ended(at9) == 3);
    // Then the round runs from the restored step.
    auto at3 = StartWait(e, round, 3);
    CHECK_FALSE(at3->finished());
    REQUIRE(Set(e, "SyncRoundReset", round, 3).ok());  // the chief restarted once more
    CHECK(Ended(at3) == 3);
  }
}

// Replays the order of events that held 16 sync replicas until the step
// deadline when they waited on a queue of tokens: replica A's update-1
// push is in and A waits again before B, whose update-0 push is in too, has
// started its wait. A token fitted either; the round does not.
TEST_CASE("a fast replica cannot take a slow one's turn") {
  QueueTestEnv e;
  auto round = NewRound(e);
  auto acc = NewAccumulator(e);
  const std::string chief = "/job:worker/replica:0/task:0";
  const std::string a = "/job:worker/replica:0/task:1";
  const std::string b = "/job:worker/replica:0/task:2";
  REQUIRE(Set(e, "SyncRoundReset", round, 0).ok());

  // Update 0: all three push; A parks; the chief takes and applies.
  for (const auto& r : {chief, a, b}) Push(e, acc, 0, r);
  auto a_waits = StartWait(e, round, 0);
  REQUIRE(e.Run("AccumulatorTakeGradient", {{"dtype", DType::kFloat32}},
                {Ref(acc), Val(Tensor::Scalar<int32_t>(3))})
              .ok());
  REQUIRE(Set(e, "SyncRoundAdvance", round, 1).ok());
  CHECK(Ended(a_waits) == 1);

  // A runs ahead into update 1 and waits again before B has waited once.
  Push(e, acc, 1, a);
  auto a_again = StartWait(e, round, 1);
  CHECK_FALSE(a_again->finished());
  // B's wait for update 0 ends at once: its turn was not taken.
  auto b_waits = StartWait(e, round, 0);
  CHECK(Ended(b_waits) == 1);
  // So B pushes into update 1, which completes with three distinct replicas.
  Push(e, acc, 1, b);
  Push(e, acc, 1, chief);
  auto take = e.Run("AccumulatorTakeGradient", {{"dtype", DType::kFloat32}},
                    {Ref(acc), Val(Tensor::Scalar<int32_t>(3))});
  INFO(take.status().ToString());
  REQUIRE(take.ok());
  CHECK_FALSE(a_again->finished());  // taken, not yet applied
  REQUIRE(Set(e, "SyncRoundAdvance", round, 2).ok());
  CHECK(Ended(a_again) == 2);
}

TEST_CASE("the chief's release ends every wait and lets as many more through") {
  QueueTestEnv e;
  auto round = NewRound(e);
  REQUIRE(Set(e, "SyncRoundReset", round, 7).ok());
  auto w1 = StartWait(e, round, 7);
  auto w2 = StartWait(e, round, 7);
  REQUIRE(Release(e, round, 7, 3).ok());  // three replicas: two parked, one still working
  CHECK(Ended(w1) == 7);
  CHECK(Ended(w2) == 7);
  auto late = StartWait(e, round, 7);
  CHECK(Ended(late) == 7);
  auto later = StartWait(e, round, 7);  // no pass left
  CHECK_FALSE(later->finished());

  SECTION("a chief that starts again spends what was left") {
    REQUIRE(Release(e, round, 7, 5).ok());
    CHECK(Ended(later) == 7);
    REQUIRE(Set(e, "SyncRoundReset", round, 7).ok());
    auto after = StartWait(e, round, 7);
    CHECK_FALSE(after->finished());
    REQUIRE(Set(e, "SyncRoundAdvance", round, 8).ok());
    CHECK(Ended(after) == 8);
  }
  SECTION("an advance spends what was left") {
    REQUIRE(Release(e, round, 7, 5).ok());
    REQUIRE(Set(e, "SyncRoundAdvance", round, 7).ok());
    auto after = StartWait(e, round, 7);
    CHECK_FALSE(after->finished());
  }
}

TEST_CASE("a wait ends with its step's cancellation, naming the round") {
  QueueTestEnv e;
  auto round = NewRound(e, "sync_round");
  REQUIRE(Set(e, "SyncRoundReset", round, 3).ok());
  CancellationManager cm1, cm2;
  auto w1 = StartWait(e, round, 3, &cm1);
  auto w2 = StartWait(e, round, 3, &cm2);
  cm1.Cancel(errors::DeadlineExceeded("step deadline passed"));
  REQUIRE(w1->Wait());
  CHECK(w1->status().code() == Code::kDeadlineExceeded);
  CHECK(Contains(w1->status().message(), "sync round 'sync_round'"));
  CHECK(Contains(w1->status().message(), "after global step 3"));
  CHECK(Round(round).num_waiting() == 1);
  // The other waiter is untouched, and two cancellations in a row are one.
  cm1.Cancel(errors::Cancelled("again"));
  REQUIRE(Set(e, "SyncRoundAdvance", round, 4).ok());
  CHECK(Ended(w2) == 4);
  CHECK(w1->done_calls() == 1);
  // A step cancelled before it waits ends at once.
  CancellationManager gone;
  gone.Cancel(errors::Cancelled("session closed"));
  auto w3 = StartWait(e, round, 4, &gone);
  REQUIRE(w3->Wait());
  CHECK(w3->status().code() == Code::kCancelled);
  CHECK(Round(round).num_waiting() == 0);
}

TEST_CASE("the sync round is shared by name and checks its inputs") {
  QueueTestEnv e;
  auto first = NewRound(e, "shared");
  auto second = NewRound(e, "shared");
  CHECK(first == second);
  CHECK(NewRound(e, "other") != first);
  CHECK(Round(first).Describe().kind == "sync_round");

  auto bad = e.Run("SyncRoundAdvance", {}, {Ref(first), Val(Tensor::FromVector<int64_t>({1, 2}))});
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK(Contains(bad.status().message(), "step must be a scalar"));
  // Extreme steps are only numbers: nothing is past the largest.
  REQUIRE(Set(e, "SyncRoundReset", first, std::numeric_limits<int64_t>::min()).ok());
  auto far = StartWait(e, first, std::numeric_limits<int64_t>::max());
  REQUIRE(Set(e, "SyncRoundAdvance", first, std::numeric_limits<int64_t>::max()).ok());
  CHECK_FALSE(far->finished());
  REQUIRE(Set(e, "SyncRoundReset", first, 0).ok());
  CHECK(Ended(far) == 0);
}

}  // namespace
}  // namespace tfd::testing
