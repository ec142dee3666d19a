#include "daemon/distributed/task_rendezvous.h"

#include <atomic>

#include "common/device_name.h"
#include "daemon/distributed/peers.h"
#include "daemon/rpc/kj_status.h"
#include "daemon/rpc/tensor_wire.h"

namespace tfd {
namespace {

// Runs the receive callback once: whichever of the RPC result and the
// step's cancellation comes first wins, and the loser touches nothing.
class Once {
 public:
  explicit Once(Rendezvous::RecvCallback done) : done_(std::move(done)) {}
  void Run(StatusOr<Tensor> result) {
    if (!ran_.exchange(true)) done_(std::move(result));
  }

 private:
  std::atomic<bool> ran_{false};
  Rendezvous::RecvCallback done_;
};

}  // namespace

TaskRendezvous::TaskRendezvous(TaskEnv& env)
    : env_(env), errors_(env.logger, "a remote receive"), fetches_(errors_) {}

TaskRendezvous::~TaskRendezvous() noexcept = default;

Status TaskRendezvous::Send(int64_t step_id, const std::string& key, const Tensor& tensor) {
  return env_.rendezvous.Send(step_id, key, tensor);
}

void TaskRendezvous::RecvAsync(int64_t step_id, const std::string& key,
                               CancellationManager& cancellation, RecvCallback done) {
  auto parsed = ParseKey(key);
  if (!parsed.ok()) {
    done(parsed.status());
    return;
  }
  auto src = DeviceName::Parse(parsed->src_device);
  if (!src.ok()) {
    done(src.status());
    return;
  }
  const std::string src_task = src->TaskName();
  if (src_task == env_.task) {
    env_.rendezvous.RecvAsync(step_id, key, cancellation, std::move(done));
    return;
  }
  auto once = std::make_shared<Once>(std::move(done));
  auto token = cancellation.Register([once, src_task](const Status& why) {
    const Status reason = why.ok() ? errors::Cancelled("step cancelled") : why;
    once->Run(Status(reason.code(), reason.message() + "; while receiving from " + src_task));
  });
  if (!token) {
    once->Run(cancellation.reason());
    return;
  }
  // The cancellation callback stays registered: it holds only `once`, and
  // the step's CancellationManager may be gone by the time the RPC ends.
  try {
    env_.loop->executeSync([this, once, src_task, step_id, key] {
      const auto deadline = env_.peers->timer().now() +
                            env_.step_timeout.count() * kj::MILLISECONDS;
      fetches_.add(
          env_.peers->Services(src_task, deadline)
              .then([step_id, key](TaskServices s) {
                auto request = s.worker.recvTensorRequest();
                request.setStepId(step_id);
                request.setKey(key);
                return request.send();
              })
              .then(
                  [once](capnp::Response<proto::Worker::RecvTensorResults>&& response) {
                    // Copied out here, on the event loop: the response is a kj
                    // object and must die on this thread, while the tensor
                    // goes on to kernels on the pool.
                    // TODO(perf): alias the bytes and release the response on
                    // the loop once the last kernel lets go of the tensor.
                    once->Run(TensorFromProto(response.getTensor()));
                  },
                  [once, src_task](kj::Exception&& e) {
                    once->Run(StatusFromKj(e).WithContext("receiving from " + src_task));
                  }));
    });
  } catch (const kj::Exception& e) {
    once->Run(errors::Unavailable("this task is shutting down: ", e.getDescription().cStr()));
  }
}


}  // namespace tfd
