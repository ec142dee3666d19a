// CheckpointManager: snapshot → file → prune, and file → verify → assign.
#include "daemon/checkpoint/checkpoint_manager.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <system_error>
#include <tuple>

#include "common/io_error.h"
#include "common/tensor_bundle/checkpoint_file.h"
#include "daemon/checkpoint/checkpoint_dir.h"
#include "daemon/checkpoint/sliced_restore.h"
#include "kernels/framework/resource.h"

namespace tfd {
namespace {

using kernels::Resource;
using Entries = std::vector<std::pair<std::string, Tensor>>;

CheckpointInfo InfoOf(const CheckpointFile& f) {
  CheckpointInfo info;
  info.step = f.step;
  info.path = f.path.string();
  info.bytes = f.bytes;
  info.mtime_unix_ms = f.mtime_ns / 1'000'000;
  return info;
}

// Reads the whole file, every checksum checked, the values charged to
// `memory` (null: not counted).
StatusOr<Entries> ReadVerified(const CheckpointFile& f,
                               const std::shared_ptr<MemoryBudget>& memory = nullptr) {
  return kernels::ReadCheckpoint(f.path, memory);
}

// The key `resource`, held under `key`, is saved under; nullopt when it is
// never checkpointed.
StatusOr<std::optional<std::string>> SavedKey(const ResourceMgr::Key& key,
                                              const Resource& resource) {
  auto ns = resource.CheckpointNamespace();
  if (!ns) return std::optional<std::string>();
  TFD_ASSIGN_OR_RETURN(std::string name,
                       CheckpointKey(key.container, resource.CheckpointName(key.name)));
  return std::optional<std::string>(std::string(*ns) + name);
}

// One entry of the checkpoint being restored, checked against the task.
struct RestoreEntry {
  std::string key;  // as in the file
  std::string container, name;  // of the resource it restores
  Tensor value;
  std::shared_ptr<Resource> existing;  // the task's resource; else null and
  kernels::RestoreHolder holder;       // what holds the value until its op runs
};

// FAILED_PRECONDITION unless `resource` keeps its entries in namespace `ns`.
Status CheckNamespace(const ResourceBase& base, std::string_view ns, const RestoreEntry& e,
                      const std::string& file) {
  const auto* resource = dynamic_cast<const Resource*>(&base);
  if (resource != nullptr && resource->CheckpointNamespace() == ns) return OkStatus();
  return errors::FailedPrecondition("resource '", e.name, "' in container '", e.container,
                                    "' is a ", base.Kind(), ", which checkpoint '", file,
                                    "' cannot restore from '", e.key, "'");
}

// Checks `key`'s value against the resource it restores, or makes what will
// hold it; assigns nothing.
StatusOr<RestoreEntry> PlanEntry(ResourceMgr& resources, std::string key, Tensor value,
                                 const std::string& file) {
  RestoreEntry e{.key = std::move(key), .value = std::move(value)};
  const std::string_view ns = kernels::CheckpointNamespaceOf(e.key);  // into e.key
  std::tie(e.container, e.name) = SplitCheckpointKey(e.key.substr(ns.size()));
  auto existing = resources.Lookup<ResourceBase>(e.container, e.name);
  if (existing.ok()) {
    TFD_RETURN_IF_ERROR(CheckNamespace(**existing, ns, e, file));
    e.existing = std::dynamic_pointer_cast<Resource>(*existing);
    TFD_RETURN_IF_ERROR(e.existing->CheckRestore(e.value, e.key, file));
  } else if (existing.status().code() == Code::kNotFound) {
    TFD_ASSIGN_OR_RETURN(
        e.holder, kernels::MakeRestoreHolder(ns, e.container, e.name, e.value, e.key, file));
  } else {
    return existing.status().WithContext("restoring '" + e.key + "' from '" + file + "'");
  }
  return e;
}

// Every entry of `values` checked before anything is assigned; variables
// first, then the other kinds' entries, each in the file's order.
StatusOr<std::vector<RestoreEntry>> PlanRestore(ResourceMgr& resources, Entries values,
                                                const std::string& file) {
  std::vector<RestoreEntry> plan;
  for (auto& [key, value] : values) {
    TFD_ASSIGN_OR_RETURN(RestoreEntry e, PlanEntry(resources, key, std::move(value), file));
    plan.push_back(std::move(e));
  }
  std::stable_partition(plan.begin(), plan.end(), [](const RestoreEntry& e) {
    return kernels::CheckpointNamespaceOf(e.key).empty();
  });
  return plan;
}

// What the checkpoint replaces: every value an earlier restore left waiting,
// and the state of every checkpointed resource it holds nothing for (a
// dataset not read when it was saved starts over).
void ForgetUnnamed(ResourceMgr& resources, const std::vector<RestoreEntry>& plan) {
  std::set<std::string> named;
  for (const RestoreEntry& e : plan) named.insert(e.key);
  for (const auto& [key, base] : resources.List()) {
    auto resource = std::dynamic_pointer_cast<Resource>(base);
    if (resource == nullptr) continue;
    if (std::dynamic_pointer_cast<kernels::PendingRestore>(resource)) {
      (void)resources.Delete(key.container, key.name);
      continue;
    }
    auto saved_key = SavedKey(key, *resource);
    if (!saved_key.ok() || (*saved_key && !named.count(**saved_key))) resource->RestoreAbsent();
  }
}

// Assigns one checked entry: to its resource, or by holding its holder
// (unless the resource's op made the resource meanwhile).
Status ApplyEntry(ResourceMgr& resources, const RestoreEntry& e, const std::string& file) {
  std::shared_ptr<Resource> target = e.existing;
  if (target == nullptr) {
    const std::shared_ptr<Resource>& holder = e.holder.resource;
    TFD_ASSIGN_OR_RETURN(target, resources.LookupOrCreate<Resource>(
                                     e.container, e.holder.held_name,
                                     [&holder]() -> StatusOr<std::shared_ptr<Resource>> {
                                       return holder;
                                     }));
    if (target == holder) return OkStatus();  // holds the value already
    TFD_RETURN_IF_ERROR(
        CheckNamespace(*target, kernels::CheckpointNamespaceOf(e.key), e, file));
  }
  TFD_RETURN_IF_ERROR(target->CheckRestore(e.value, e.key, file));
  return target->Restore(e.value, e.key);
}

}  // namespace

StatusOr<std::string> CheckpointKey(const std::string& container, const std::string& name) {
  if (container.find(':') != std::string::npos ||
      (container.empty() && name.find(':') != std::string::npos)) {
    return errors::InvalidArgument("variable '", container.empty() ? "" : container + "/", name,
                                   "' cannot be checkpointed: ':' in its container (or in its "
                                   "name in the default container) makes its key ambiguous");
  }
  std::string key = container.empty() ? name : container + ":" + name;
  if (const std::string_view ns = kernels::CheckpointNamespaceOf(key); !ns.empty()) {
    return errors::InvalidArgument("'", key, "' cannot be checkpointed: keys starting with '", ns,
                                   "' hold another kind's entries (docs/checkpoint_format.md)");
  }
  return key;
}

std::pair<std::string, std::string> SplitCheckpointKey(const std::string& key) {
  const size_t colon = key.find(':');
  if (colon == std::string::npos) return {"", key};
  return {key.substr(0, colon), key.substr(colon + 1)};
}

StatusOr<std::unique_ptr<CheckpointManager>> CheckpointManager::Open(
    Options options, ResourceMgr& resources, std::shared_ptr<spdlog::logger> logger) {
  if (options.dir.empty()) return errors::InvalidArgument("no checkpoint directory given");
  if (options.keep < 1) {
    return errors::InvalidArgument("checkpoints to keep must be at least 1, not ", options.keep);
  }
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) {
    return errors::FailedPrecondition("cannot create checkpoint directory '", options.dir.string(),
                                      "': ", ec.message());
  }
  TFD_ASSIGN_OR_RETURN(auto stale, RemoveUnfinishedSaves(options.dir));
  for (const auto& p : stale) {
    if (logger) logger->warn("removed {}, left behind by a save that did not finish", p.string());
  }
  return std::unique_ptr<CheckpointManager>(
      new CheckpointManager(std::move(options), resources, std::move(logger)));  // private ctor
}

StatusOr<CheckpointInfo> CheckpointManager::Write(int64_t step) {
  if (step < 0) return errors::InvalidArgument("checkpoint step must be >= 0, not ", step);
  std::vector<std::string> names;
  std::vector<Tensor> values;
  for (const auto& [key, base] : resources_.List()) {
    auto resource = std::dynamic_pointer_cast<Resource>(base);
    if (resource == nullptr) continue;
    // A snapshot: a variable's copy-on-write value, taken under its lock.
    auto value = resource->CheckpointValue();
    if (!value) continue;  // nothing to keep (yet)
    TFD_ASSIGN_OR_RETURN(auto saved_key, SavedKey(key, *resource));
    if (!saved_key) continue;
    if (auto slice = resource->CheckpointSlice()) {  // a shard: its rows of the whole, beside it
      names.push_back(std::string(kSliceNamespace) + *saved_key);
      values.push_back(Tensor::Scalar<std::string>(slice->ToString()));
    }
    names.push_back(std::move(*saved_key));
    values.push_back(std::move(*value));
  }
  MutexLock lock(mu_);
  const std::filesystem::path path = options_.dir / PendingCheckpointFileName(step);
  if (Status written = kernels::WriteCheckpoint(path, names, values); !written.ok()) {
    if (logger_) logger_->warn("could not save checkpoint step {}: {}", step, written.ToString());
    return written;
  }
  CheckpointInfo info;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    info.bytes = static_cast<uint64_t>(st.st_size);
    info.mtime_unix_ms = int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1'000'000;
  }
  info.path = path.string();
  info.step = step;
  info.verified = true;  // just written and synced, every checksum computed
  info.variables = static_cast<uint32_t>(names.size());
  return info;
}

StatusOr<CheckpointInfo> CheckpointManager::Commit(int64_t step) {
  MutexLock lock(mu_);
  const std::filesystem::path pending = options_.dir / PendingCheckpointFileName(step);
  const std::filesystem::path path = options_.dir / CheckpointFileName(step);
  if (::rename(pending.c_str(), path.c_str()) != 0) {
    return IoError(errno, "committing checkpoint '" + path.string() + "' (renaming '" +
                              pending.string() + "')");
  }
  // The rename survives a crash only once the directory is synced. A commit
  // that fails is undone, so that what is here matches the failed save.
  const int dir = ::open(options_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const int rc = dir < 0 ? -1 : ::fsync(dir);
  const int err = errno;
  if (dir >= 0) ::close(dir);
  if (rc != 0) {
    (void)::rename(path.c_str(), pending.c_str());
    return IoError(err, "committing checkpoint '" + path.string() + "' (syncing the directory)");
  }
  TFD_ASSIGN_OR_RETURN(auto files, ScanCheckpointDir(options_.dir));
  CheckpointInfo info;
  for (const CheckpointFile& f : files) {
    if (f.path == path) info = InfoOf(f);
  }
  info.path = path.string();
  info.step = step;
  if (auto reader = kernels::CheckpointReader::Open(path); reader.ok()) {
    info.variables = static_cast<uint32_t>((*reader)->entries().size());
    info.verified = true;  // written, synced and committed whole
  }
  if (logger_) {
    logger_->info("saved checkpoint step {} ({} variables) to {}", step, info.variables,
                  path.string());
  }
  return info;
}

StatusOr<std::vector<std::filesystem::path>> CheckpointManager::Prune(int64_t step) {
  MutexLock lock(mu_);
  return PruneCheckpoints(options_.dir, options_.keep, step);
}

Status CheckpointManager::Discard(int64_t step) {
  MutexLock lock(mu_);
  const std::filesystem::path pending = options_.dir / PendingCheckpointFileName(step);
  if (::unlink(pending.c_str()) != 0 && errno != ENOENT) {
    return IoError(errno, "discarding the unfinished checkpoint '" + pending.string() + "'");
  }
  return OkStatus();
}

Status CheckpointManager::Revert(int64_t step) {
  MutexLock lock(mu_);
  const std::filesystem::path pending = options_.dir / PendingCheckpointFileName(step);
  const std::filesystem::path path = options_.dir / CheckpointFileName(step);
  if (::rename(path.c_str(), pending.c_str()) != 0 && errno != ENOENT) {
    return IoError(errno, "taking back checkpoint '" + path.string() + "'");
  }
  if (logger_) {
    logger_->warn("took back checkpoint step {} ({}): another task could not commit its part",
                  step, path.string());
  }
  return OkStatus();
}

StatusOr<CheckpointManager::Saved> CheckpointManager::Save(int64_t step) {
  Saved saved;
  TFD_RETURN_IF_ERROR(Write(step).status());
  TFD_ASSIGN_OR_RETURN(saved.checkpoint, Commit(step));
  // A failed prune does not undo the save, which is already durable: report
  // it in the log rather than fail a checkpoint that exists.
  auto pruned = Prune(step);
  if (pruned.ok()) {
    saved.pruned = std::move(pruned).value();
  } else if (logger_) {
    logger_->warn("saved {} but could not delete older checkpoints: {}", saved.checkpoint.path,
                  pruned.status().ToString());
  }
  return saved;
}

StatusOr<std::vector<CheckpointInfo>> CheckpointManager::List(bool verify) const {
  TFD_ASSIGN_OR_RETURN(auto files, ScanCheckpointDir(options_.dir));
  std::vector<CheckpointInfo> out;
  for (const CheckpointFile& f : files) {
    CheckpointInfo info = InfoOf(f);
    if (verify) {
      auto read = ReadVerified(f);
      info.verified = read.ok();
      if (read.ok()) {
        info.variables = static_cast<uint32_t>(read->size());
      } else {
        info.problem = read.status().ToString();
      }
    } else if (auto reader = kernels::CheckpointReader::Open(f.path); reader.ok()) {
      info.variables = static_cast<uint32_t>((*reader)->entries().size());
    }
    out.push_back(std::move(info));
  }
  return out;
}

StatusOr<CheckpointManager::Restored> CheckpointManager::Restore(std::optional<int64_t> step) {
  MutexLock lock(mu_);
  TFD_ASSIGN_OR_RETURN(auto files, ScanCheckpointDir(options_.dir));
  Restored restored;
  TFD_ASSIGN_OR_RETURN(auto chosen, step.has_value() ? ReadStep(files, *step)
                                                     : ReadNewest(files, restored.skipped));
  const std::string file = chosen.first.path.string();
  auto slices = ReshardEntries(StepParts(options_.cluster_dir, options_.dir, chosen.first.step),
                               resources_, chosen.second, options_.memory);
  if (!slices.ok()) return slices.status().WithContext("restoring '" + file + "'");
  const size_t entries = chosen.second.size();
  TFD_ASSIGN_OR_RETURN(auto plan, PlanRestore(resources_, std::move(chosen.second), file));
  for (RestoreEntry& e : plan) {
    auto slice = slices->find(e.key);
    if (e.holder.resource && slice != slices->end()) e.holder.resource->RestoreSlice(slice->second);
  }
  ForgetUnnamed(resources_, plan);
  size_t variables = 0;
  for (const RestoreEntry& e : plan) {
    TFD_RETURN_IF_ERROR(ApplyEntry(resources_, e, file));
    restored.variables.push_back(e.key);
    if (kernels::CheckpointNamespaceOf(e.key).empty()) ++variables;
  }
  restored.checkpoint = InfoOf(chosen.first);
  restored.checkpoint.verified = true;
  restored.checkpoint.variables = static_cast<uint32_t>(entries);
  if (logger_) {
    logger_->info("restored checkpoint step {} ({} variables, {} other entries such as input "
                  "positions) from {}",
                  chosen.first.step, variables, entries - variables, file);
  }
  return restored;
}

StatusOr<CheckpointManager::ReadFile> CheckpointManager::ReadStep(
    const std::vector<CheckpointFile>& files, int64_t step) const {
  for (const CheckpointFile& f : files) {
    if (f.step != step) continue;
    TFD_ASSIGN_OR_RETURN(auto values, ReadVerified(f, options_.memory));
    return std::pair{f, std::move(values)};
  }
  if (!StepParts(options_.cluster_dir, options_.dir, step).empty()) {
    // A task new to the job (it grew): every variable it holds comes from
    // the other tasks' parts (ReshardEntries).
    CheckpointFile none{.step = step, .path = options_.dir / CheckpointFileName(step)};
    return std::pair{none, Entries{}};
  }
  std::string have;
  for (const CheckpointFile& f : files) have += (have.empty() ? "" : ", ") + std::to_string(f.step);
  return errors::NotFound("no checkpoint of step ", step, " in '", options_.dir.string(), "' (",
                          have.empty() ? "it holds none" : "it holds steps " + have, ")");
}

StatusOr<CheckpointManager::ReadFile> CheckpointManager::ReadNewest(
    const std::vector<CheckpointFile>& files, std::vector<std::string>& skipped) const {
  if (files.empty()) return errors::NotFound("no checkpoint in '", options_.dir.string(), "'");
  std::string problems;
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    auto read = ReadVerified(*it, options_.memory);
    if (read.ok()) return std::pair{*it, std::move(read).value()};
    // A file too large for the budget is no damaged one: restoring an
    // older step instead would silently lose the newer one's training.
    if (read.status().code() == Code::kResourceExhausted) return read.status();
    skipped.push_back(it->path.string() + ": " + read.status().ToString());
    problems += (problems.empty() ? "" : "; ") + read.status().message();
    if (logger_) {
      logger_->warn("skipping checkpoint {}: {}", it->path.string(), read.status().ToString());
    }
  }
  return errors::DataLoss("no checkpoint in '", options_.dir.string(), "' verifies: ", problems);
}

}  // namespace tfd
