// FrameRendezvous: what a _Send or _Recv inside a while loop sees as its
// step's rendezvous: the step's own, each key suffixed with the loop's
// frame instance and the iteration ("SRC;DST;EDGE;FRAME:ITER", FRAME in
// hex), so that a transfer that runs once per iteration has one key per
// iteration, and both ends compute it alike: every task that runs part of a
// loop runs the same frames and iterations of it (partition_loops.h), and
// the frame instance's id is a fixed hash (FrameInstanceId below).
// Transfers outside any loop keep their key as it is.
//
//   FrameRendezvous r(*step.rendezvous, frame_id, iter);
//   r.RecvAsync(step_id, key, cm, done);  // waits for KEY;FRAME:ITER
//
// Thread-safety: as the rendezvous it wraps, which must outlive it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/rendezvous.h"

namespace tfd {

class FrameRendezvous : public Rendezvous {
 public:
  FrameRendezvous(Rendezvous& base, uint64_t frame_id, int64_t iter)
      : base_(base), suffix_(Suffix(frame_id, iter)) {}

  void SendAsync(int64_t step_id, const std::string& key, const Tensor& tensor,
                 CancellationManager& cancellation, SendCallback done) override {
    base_.SendAsync(step_id, key + suffix_, tensor, cancellation, std::move(done));
  }
  void RecvAsync(int64_t step_id, const std::string& key, CancellationManager& cancellation,
                 RecvCallback done) override {
    base_.RecvAsync(step_id, key + suffix_, cancellation, std::move(done));
  }

  // ";FRAME:ITER": what the key of a transfer in iteration `iter` of frame
  // instance `frame_id` ends with.
  static std::string Suffix(uint64_t frame_id, int64_t iter);

 private:
  Rendezvous& base_;
  const std::string suffix_;
};

// The id of the instance of loop frame `name` entered in iteration
// `parent_iter` of frame instance `parent_id` (0: the root frame): the same
// on every task and in every process (FNV-1a), never 0.
uint64_t FrameInstanceId(uint64_t parent_id, int64_t parent_iter, std::string_view name);

}  // namespace tfd
