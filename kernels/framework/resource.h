// kernels::Resource: all the daemon knows of a task's stateful resources —
// variables, queues, datasets, and whatever kind comes next. Checkpoints
// save and restore them, the metrics page and `tfctl vars` describe them,
// through this interface alone, so a new kind of resource changes nothing
// in daemon/ (scripts/check-layers.py keeps daemon/ off the concrete
// headers).
//
// Checkpoints (docs/checkpoint_format.md). A resource with a checkpoint
// namespace is saved as one tensor, under NAMESPACE + its variable-style key
// ("name", or "container:name" outside the default container). Variables
// have the empty namespace; every other kind's is "@word/" ("@input/" for a
// dataset's position), so the kind of an entry is read off its key. An entry
// whose resource the task does not hold yet is kept by a holder until the
// resource's op creates the resource (MakeRestoreHolder): a variable is made
// at once, anything else waits as a PendingRestore that the op takes up by
// creating the resource with LookupOrCreateRestored.
//
//   class Counter final : public kernels::Resource {        // a new kind
//     std::optional<std::string_view> CheckpointNamespace() const override { return "@counter/"; }
//     std::optional<Tensor> CheckpointValue() const override { return Tensor::Scalar(n_); }
//     Status CheckRestore(const Tensor& saved, ...) const override;  // int64 scalar?
//     Status Restore(const Tensor& saved, const std::string& key) override { ... }
//     ResourceDescription Describe() const override {
//       return {.kind = "counter", .gauges = {{"value", "Each counter's value.", n_}}};
//     }
//   };
//   // In its op: made on the first run, taking up what a restore left for it.
//   auto c = LookupOrCreateRestored<Counter>(rm, "@counter/", container, name, make_counter);
//
// Thread-safety: every method may be called from any thread; each resource
// guards its own state.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/dtype.h"
#include "common/resource_mgr.h"
#include "common/save_slice_info.h"
#include "common/shape.h"
#include "common/status.h"
#include "common/tensor.h"

namespace tfd::kernels {

// What the metrics page and listings show of a resource.
struct ResourceDescription {
  // A number the metrics page shows as the gauge tfd_<kind>_<name>, labelled
  // <kind>="container/name" (a queue's size: tfd_queue_size{queue="q"}).
  struct Gauge {
    std::string name;  // [a-z_]: "size"
    std::string help;  // one sentence: "Elements waiting in each queue on this task."
    double value = 0;
  };
  std::string kind;         // [a-z_]: "variable", "queue", "idx_dataset"
  bool initialized = true;  // false: declared, holding nothing yet
  // Of a resource that holds one tensor (a variable); kInvalid otherwise.
  DType dtype = DType::kInvalid;
  PartialShape shape;  // as declared
  uint64_t bytes = 0;  // of the current value
  // Of a shard of a partitioned variable: its slice of the whole.
  std::optional<SaveSliceInfo> slice;
  std::vector<Gauge> gauges;
};

// The kind of variables, which the daemon counts and lists by name.
inline constexpr std::string_view kVariableKind = "variable";

class Resource : public ResourceBase {
 public:
  virtual ResourceDescription Describe() const = 0;

  // The namespace this resource's checkpoint entry is keyed in; nullopt (the
  // default): never checkpointed.
  virtual std::optional<std::string_view> CheckpointNamespace() const { return std::nullopt; }
  // The name the entry is keyed by: the resource's own, which it is held
  // under (`held_name`); a PendingRestore's, that of the resource it waits for.
  virtual std::string CheckpointName(const std::string& held_name) const { return held_name; }
  // The tensor to save now; nullopt when there is nothing to keep (a variable
  // never assigned, a dataset never read).
  virtual std::optional<Tensor> CheckpointValue() const { return std::nullopt; }
  // Of a shard of a partitioned variable: which rows of the logical variable
  // it holds, saved beside its value so that a restore into another
  // sharding finds them (daemon/checkpoint/sliced_restore.h). nullopt for
  // anything else.
  virtual std::optional<SaveSliceInfo> CheckpointSlice() const { return std::nullopt; }
  // A restore made this resource for a shard's entry saved with `slice`.
  virtual void RestoreSlice(const SaveSliceInfo& /*slice*/) {}
  // Whether `saved`, the entry `key` of checkpoint `file`, would restore into
  // this resource now; changes nothing. Errors name the resource, key and file.
  virtual Status CheckRestore(const Tensor& saved, const std::string& key,
                              const std::string& file) const;
  // Takes `saved` up; CheckRestore passed just before.
  virtual Status Restore(const Tensor& saved, const std::string& key);
  // A restore from a checkpoint holding nothing for this resource: left
  // alone by default (a variable keeps its value); a dataset starts over.
  virtual void RestoreAbsent() {}
};

// The namespace of a checkpoint key: "@word/" when it starts so (word: one
// or more of [a-z0-9_]), else "" (a variable's).
std::string_view CheckpointNamespaceOf(std::string_view key);

// A saved value whose resource this task has not created yet, held under
// (container, PendingRestoreName(ns, name)) until the resource's op creates
// the resource, which takes the value up (LookupOrCreateRestored). Saved
// again meanwhile, so that a save in between loses nothing; every restore
// replaces all of them. Immutable.
class PendingRestore : public Resource {
 public:
  PendingRestore(std::string ns, std::string name, Tensor saved, std::string file)
      : ns_(std::move(ns)), name_(std::move(name)), saved_(std::move(saved)),
        file_(std::move(file)) {}

  std::string_view Kind() const override { return "restored value"; }
  std::string DebugString() const override;
  ResourceDescription Describe() const override { return {.kind = "pending_restore"}; }
  std::optional<std::string_view> CheckpointNamespace() const override { return ns_; }
  std::string CheckpointName(const std::string&) const override { return name_; }
  std::optional<Tensor> CheckpointValue() const override { return saved_; }
  // A later restore replaces the holder itself (restores are serialised), so
  // CheckRestore and Restore keep the default: refused.

  const std::string& name() const { return name_; }  // of the resource it waits for
  const Tensor& saved() const { return saved_; }
  const std::string& file() const { return file_; }  // the checkpoint it came from

  // Has `made`, a resource being created under its name, take the value up.
  Status HandTo(Resource& made) const;

 private:
  const std::string ns_;
  const std::string name_;
  const Tensor saved_;
  const std::string file_;
};

std::string PendingRestoreName(std::string_view ns, const std::string& name);

// ResourceMgr::LookupOrCreate for a kind of resource checkpointed in
// namespace `ns`: a resource it creates first takes up the value a restore
// left for it, if any (an error there fails the creation, and the value
// stays for a later try). For the resource's op; a variable's and a
// dataset's ops have their own ways (restores make variables at once).
template <typename T>
StatusOr<std::shared_ptr<T>> LookupOrCreateRestored(
    ResourceMgr& resources, std::string_view ns, const std::string& container,
    const std::string& name, const std::function<StatusOr<std::shared_ptr<T>>()>& create) {
  auto found = resources.Lookup<T>(container, name);
  if (found.ok() || found.status().code() != Code::kNotFound) return found;
  // Looked up before LookupOrCreate, which holds the manager's lock while
  // `create` runs.
  const std::string held = PendingRestoreName(ns, name);
  auto pending = resources.Lookup<PendingRestore>(container, held);
  bool adopted = false;
  auto take_up = [&]() -> StatusOr<std::shared_ptr<T>> {
    TFD_ASSIGN_OR_RETURN(std::shared_ptr<T> r, create());
    if (pending.ok()) {
      TFD_RETURN_IF_ERROR((*pending)->HandTo(*r));
      adopted = true;
    }
    return r;
  };
  auto made = resources.LookupOrCreate<T>(container, name, take_up);
  if (adopted) (void)resources.Delete(container, held);
  return made;
}

// What holds checkpoint entry `key` (namespace `ns`, resource (container,
// name)) on a task that holds no resource for it: a variable made for it
// (created_by_restore), an input position waiting for
// its dataset, or else a PendingRestore; held under `held_name`, holding
// `saved` already.
// INVALID_ARGUMENT naming `key` when `saved` cannot be what the namespace
// holds (an input position that is not int64[7]).
struct RestoreHolder {
  std::string held_name;
  std::shared_ptr<Resource> resource;
};
StatusOr<RestoreHolder> MakeRestoreHolder(std::string_view ns, const std::string& container,
                                          const std::string& name, const Tensor& saved,
                                          const std::string& key, const std::string& file);

}  // namespace tfd::kernels
