// CheckpointManager: snapshot → file → prune, and file → verify → assign.
#include "daemon/checkpoint/checkpoint_manager.h"

#include <system_error>

#include "daemon/checkpoint/checkpoint_dir.h"
#include "common/tensor_bundle/checkpoint_file.h"
#include "kernels/state/variable.h"

namespace tfd {
namespace {

using kernels::Variable;

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
  return container.empty() ? name : container + ":" + name;
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
  TFD_ASSIGN_OR_RETURN(auto stale, RemoveStaleTemporaries(options.dir));
  for (const auto& p : stale) {
    if (logger) logger->warn("removed {}, left behind by a save that did not finish", p.string());
  }
  return std::unique_ptr<CheckpointManager>(
      new CheckpointManager(std::move(options), resources, std::move(logger)));  // private ctor
}

StatusOr<CheckpointManager::Saved> CheckpointManager::Save(int64_t step) {
  if (step < 0) return errors::InvalidArgument("checkpoint step must be >= 0, not ", step);
  std::vector<std::string> names;
  std::vector<Tensor> values;
  for (const auto& [key, resource] : resources_.List()) {
    auto v = std::dynamic_pointer_cast<Variable>(resource);
    if (!v || !v->initialized()) continue;
    auto value = v->Read();  // a copy-on-write snapshot, taken under the variable's lock
    if (!value.ok()) continue;  // reset meanwhile
    TFD_ASSIGN_OR_RETURN(std::string name, CheckpointKey(key.container, key.name));
    names.push_back(std::move(name));
    values.push_back(std::move(value).value());
  }

  std::lock_guard<std::mutex> lock(mu_);
  const std::filesystem::path path = options_.dir / CheckpointFileName(step);
  TFD_RETURN_IF_ERROR(kernels::WriteCheckpoint(path, names, values));
  Saved saved;
  TFD_ASSIGN_OR_RETURN(auto files, ScanCheckpointDir(options_.dir));
  for (const CheckpointFile& f : files) {
    if (f.path == path) saved.checkpoint = InfoOf(f);
  }
  saved.checkpoint.path = path.string();
  saved.checkpoint.step = step;
  saved.checkpoint.verified = true;  // just written and synced, every checksum computed
  saved.checkpoint.variables = static_cast<uint32_t>(names.size());
  // A failed prune does not undo the save, which is already durable: report
  // it in the log rather than fail a checkpoint that exists.
  auto pruned = PruneCheckpoints(options_.dir, options_.keep);
  if (pruned.ok()) {
    saved.pruned = std::move(pruned).value();
  } else if (logger_) {
    logger_->warn("saved {} but could not delete older checkpoints: {}", path.string(),
                  pruned.status().ToString());
  }
  if (logger_) {
    logger_->info("saved checkpoint step {} ({} variables) to {}", step, names.size(),
                  path.string());
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
  std::lock_guard<std::mutex> lock(mu_);
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

  // Every value checked against an existing variable before any is assigned.
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
  restored.checkpoint = InfoOf(*chosen);
  restored.checkpoint.verified = true;
  restored.checkpoint.variables = static_cast<uint32_t>(values.size());
  if (logger_) {
    logger_->info("restored checkpoint step {} ({} variables) from {}", chosen->step,
                  values.size(), chosen->path.string());
  }
  return restored;
}

}  // namespace tfd
