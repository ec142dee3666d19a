// TensorArray: TensorFlow 1.x's array of tensors for one step, what
// `dynamic_rnn` reads its inputs from and writes its outputs to, one element
// per iteration, instead of slicing and concatenating whole tensors.
//
// A TensorArrayV3 node makes a new, empty array in each run and hands it on
// as a reference (like a loop gradient's stack, kernels/control/
// stack_ops.cc), so it lives as long as the step's values that carry it.
// Its ops thread a "flow" scalar from each write to the reads after it:
// the flow orders them, and the gradient of the flow is how gradients reach
// the array's gradient (Grad, below; tensor_array_grad.cc).
//
// Semantics are TF1's: each element is written once, except in a gradient
// array, where writes to one index add up (gradients of several reads);
// with clear_after_read an element can be read once; an element never
// written reads as zeros when the element shape is known, else it is an
// error; a dynamic_size array grows to the highest index written.
//
//   auto ta = std::make_shared<TensorArray>(opts, 3);
//   TFD_RETURN_IF_ERROR(ta->Write(0, t, "node"));
//   TFD_ASSIGN_OR_RETURN(Tensor x, ta->Read(0, "node"));
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "common/resource_mgr.h"
#include "common/shape.h"
#include "common/tensor.h"

namespace tfd::kernels::data_flow {

class TensorArray : public ResourceBase {
 public:
  struct Options {
    DType dtype = DType::kInvalid;
    PartialShape element_shape;  // what every element must fit
    bool dynamic_size = false;
    bool clear_after_read = true;
    bool identical_element_shapes = false;
    std::string name;  // for messages: the TensorArrayV3 node's
  };

  TensorArray(Options options, int64_t size, bool is_gradient = false);

  std::string_view Kind() const override { return "tensor array"; }
  std::string DebugString() const override;

  // Errors name `node`, the op asking. INVALID_ARGUMENT: a wrong dtype, a
  // shape the element shape does not fit, an index out of range (of a
  // fixed-size array), a second write (but to a gradient array), a read of
  // a cleared element or of one never written whose shape is unknown, any
  // use after Close.
  Status Write(int64_t index, const Tensor& value, const std::string& node);
  StatusOr<Tensor> Read(int64_t index, const std::string& node);
  // The elements at `indices`, stacked along a new dimension 0 (all of one
  // shape); for no indices, [0] + the element shape, which must be known.
  StatusOr<Tensor> Gather(const std::vector<int64_t>& indices, const std::string& node);
  // Writes row i of `value` at indices[i].
  Status Scatter(const std::vector<int64_t>& indices, const Tensor& value, const std::string& node);
  // Elements 0..size-1 concatenated along dimension 0, and each one's
  // length there (int64 [size]).
  StatusOr<std::pair<Tensor, Tensor>> Concat(const std::string& node);
  // Writes consecutive pieces of `value` along dimension 0, of `lengths`, at
  // 0..n-1: n must be the size of a fixed-size array.
  Status Split(const Tensor& value, const std::vector<int64_t>& lengths, const std::string& node);

  int64_t Size() const;
  void Close();
  DType dtype() const { return options_.dtype; }

  // The gradient array for gradients named `source` (one per call of
  // tf.gradients): made on first use, of this one's size and element shape
  // (what the elements written so far agree on, where the declared one is
  // partial), the same array on every later call.
  StatusOr<std::shared_ptr<TensorArray>> Grad(const std::string& source, const std::string& node);

 private:
  struct Element {
    Tensor value;
    bool written = false;
    bool cleared = false;
  };

  Status CheckOpen(const std::string& node) const REQUIRES(mu_);
  Status CheckIndex(int64_t index, const std::string& node) const REQUIRES(mu_);
  Status WriteLocked(int64_t index, const Tensor& value, const std::string& node) REQUIRES(mu_);
  // The shape a read of `index` would give, or why it would fail.
  StatusOr<TensorShape> PeekShape(int64_t index, const std::string& node) const REQUIRES(mu_);
  StatusOr<Tensor> ReadLocked(int64_t index, const std::string& node) REQUIRES(mu_);
  // Reads `indices` into a new tensor of `shape`, one after another.
  StatusOr<Tensor> ReadInto(const std::vector<int64_t>& indices, const TensorShape& shape,
                            const std::string& node) REQUIRES(mu_);
  std::string Where(const std::string& node) const;

  const Options options_;
  const bool is_gradient_;
  mutable Mutex mu_;
  int64_t size_ GUARDED_BY(mu_);
  // By index: only those written (or cleared), so a hostile size costs nothing.
  std::map<int64_t, Element> elements_ GUARDED_BY(mu_);
  Tensor zeros_ GUARDED_BY(mu_);  // what elements never written read as, made once
  bool any_written_ GUARDED_BY(mu_) = false;
  PartialShape written_shape_ GUARDED_BY(mu_);  // what every element written fits
  bool closed_ GUARDED_BY(mu_) = false;
  std::map<std::string, std::shared_ptr<TensorArray>> gradients_ GUARDED_BY(mu_);
};

}  // namespace tfd::kernels::data_flow
