#include "daemon/distributed/task_rendezvous.h"

#include <atomic>

#include "common/device_name.h"
#include "daemon/distributed/loop_inbox.h"
#include "daemon/distributed/peers.h"
#include "daemon/transport/data_plane.h"

namespace tfd {
namespace {

// Runs the send callback once: whichever of the push's outcome and the
// step's cancellation comes first wins, and the loser touches nothing. The
// callback goes with its run: it holds the _Send's kernel context and so
// the tensor sent, which the step's cancellation manager (holding this
// until the step ends) must not keep alive — a variable's snapshot still
// held when the ps applies the gradient makes the update copy it.
class Once {
 public:
  explicit Once(Rendezvous::SendCallback done) : done_(std::move(done)) {}
  void Run(const Status& s) {
    if (ran_.exchange(true)) return;
    Rendezvous::SendCallback done = std::move(done_);
    done_ = nullptr;
    done(s);
  }

 private:
  std::atomic<bool> ran_{false};
  Rendezvous::SendCallback done_;
};

}  // namespace

TaskRendezvous::TaskRendezvous(TaskEnv& env)
    : env_(env), errors_(env.logger, "a push"), pushes_(errors_) {}

TaskRendezvous::~TaskRendezvous() noexcept = default;

void TaskRendezvous::SendAsync(int64_t step_id, const std::string& key, const Tensor& tensor,
                               CancellationManager& cancellation, SendCallback done) {
  auto parsed = ParseKey(key);
  if (!parsed.ok()) {
    done(parsed.status());
    return;
  }
  auto dst = DeviceName::Parse(parsed->dst_device);
  if (!dst.ok()) {
    done(dst.status());
    return;
  }
  const std::string dst_task = dst->TaskName();
  if (dst_task == env_.task) {
    env_.rendezvous.SendAsync(step_id, key, tensor, cancellation, std::move(done));
    return;
  }
  if (env_.data_plane == nullptr) {
    done(errors::Internal("no data plane on ", env_.task, " to push '", key, "' to ", dst_task));
    return;
  }
  auto once = std::make_shared<Once>(std::move(done));
  // The callback holds only `once`: the step's CancellationManager may be
  // gone by the time the push ends.
  auto token = cancellation.Register([once, dst_task](const Status& why) {
    const Status reason = why.ok() ? errors::Cancelled("step cancelled") : why;
    once->Run(Status(reason.code(), reason.message() + "; while pushing to " + dst_task)
                  .WithDetails(reason.details()));
  });
  if (!token) {
    once->Run(cancellation.reason());
    return;
  }
  // Started on the loop (at once when this is the loop thread); the pool
  // thread goes on with the step meanwhile.
  const bool posted = env_.loop->Post([this, once, dst_task, step_id, key, tensor] {
    const auto deadline = env_.peers->timer().now() + env_.step_timeout.count() * kj::MILLISECONDS;
    pushes_.add(env_.peers->Services(dst_task, deadline)
                    .then([this, dst_task, step_id, key, tensor](TaskServices) {
                      return env_.data_plane->Push(dst_task, step_id, key, tensor);
                    })
                    .then([once]() { once->Run(OkStatus()); },
                          [this, once, dst_task](kj::Exception&& e) {
                            const Status s = StatusFromKj(e);
                            // The receiver is gone: the next push reconnects.
                            if (s.code() == Code::kUnavailable) env_.peers->Forget(dst_task);
                            once->Run(s.task() == dst_task
                                          ? s
                                          : s.WithContext("pushing to " + dst_task));
                          }));
  });
  if (!posted) once->Run(errors::Unavailable(env_.task, " is shutting down"));
}

void TaskRendezvous::RecvAsync(int64_t step_id, const std::string& key,
                               CancellationManager& cancellation, RecvCallback done) {
  // Local or pushed here from another task: either way it arrives in this
  // task's own table.
  env_.rendezvous.RecvAsync(step_id, key, cancellation, std::move(done));
}

}  // namespace tfd
