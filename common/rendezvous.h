// Rendezvous: where a step's _Send kernels leave tensors and its _Recv
// kernels pick them up, within a task or across tasks.
//
// A key names one transfer of one step: "SRC_DEVICE;DST_DEVICE;EDGE", with
// the step id kept apart. The task that runs the _Recv decides how to get
// the tensor: from its own table when the sender is local, over RPC from the
// sender's task otherwise (daemon/distributed/task_rendezvous.h).
//
//   rendezvous.Send(step, key, tensor);                       // never blocks
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

class Rendezvous {
 public:
  using RecvCallback = std::function<void(StatusOr<Tensor>)>;
  virtual ~Rendezvous() = default;

  // Hands over a tensor; a second send under the same key is an error.
  virtual Status Send(int64_t step_id, const std::string& key, const Tensor& tensor) = 0;
  // Calls `done` once with the tensor, or with the reason the step was
  // cancelled (through `cancellation`) or aborted.
  virtual void RecvAsync(int64_t step_id, const std::string& key,
                         CancellationManager& cancellation, RecvCallback done) = 0;

  // "SRC;DST;EDGE": the key of a transfer.
  static std::string MakeKey(const std::string& src_device, const std::string& dst_device,
                             const std::string& edge);
  // Splits a key; INVALID_ARGUMENT when malformed.
  struct ParsedKey {
    std::string src_device, dst_device, edge;
  };
  static StatusOr<ParsedKey> ParseKey(const std::string& key);
};

}  // namespace tfd
