// Variable: a task's mutable tensor, TensorFlow 1.x ref-variable style, held in
// the ResourceMgr under (container, name) so every graph and session on the
// task that names it shares it.
//
// Readers get snapshots: Read() hands out a Tensor sharing the current buffer,
// and every update is copy-on-write — it writes in place only when nobody but
// the variable holds the buffer, and otherwise into a fresh copy — so a
// snapshot already handed out never changes underneath its holder.
//
//   auto v = std::make_shared<Variable>("", "w", DType::kFloat32, PartialShape({2}));
//   TFD_RETURN_IF_ERROR(v->Assign(init, /*validate_shape=*/true));
//   TFD_ASSIGN_OR_RETURN(Tensor snapshot, v->Read());
//   Variable* vars[] = {v.get()};
//   TFD_RETURN_IF_ERROR(UpdateVariables(vars, /*use_locking=*/true, fn));
//
// Thread-safety: every method may be called from any thread; the value is
// read and written with mu() held (GUARDED_BY below; the *_locked methods
// REQUIRE it).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/resource_mgr.h"
#include "common/shape.h"
#include "common/tensor.h"
#include "kernels/framework/resource.h"

namespace tfd::kernels {

class Variable : public Resource {
 public:
  // `created_by_restore`: made by a checkpoint restore before any graph
  // declared it, with the saved value's exact shape as its declaration; the
  // first VariableV2 of that name adopts it (see AcceptsDeclaration).
  Variable(std::string container, std::string name, DType dtype, PartialShape shape,
           bool created_by_restore = false);

  std::string_view Kind() const override { return "variable"; }
  // "float32[2, 3] initialized", "float32[?, 3] uninitialized".
  std::string DebugString() const override;
  // The current value, sharing its buffer; FAILED_PRECONDITION naming the
  // variable when it was never assigned.
  StatusOr<Tensor> Read() const override;

  // kernels::Resource: described as kVariableKind with its dtype, declared
  // shape and bytes; checkpointed in the empty namespace as its value once
  // assigned. A restore checks the saved value against the declaration and
  // assigns it as Assign(saved, /*validate_shape=*/false) would.
  ResourceDescription Describe() const override;
  std::optional<std::string_view> CheckpointNamespace() const override { return ""; }
  std::optional<Tensor> CheckpointValue() const override;
  Status CheckRestore(const Tensor& saved, const std::string& key,
                      const std::string& file) const override;
  Status Restore(const Tensor& saved, const std::string& key) override;
  std::optional<SaveSliceInfo> CheckpointSlice() const override;
  void RestoreSlice(const SaveSliceInfo& slice) override { SetSlice(slice); }

  // Records that this variable is a shard of a partitioned variable
  // (VariableV2's `_save_slice_info` attr); the last declaration wins.
  void SetSlice(SaveSliceInfo slice);

  const std::string& container() const { return container_; }
  const std::string& name() const { return name_; }
  // "name", or "container/name" outside the default container: for messages.
  std::string FullName() const;
  DType dtype() const { return dtype_; }
  // The shape declared at creation (VariableV2's attr), possibly partial.
  const PartialShape& declared_shape() const { return declared_shape_; }
  bool created_by_restore() const { return created_by_restore_; }
  // Whether a VariableV2 declaring (dtype, shape) may use this variable: the
  // same declaration, or — for a variable a restore created, whose declared
  // shape is only the saved value's — any shape compatible with it.
  bool AcceptsDeclaration(DType dtype, const PartialShape& shape) const;
  bool initialized() const;

  // Replaces the value with `value`, sharing its buffer. An update writes
  // in place once no one else holds that buffer, when it was allocated (an
  // initializer's output, a restored tensor); borrowed memory (a received
  // message) is copied by the first update. With validate_shape the value
  // must fit the declared shape and, once initialized, keep the current shape.
  Status Assign(const Tensor& value, bool validate_shape);

  // For UpdateVariables and other code that holds mu():
  Mutex& mu() const RETURN_CAPABILITY(mu_) { return mu_; }
  bool initialized_locked() const REQUIRES(mu_) { return initialized_; }
  const Tensor& value_locked() const REQUIRES(mu_) { return value_; }
  // True when the buffer belongs to this variable alone, so it may be
  // written in place.
  bool writable_in_place_locked() const REQUIRES(mu_) {
    return own_buffer_ && value_.buffer_unshared();
  }
  // Makes the value writable in place, copying it if a reader shares it.
  Status MakeWritableLocked() REQUIRES(mu_);
  // Installs a value computed elsewhere (a private copy nobody else holds).
  void SetOwnedValueLocked(Tensor value) REQUIRES(mu_);
  // FAILED_PRECONDITION naming the variable unless initialized.
  Status CheckInitializedLocked() const REQUIRES(mu_);

 private:
  const std::string container_;
  const std::string name_;
  const DType dtype_;
  const PartialShape declared_shape_;
  const bool created_by_restore_;

  mutable Mutex mu_;
  Tensor value_ GUARDED_BY(mu_);
  bool initialized_ GUARDED_BY(mu_) = false;
  // Whether value_'s buffer may be written once no one else holds it: an
  // allocated buffer (the refcount counts every reader: a Const's output is
  // held by its kernel), not borrowed memory such as a received message,
  // which other buffers may alias and which is copied before the first
  // in-place update. Without this, the first update of a table assigned by
  // its initializer or restored from a checkpoint copied it whole, doubling
  // the ps's memory for a moment.
  bool own_buffer_ GUARDED_BY(mu_) = false;
  std::optional<SaveSliceInfo> slice_ GUARDED_BY(mu_);

  // Assign's work; `owned`: whether the buffer may be written in place once
  // unshared (see own_buffer_).
  Status AssignValue(const Tensor& value, bool validate_shape, bool owned);
};

// A variable a checkpoint restore makes for a saved value that no variable
// of the task holds yet: declared with the value's dtype and exact shape,
// created_by_restore, and holding the value.
StatusOr<std::shared_ptr<Variable>> MakeRestoredVariable(const std::string& container,
                                                         const std::string& name,
                                                         const Tensor& saved);

// Runs `fn` on writable values of `vars` (same order), so that `fn` may update
// them in place. Every variable must be initialized (FAILED_PRECONDITION
// naming the first that is not). `fn` must check its inputs before writing
// anything and return an error without side effects.
//
// With use_locking, every variable's mutex is held (in address order) for the
// whole read-modify-write: concurrent updates serialise and none is lost.
// Without it, the variables are updated in place under their locks when no
// reader holds their buffers (the cheap, common case); otherwise the update is
// computed on private copies outside the locks and installed afterwards, so a
// concurrent update may be lost (as in TensorFlow) but no buffer is torn.
//
// Up to kInlineVariables variables take no allocation here (an optimizer
// step runs this for every variable); a caller's `fn` that captures at most
// two pointers takes none in std::function either.
inline constexpr size_t kInlineVariables = 4;
using VariableUpdateFn = std::function<Status(std::span<Tensor> values)>;
Status UpdateVariables(std::span<Variable* const> vars, bool use_locking,
                       const VariableUpdateFn& fn);

}  // namespace tfd::kernels
