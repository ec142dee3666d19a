// Rendezvous: where a step's _Send kernels leave tensors and its _Recv
// kernels pick them up, within a task or across tasks.
//
// A key names one transfer of one step: "SRC_DEVICE;DST_DEVICE;EDGE", with
// the step id kept apart. The sending task decides how the tensor travels:
// into its own table when the receiver is local, pushed to the receiver's
// task over the data plane otherwise (daemon/distributed/task_rendezvous.h);
// a receive always waits in its own task's table.
//
//   rendezvous.SendAsync(step, key, tensor, [](const Status& s) { ... });
//   rendezvous.RecvAsync(step, key, cm, [](StatusOr<Tensor> t) { ... });
//
// Thread-safety: implementations are safe to call from any thread; the
// callback runs on whichever thread completes the transfer.
#pragma once

#include <functional>
#include <string>

#include "common/cancellation.h"
#include "common/tensor.h"

namespace tfd {

// A dead value (common/op_kernel.h, Value) crosses as an uninitialized
// Tensor: kernels never produce one, so it cannot be confused with data.
class Rendezvous {
 public:
  using RecvCallback = std::function<void(StatusOr<Tensor>)>;
  using SendCallback = std::function<void(const Status&)>;
  virtual ~Rendezvous() = default;

  // Hands over a tensor; `done` runs once it has been taken (at once within
  // a task, once its bytes have left across tasks) or has failed. A second
  // send under the same key is an error.
  // A cancelled step (through `cancellation`) completes `done` with the
  // reason, whatever the transfer is doing.
  virtual void SendAsync(int64_t step_id, const std::string& key, const Tensor& tensor,
                         CancellationManager& cancellation, SendCallback done) = 0;
  // Calls `done` once with the tensor, or with the reason the step was
  // cancelled (through `cancellation`) or aborted.
  virtual void RecvAsync(int64_t step_id, const std::string& key,
                         CancellationManager& cancellation, RecvCallback done) = 0;

  // "SRC;DST;EDGE": the key of a transfer.
  static std::string MakeKey(const std::string& src_device, const std::string& dst_device,
                             const std::string& edge);
  // Splits a key (a loop's suffix left off: rendezvous_key.h); INVALID_ARGUMENT if malformed.
  struct ParsedKey {
    std::string src_device, dst_device, edge;
  };
  static StatusOr<ParsedKey> ParseKey(const std::string& key);
};

}  // namespace tfd
