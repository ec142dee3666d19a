// CheckpointManager: snapshot → file → prune, and file → verify → assign.
#include "daemon/checkpoint/checkpoint_manager.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>
#include <system_error>

#include "common/io_error.h"

#include "daemon/checkpoint/checkpoint_dir.h"
#include "common/tensor_bundle/checkpoint_file.h"
#include "kernels/data/idx_dataset.h"
#include "kernels/data/input_position.h"
#include "kernels/state/variable.h"

namespace tfd {
namespace {

using kernels::Variable;
using kernels::data::DatasetKeyOfPosition;
using kernels::data::IdxDataset;
using kernels::data::InputPosition;
using kernels::data::InputPositionKey;
using kernels::data::PendingInputPosition;
using kernels::data::PendingPositionName;

// A dataset's position on this task, to be saved: its cursor, or one
// restored earlier that no dataset has taken up yet (so that a save in
// between does not lose it). nullopt for every other resource.
std::optional<std::pair<std::string, InputPosition>> SavedPosition(
    const ResourceMgr::Key& key, const std::shared_ptr<ResourceBase>& resource) {
  if (auto ds = std::dynamic_pointer_cast<IdxDataset>(resource)) {
    auto p = ds->Position();
    if (p) return std::pair{key.name, *p};
  } else if (auto pending = std::dynamic_pointer_cast<PendingInputPosition>(resource)) {
    if (auto name = DatasetKeyOfPosition(key.name)) return std::pair{*name, pending->position()};
  }
  return std::nullopt;
}

// Moves every dataset of the task to the position `positions` (dataset key,
// position; each already checked) gives it. A dataset not created yet gets
// a pending position, replacing one an earlier restore left; a dataset the
// checkpoint does not name, which had not been read when it was saved,
// starts over, and a pending position for it is dropped.
Status PlaceInputPositions(ResourceMgr& resources,
                           const std::vector<std::pair<std::string, InputPosition>>& positions) {
  std::set<std::string> named;
  for (const auto& [key, position] : positions) named.insert(key);
  for (const auto& [key, resource] : resources.List()) {
    if (auto ds = std::dynamic_pointer_cast<IdxDataset>(resource)) {
      auto saved_key = CheckpointKey(key.container, key.name);
      if (!saved_key.ok() || !named.count(*saved_key)) ds->Reset();
    } else if (std::dynamic_pointer_cast<PendingInputPosition>(resource)) {
      (void)resources.Delete(key.container, key.name);
    }
  }
  for (const auto& [key, position] : positions) {
    auto [container, name] = SplitCheckpointKey(key);
    auto existing = resources.Lookup<IdxDataset>(container, name);
    if (existing.ok()) {
      TFD_RETURN_IF_ERROR((*existing)->SetPosition(position));
      continue;
    }
    // Taken up by the dataset's op when it creates the dataset.
    TFD_RETURN_IF_ERROR(resources
                            .LookupOrCreate<PendingInputPosition>(
                                container, PendingPositionName(name),
                                [&position = position]()
                                    -> StatusOr<std::shared_ptr<PendingInputPosition>> {
                                  return std::make_shared<PendingInputPosition>(position);
                                })
                            .status());
  }
  return OkStatus();
}

CheckpointInfo InfoOf(const CheckpointFile& f) {
  CheckpointInfo info;
  info.step = f.step;
  info.path = f.path.string();
  info.bytes = f.bytes;
  info.mtime_unix_ms = f.mtime_ns / 1'000'000;
  return info;
}

// Reads the whole file, every checksum checked.
StatusOr<std::vector<std::pair<std::string, Tensor>>> ReadVerified(const CheckpointFile& f) {
  return kernels::ReadCheckpoint(f.path);
}

// A value's fit with the variable it would go to; nothing is assigned.
Status CheckFits(const Variable& v, const std::string& key, const Tensor& value,
                 const std::string& path) {
  if (v.dtype() != value.dtype() || !v.declared_shape().IsCompatibleWith(value.shape())) {
    return errors::FailedPrecondition(
        "variable '", v.FullName(), "' is declared ", DTypeName(v.dtype()),
        v.declared_shape().ToString(), " but checkpoint '", path, "' holds ", value.Describe(),
        " for '", key, "'");
  }
  return OkStatus();
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
  if (DatasetKeyOfPosition(key)) {
    return errors::InvalidArgument("'", key, "' cannot be checkpointed: keys starting with '",
                                   kernels::data::kInputPositionKeyPrefix,
                                   "' hold input positions");
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
  for (const auto& [key, resource] : resources_.List()) {
    if (auto position = SavedPosition(key, resource)) {
      TFD_ASSIGN_OR_RETURN(std::string name, CheckpointKey(key.container, position->first));
      names.push_back(InputPositionKey(name));
      values.push_back(position->second.ToTensor());
      continue;
    }
    auto v = std::dynamic_pointer_cast<Variable>(resource);
    if (!v || !v->initialized()) continue;
    auto value = v->Read();  // a copy-on-write snapshot, taken under the variable's lock
    if (!value.ok()) continue;  // reset meanwhile
    TFD_ASSIGN_OR_RETURN(std::string name, CheckpointKey(key.container, key.name));
    names.push_back(std::move(name));
    values.push_back(std::move(value).value());
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
  std::vector<std::pair<std::string, Tensor>> values;
  const CheckpointFile* chosen = nullptr;
  if (step.has_value()) {
    for (const CheckpointFile& f : files) {
      if (f.step == *step) chosen = &f;
    }
    if (chosen == nullptr) {
      std::string have;
      for (const CheckpointFile& f : files) have += (have.empty() ? "" : ", ") + std::to_string(f.step);
      return errors::NotFound("no checkpoint of step ", *step, " in '", options_.dir.string(),
                              "' (", have.empty() ? "it holds none" : "it holds steps " + have,
                              ")");
    }
    TFD_ASSIGN_OR_RETURN(values, ReadVerified(*chosen));
  } else {
    if (files.empty()) {
      return errors::NotFound("no checkpoint in '", options_.dir.string(), "'");
    }
    std::string problems;
    for (auto it = files.rbegin(); it != files.rend() && chosen == nullptr; ++it) {
      auto read = ReadVerified(*it);
      if (read.ok()) {
        chosen = &*it;
        values = std::move(read).value();
        continue;
      }
      restored.skipped.push_back(it->path.string() + ": " + read.status().ToString());
      problems += (problems.empty() ? "" : "; ") + read.status().message();
      if (logger_) {
        logger_->warn("skipping checkpoint {}: {}", it->path.string(), read.status().ToString());
      }
    }
    if (chosen == nullptr) {
      return errors::FailedPrecondition("no checkpoint in '", options_.dir.string(),
                                        "' verifies: ", problems);
    }
  }

  // Dataset positions apart from variables; every value checked against what
  // exists before anything is assigned.
  std::vector<std::pair<std::string, Tensor>> variables;
  std::vector<std::pair<std::string, InputPosition>> positions;  // dataset key, position
  for (auto& [key, value] : values) {
    auto dataset = DatasetKeyOfPosition(key);
    if (!dataset) {
      variables.emplace_back(key, std::move(value));
      continue;
    }
    TFD_ASSIGN_OR_RETURN(InputPosition p, InputPosition::FromTensor(value, key));
    auto [container, name] = SplitCheckpointKey(*dataset);
    auto existing = resources_.Lookup<IdxDataset>(container, name);
    if (existing.ok()) {
      TFD_RETURN_IF_ERROR((*existing)->AcceptsPosition(p).WithContext(
          "restoring from '" + chosen->path.string() + "'"));
    } else if (existing.status().code() != Code::kNotFound) {
      return existing.status().WithContext("restoring '" + key + "' from '" +
                                           chosen->path.string() + "'");
    }
    positions.emplace_back(*dataset, p);
  }
  values = std::move(variables);
  for (const auto& [key, value] : values) {
    auto [container, name] = SplitCheckpointKey(key);
    auto existing = resources_.Lookup<Variable>(container, name);
    if (existing.ok()) {
      TFD_RETURN_IF_ERROR(CheckFits(**existing, key, value, chosen->path.string()));
    } else if (existing.status().code() != Code::kNotFound) {
      return existing.status().WithContext("restoring '" + key + "' from '" +
                                           chosen->path.string() + "'");
    }
  }
  for (const auto& [key, value] : values) {
    auto [container, name] = SplitCheckpointKey(key);
    // Captured by name: lambdas may not capture structured bindings before
    // C++20's P1091, which clang 14 does not implement.
    TFD_ASSIGN_OR_RETURN(
        auto var, resources_.LookupOrCreate<Variable>(
                      container, name,
                      [&container = container, &name = name,
                       &value = value]() -> StatusOr<std::shared_ptr<Variable>> {
                        return std::make_shared<Variable>(container, name, value.dtype(),
                                                          PartialShape(value.shape()),
                                                          /*created_by_restore=*/true);
                      }));
    TFD_RETURN_IF_ERROR(CheckFits(*var, key, value, chosen->path.string()));
    // The declared shape was checked; the value may change the current shape
    // as an Assign with validate_shape=false may.
    TFD_RETURN_IF_ERROR(var->Assign(value, /*validate_shape=*/false));
    restored.variables.push_back(key);
  }
  TFD_RETURN_IF_ERROR(PlaceInputPositions(resources_, positions));
  for (const auto& [key, position] : positions) restored.variables.push_back(InputPositionKey(key));
  restored.checkpoint = InfoOf(*chosen);
  restored.checkpoint.verified = true;
  restored.checkpoint.variables = static_cast<uint32_t>(values.size() + positions.size());
  if (logger_) {
    logger_->info("restored checkpoint step {} ({} variables, {} input positions) from {}",
                  chosen->step, values.size(), positions.size(), chosen->path.string());
  }
  return restored;
}

}  // namespace tfd
