// RingAllReduce: one member's part in a ring all-reduce of a group of tasks,
// over the step's Rendezvous (common/rendezvous.h), so it travels on the
// data plane like any _Send/_Recv and knows nothing of RPC.
//
// The tensor is cut into pipes of at most group_size * chunk_bytes, and
// each pipe into group_size segments; up to pipes_in_flight pipes run their
// own rings at once (the next starts as one ends), so a large tensor's
// transfers and additions overlap while the bytes held stay bounded. In a
// pipe, member `rank` sends to rank+1 and receives from rank-1:
// group_size-1 rounds of reduce-scatter (each adds what it received to its
// own input and passes the sum on), the final op on the segment it then
// holds complete, and group_size-1 rounds of all-gather (each passes the
// complete segment on). Each segment is reduced by one member only, so
// every member gets the same bits. A member writes into a tensor it has
// handed over only where the ring's order proves that the next member has
// read it (Reduce in ring_all_reduce.cc says where).
//
// Where the bytes go: a round starts as soon as its receive is in (a send
// still under way only delays the end of the run); a received partial sum
// is merged into its own buffer when no one else holds it, else into the
// output; the completed segment is merged straight into the output and
// sent from there; the all-gather forwards each received segment before
// copying it out. Nothing is allocated per round.
//
// Matching: members run their own steps, whose ids differ; the transfers of
// one invocation use a step id of their own, below zero (masters draw theirs
// from [0, 2^63)), made from (group_key, instance_key, invocation), and keys
// naming the same three. Every member first tells every other that it has
// come (with its dtype and size), so a wait that ends at the step's deadline
// names the tasks never heard from.
//
//   RingAllReduce::Run(rendezvous, ctx.cancellation(), params, input, output,
//                      [](const Status& s) { ... });   // once, on any thread
//
// Thread-safety: Run may be called from any thread; `done` runs once, on
// whichever thread completes the last transfer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/cancellation.h"
#include "common/rendezvous.h"
#include "common/tensor.h"
#include "kernels/collective/reduce_math.h"

namespace tfd::kernels {

struct RingParams {
  std::string node;  // the CollectiveReduce node, for messages
  int64_t group_key = 0;
  int64_t instance_key = 0;
  int64_t invocation = 0;  // the n-th run of (group_key, instance_key) on this task
  int rank = 0;
  std::vector<std::string> devices;  // each member's device, by rank (size: group_size)
  MergeOp merge = MergeOp::kAdd;
  FinalOp final_op = FinalOp::kId;
  // The largest segment one transfer moves: smaller pipelines more, larger
  // costs fewer messages.
  size_t chunk_bytes = size_t{1} << 20;
  // Pipes whose rings run at once: enough to keep every link busy while a
  // round merges, few enough that the received segments held stay small.
  int pipes_in_flight = 4;
  // A merge (or copy) of at most this many bytes runs on the thread that
  // completed the receive: cheaper than the two thread hops `schedule`
  // costs, and short enough not to hold back that thread's other work.
  size_t inline_bytes = size_t{256} << 10;
  // Where a round's merge (or copy) and the start of the next round run:
  // across tasks a receive completes on the data plane's event loop, and a
  // large segment's merge there would hold back the task's other transfers.
  // Empty: on the thread that completed the round.
  std::function<void(std::function<void()>)> schedule;
  int group_size() const { return static_cast<int>(devices.size()); }
};

class RingAllReduce {
 public:
  // Reduces `input` with the group's into `output` (same dtype and shape,
  // every element written before `done` runs OK). Needs group_size >= 2.
  static void Run(Rendezvous& rendezvous, CancellationManager& step_cancellation,
                  RingParams params, Tensor input, Tensor output,
                  std::function<void(const Status&)> done);

  // The step id the transfers of one invocation use: always below zero.
  static int64_t StepId(int64_t group_key, int64_t instance_key, int64_t invocation);
};

}  // namespace tfd::kernels
