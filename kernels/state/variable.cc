// Variable: value, copy-on-write updates and the multi-variable update helper.
#include "kernels/state/variable.h"

#include <algorithm>
#include <array>
#include <mutex>

namespace tfd::kernels {

Variable::Variable(std::string container, std::string name, DType dtype, PartialShape shape,
                   bool created_by_restore)
    : container_(std::move(container)),
      name_(std::move(name)),
      dtype_(dtype),
      declared_shape_(std::move(shape)),
      created_by_restore_(created_by_restore) {}

bool Variable::AcceptsDeclaration(DType dtype, const PartialShape& shape) const {
  if (dtype != dtype_) return false;
  if (shape == declared_shape_) return true;
  return created_by_restore_ && shape.IsCompatibleWith(declared_shape_);
}

std::string Variable::FullName() const {
  return container_.empty() ? name_ : container_ + "/" + name_;
}

std::string Variable::DebugString() const {
  MutexLock lock(mu_);
  if (!initialized_) {
    return std::string(DTypeName(dtype_)) + declared_shape_.ToString() + " uninitialized";
  }
  return value_.Describe() + " initialized";
}

ResourceDescription Variable::Describe() const {
  MutexLock lock(mu_);
  return {.kind = std::string(kVariableKind),
          .initialized = initialized_,
          .dtype = dtype_,
          .shape = declared_shape_,
          .bytes = initialized_ ? value_.total_bytes() : 0,
          .slice = slice_};
}

std::optional<SaveSliceInfo> Variable::CheckpointSlice() const {
  MutexLock lock(mu_);
  return slice_;
}

void Variable::SetSlice(SaveSliceInfo slice) {
  MutexLock lock(mu_);
  if (slice_ != slice) slice_ = std::move(slice);
}

std::optional<Tensor> Variable::CheckpointValue() const {
  auto value = Read();  // a copy-on-write snapshot, taken under the lock
  if (!value.ok()) return std::nullopt;  // never assigned
  return std::move(value).value();
}

Status Variable::CheckRestore(const Tensor& saved, const std::string& key,
                              const std::string& file) const {
  if (dtype_ != saved.dtype() || !declared_shape_.IsCompatibleWith(saved.shape())) {
    return errors::FailedPrecondition("variable '", FullName(), "' is declared ",
                                      DTypeName(dtype_), declared_shape_.ToString(),
                                      " but checkpoint '", file, "' holds ", saved.Describe(),
                                      " for '", key, "'");
  }
  return OkStatus();
}

Status Variable::Restore(const Tensor& saved, const std::string&) {
  // The declared shape was checked; the value may change the current shape
  // as an Assign with validate_shape=false may. A restored value is a fresh
  // allocation of the checkpoint reader's (common/tensor_bundle).
  return AssignValue(saved, /*validate_shape=*/false, /*owned=*/true);
}

StatusOr<std::shared_ptr<Variable>> MakeRestoredVariable(const std::string& container,
                                                         const std::string& name,
                                                         const Tensor& saved) {
  auto v = std::make_shared<Variable>(container, name, saved.dtype(), PartialShape(saved.shape()),
                                      /*created_by_restore=*/true);
  TFD_RETURN_IF_ERROR(v->Restore(saved, name));
  return v;
}

bool Variable::initialized() const {
  MutexLock lock(mu_);
  return initialized_;
}

Status Variable::CheckInitializedLocked() const {
  if (!initialized_) {
    return errors::FailedPrecondition("variable '", FullName(), "' is uninitialized");
  }
  return OkStatus();
}

StatusOr<Tensor> Variable::Read() const {
  MutexLock lock(mu_);
  TFD_RETURN_IF_ERROR(CheckInitializedLocked());
  return value_;
}

Status Variable::Assign(const Tensor& value, bool validate_shape) {
  // Only Buffer::Allocate attaches a budget, and a kernel's outputs all
  // carry the task's: such a buffer is this process's own memory.
  const bool allocated = value.buffer() != nullptr && value.buffer()->budget() != nullptr;
  return AssignValue(value, validate_shape, allocated);
}

Status Variable::AssignValue(const Tensor& value, bool validate_shape, bool owned) {
  if (value.dtype() != dtype_) {
    return errors::InvalidArgument("variable '", FullName(), "' is ", DTypeName(dtype_),
                                   " but the assigned value is ", value.Describe());
  }
  MutexLock lock(mu_);
  if (validate_shape) {
    if (!declared_shape_.IsCompatibleWith(value.shape())) {
      return errors::InvalidArgument("variable '", FullName(), "' was declared with shape ",
                                     declared_shape_.ToString(), " but the assigned value is ",
                                     value.Describe(), " (validate_shape=false allows it)");
    }
    if (initialized_ && !(value_.shape() == value.shape())) {
      return errors::InvalidArgument("variable '", FullName(), "' holds ", value_.Describe(),
                                     " but the assigned value is ", value.Describe(),
                                     " (validate_shape=false allows it)");
    }
  }
  value_ = value;
  own_buffer_ = owned;
  initialized_ = true;
  return OkStatus();
}

Status Variable::MakeWritableLocked() {
  if (writable_in_place_locked()) return OkStatus();
  TFD_ASSIGN_OR_RETURN(Tensor copy, value_.DeepCopy());
  SetOwnedValueLocked(std::move(copy));
  return OkStatus();
}

void Variable::SetOwnedValueLocked(Tensor value) {
  value_ = std::move(value);
  own_buffer_ = true;
  initialized_ = true;
}

namespace {

// Values of type T for n variables: in place for up to kInlineVariables,
// on the heap beyond.
template <typename T>
class PerVariable {
 public:
  explicit PerVariable(size_t n) : n_(n) {
    if (n > kInlineVariables) more_.resize(n);
  }
  T* data() { return n_ > kInlineVariables ? more_.data() : inline_.data(); }
  std::span<T> span() { return {data(), n_}; }

 private:
  size_t n_;
  std::array<T, kInlineVariables> inline_{};
  std::vector<T> more_;
};

// The variables' locks, taken in address order so that two updates naming
// the same variables in different orders cannot deadlock.
class VariableLocks {
 public:
  explicit VariableLocks(std::span<Variable* const> vars)
      : order_(vars.size()), locks_(vars.size()) {
    std::span<Variable*> order = order_.span();
    std::copy(vars.begin(), vars.end(), order.begin());
    std::sort(order.begin(), order.end());
    const auto end = std::unique(order.begin(), order.end());
    std::span<std::unique_lock<Mutex>> locks = locks_.span();
    for (auto it = order.begin(); it != end; ++it) {
      locks[it - order.begin()] = std::unique_lock<Mutex>((*it)->mu());
    }
  }
  void Unlock() {
    for (std::unique_lock<Mutex>& l : locks_.span()) {
      if (l.owns_lock()) l.unlock();
    }
  }

 private:
  PerVariable<Variable*> order_;
  PerVariable<std::unique_lock<Mutex>> locks_;
};

}  // namespace

// Not analysed: clang cannot follow VariableLocks, a set of locks chosen at
// run time. Every *Locked call below runs while it holds that variable's lock.
Status UpdateVariables(std::span<Variable* const> vars, bool use_locking,
                       const VariableUpdateFn& fn) NO_THREAD_SAFETY_ANALYSIS {
  VariableLocks locks(vars);
  bool all_in_place = true;
  for (Variable* v : vars) {
    TFD_RETURN_IF_ERROR(v->CheckInitializedLocked());
    all_in_place = all_in_place && v->writable_in_place_locked();
  }
  if (use_locking || all_in_place) {
    for (Variable* v : vars) TFD_RETURN_IF_ERROR(v->MakeWritableLocked());
    // `values` shares the buffers only until it is destroyed on return,
    // before the locks are released, so the next update still finds them
    // unshared.
    PerVariable<Tensor> values(vars.size());
    std::span<Tensor> v = values.span();
    for (size_t i = 0; i < vars.size(); ++i) v[i] = vars[i]->value_locked();
    return fn(v);
  }

  // A reader holds some buffer: copy outside the locks, update the copies,
  // install them. Whatever another unlocked update installed meanwhile is
  // overwritten — the lost update TensorFlow also allows without use_locking.
  std::vector<Tensor> snapshots;
  for (Variable* v : vars) snapshots.push_back(v->value_locked());
  locks.Unlock();
  std::vector<Tensor> copies;
  for (const Tensor& s : snapshots) {
    TFD_ASSIGN_OR_RETURN(Tensor c, s.DeepCopy());
    copies.push_back(std::move(c));
  }
  snapshots.clear();
  TFD_RETURN_IF_ERROR(fn(std::span<Tensor>(copies)));
  for (size_t i = 0; i < vars.size(); ++i) {
    MutexLock lock(vars[i]->mu());
    vars[i]->SetOwnedValueLocked(std::move(copies[i]));
  }
  return OkStatus();
}

}  // namespace tfd::kernels
