// LocalRendezvous: tensors meet their receives whichever comes first, pushed
// tensors wait for a step that has not started, an ended step's waiters
// fail and its late tensors are dropped, and no waiter is ever lost when
// completing one cancels the step (as the executor does on the first error).
#include "daemon/runtime/local_rendezvous.h"

#include <catch2/catch.hpp>

#include <memory>
#include <optional>

namespace tfd {
namespace {

// A receive's outcome.
struct Got {
  std::optional<StatusOr<Tensor>> value;
  Rendezvous::RecvCallback callback() {
    return [this](StatusOr<Tensor> t) { value = std::move(t); };
  }
};

TEST_CASE("a tensor meets its receive whichever comes first") {
  LocalRendezvous r;
  CancellationManager cm;
  Got early, late;
  r.RecvAsync(1, "a", cm, early.callback());
  CHECK_FALSE(early.value.has_value());
  REQUIRE(r.Send(1, "a", Tensor::Scalar(1.0f)).ok());
  REQUIRE(early.value.has_value());
  CHECK(early.value->value().scalar<float>() == 1.0f);

  REQUIRE(r.Send(1, "b", Tensor::Scalar(2.0f)).ok());
  r.RecvAsync(1, "b", cm, late.callback());
  REQUIRE(late.value.has_value());
  CHECK(late.value->value().scalar<float>() == 2.0f);
}

TEST_CASE("a pushed tensor waits for its step; a pushed error fails the receive") {
  LocalRendezvous r;
  CancellationManager cm;
  r.Deliver(7, "w", Tensor::Scalar(3.0f));
  r.Deliver(7, "bad", errors::ResourceExhausted("too big"));
  CHECK(r.num_steps() == 1);
  Got w, bad;
  r.RecvAsync(7, "w", cm, w.callback());
  r.RecvAsync(7, "bad", cm, bad.callback());
  REQUIRE(w.value.has_value());
  CHECK(w.value->value().scalar<float>() == 3.0f);
  REQUIRE(bad.value.has_value());
  CHECK(bad.value->status().code() == Code::kResourceExhausted);
}

TEST_CASE("abort and cleanup complete every waiter, even when the first one cancels the step") {
  for (const bool abort : {true, false}) {
    INFO((abort ? "Abort" : "Cleanup"));
    LocalRendezvous r;
    CancellationManager cm;
    Got waiters[3];
    // The first completion cancels the step at once, from inside the call
    // that completes it, as the executor does on the first error.
    r.RecvAsync(5, "first", cm, [&](StatusOr<Tensor> t) {
      waiters[0].value = std::move(t);
      cm.Cancel(errors::Aborted("the first error cancels the step"));
    });
    r.RecvAsync(5, "second", cm, waiters[1].callback());
    r.RecvAsync(5, "third", cm, waiters[2].callback());
    if (abort) {
      r.Abort(5, errors::OutOfRange("input exhausted on another task"));
    } else {
      r.Cleanup(5);
    }
    for (const Got& g : waiters) {
      REQUIRE(g.value.has_value());
      CHECK_FALSE(g.value->ok());
    }
    CHECK(r.num_steps() == 0);
  }
}

TEST_CASE("a send that completes a waiter which cancels the step leaves no other waiter behind") {
  LocalRendezvous r;
  CancellationManager cm;
  Got other;
  r.RecvAsync(9, "x", cm, [&](StatusOr<Tensor>) { cm.Cancel(errors::Internal("boom")); });
  r.RecvAsync(9, "y", cm, other.callback());
  REQUIRE(r.Send(9, "x", Tensor::Scalar(1.0f)).ok());
  REQUIRE(other.value.has_value());
  CHECK(other.value->status().code() == Code::kInternal);
}

TEST_CASE("a receive in a loop that the deadline ends names the edge and the iteration") {
  LocalRendezvous r;
  CancellationManager cm;
  const std::string ps = "/job:ps/replica:0/task:0/device:CPU:0";
  const std::string worker = "/job:worker/replica:0/task:0/device:CPU:0";
  // FrameRendezvous's key for iteration 3 of a loop's frame instance.
  const std::string key =
      Rendezvous::MakeKey(ps, worker, "while/add:0") + ";00000000deadbeef:3";
  Got g;
  r.RecvAsync(5, key, cm, g.callback());
  cm.Cancel(errors::DeadlineExceeded("step 5 passed its deadline"));
  REQUIRE(g.value.has_value());
  const Status& s = g.value->status();
  CHECK(s.code() == Code::kDeadlineExceeded);
  CHECK_THAT(s.message(), Catch::Contains("edge 'while/add:0' from " + ps + " to " + worker) &&
                              Catch::Contains("iteration 3 of a while loop"));
  CHECK_THAT(s.message(), !Catch::Contains("deadbeef"));
}

TEST_CASE("an ended step's late tensors are dropped and its later receives fail") {
  LocalRendezvous r;
  CancellationManager cm;
  r.Abort(4, errors::Cancelled("client gone"));
  r.Deliver(4, "late", Tensor::Scalar(1.0f));
  CHECK_FALSE(r.Send(4, "late2", Tensor::Scalar(1.0f)).ok());
  CHECK(r.num_steps() == 0);  // nothing kept for it
  Got g;
  r.RecvAsync(4, "late", cm, g.callback());
  REQUIRE(g.value.has_value());
  CHECK(g.value->status().code() == Code::kCancelled);

  r.Cleanup(8);
  r.Deliver(8, "after", Tensor::Scalar(1.0f));
  CHECK(r.num_steps() == 0);
  Status late = r.Send(8, "after2", Tensor::Scalar(1.0f));
  CHECK(late.code() == Code::kAborted);
  CHECK(late.message().find("step 8 ended") != std::string::npos);
}

TEST_CASE("an abort's reason outlives later cleanups; the oldest steps are forgotten in order") {
  LocalRendezvous r;
  r.Abort(1, errors::Unavailable("ps:0 went away"));
  for (int64_t step = 100; step < 100 + 2000; ++step) r.Cleanup(step);
  CHECK(r.Send(1, "late", Tensor::Scalar(1.0f)).code() == Code::kUnavailable);
  // Past kMaxEndedSteps more steps, the first ones are forgotten: a tensor
  // for them starts a table again (Reap drops such tables).
  for (int64_t step = 10000; step < 10000 + int64_t{LocalRendezvous::kMaxEndedSteps}; ++step) {
    r.Cleanup(step);
  }
  CHECK(r.Send(100, "forgotten", Tensor::Scalar(1.0f)).ok());
  CHECK(r.num_steps() == 1);
  CHECK(r.Send(10000 + LocalRendezvous::kMaxEndedSteps - 1, "kept", Tensor::Scalar(1.0f)).code() ==
        Code::kAborted);
}

TEST_CASE("Reap drops untouched tables without receives, and keeps the ones waited on") {
  LocalRendezvous r;
  CancellationManager cm;
  r.Deliver(1, "orphan", Tensor::Scalar(1.0f));  // a step that never ran here
  Got waiting;
  r.RecvAsync(2, "k", cm, waiting.callback());   // a step that runs here
  CHECK(r.Reap(LocalRendezvous::Clock::now() - std::chrono::hours(1)) == 0);
  CHECK(r.Reap(LocalRendezvous::Clock::now() + std::chrono::seconds(1)) == 1);
  CHECK(r.num_steps() == 1);
  CHECK_FALSE(waiting.value.has_value());
  r.Deliver(2, "k", Tensor::Scalar(5.0f));
  REQUIRE(waiting.value.has_value());
  CHECK(waiting.value->value().scalar<float>() == 5.0f);
}

TEST_CASE("a cancelled receive completes once with the reason") {
  LocalRendezvous r;
  CancellationManager cm;
  int calls = 0;
  Status seen;
  r.RecvAsync(3, "k", cm, [&](StatusOr<Tensor> t) {
    ++calls;
    seen = t.status();
  });
  cm.Cancel(errors::DeadlineExceeded("step 3 passed its deadline"));
  r.Deliver(3, "k", Tensor::Scalar(1.0f));  // too late: nobody waits
  CHECK(calls == 1);
  CHECK(seen.code() == Code::kDeadlineExceeded);
  CHECK(seen.message().find("'k'") != std::string::npos);
}

}  // namespace
}  // namespace tfd

namespace tfd {
namespace {

TEST_CASE("a collective's step (below zero) leaves no table once its tensors are taken") {
  LocalRendezvous r;
  CancellationManager cm;
  Got a, b;
  // Tensor first, then the receive; and the receive first, then the tensor.
  REQUIRE(r.Send(-5, "x", Tensor::Scalar(1.0f)).ok());
  r.RecvAsync(-5, "x", cm, a.callback());
  r.RecvAsync(-5, "y", cm, b.callback());
  CHECK(r.num_steps() == 1);
  r.Deliver(-5, "y", Tensor::Scalar(2.0f));
  REQUIRE(a.value.has_value());
  REQUIRE(b.value.has_value());
  CHECK(r.num_steps() == 0);
  // The same step id may be used again (it never ended).
  REQUIRE(r.Send(-5, "z", Tensor::Scalar(3.0f)).ok());
  CHECK(r.num_steps() == 1);
  // A master's step keeps its table until it ends here.
  REQUIRE(r.Send(7, "x", Tensor::Scalar(1.0f)).ok());
  Got c;
  r.RecvAsync(7, "x", cm, c.callback());
  CHECK(r.num_steps() == 2);
}

}  // namespace
}  // namespace tfd
