// Checkpoint directory layout: names, scanning in write order, pruning.
#include "daemon/checkpoint/checkpoint_dir.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <system_error>

namespace tfd {
namespace {

constexpr std::string_view kPrefix = "ckpt-";
constexpr std::string_view kSuffix = ".tfdckpt";
constexpr std::string_view kPending = ".pending";

Status FsError(const std::error_code& ec, const std::string& what) {
  const std::string msg = what + ": " + ec.message();
  if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) {
    return errors::NotFound(msg);
  }
  if (ec == std::errc::permission_denied || ec == std::errc::operation_not_permitted ||
      ec == std::errc::read_only_file_system) {
    return errors::FailedPrecondition(msg);
  }
  return errors::Internal(msg);
}

bool Newer(const CheckpointFile& a, const CheckpointFile& b) {
  return a.mtime_ns != b.mtime_ns ? a.mtime_ns > b.mtime_ns : a.step > b.step;
}

// The regular files in `dir` whose names `parse` gives a step, oldest first.
StatusOr<std::vector<CheckpointFile>> Scan(
    const std::filesystem::path& dir, std::optional<int64_t> (*parse)(std::string_view)) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return FsError(ec, "listing checkpoint directory '" + dir.string() + "'");
  std::vector<CheckpointFile> files;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const auto step = parse(it->path().filename().string());
    if (!step) continue;
    struct stat st;
    if (::stat(it->path().c_str(), &st) != 0) {
      if (errno == ENOENT) continue;  // pruned meanwhile
      return FsError(std::error_code(errno, std::generic_category()),
                     "reading checkpoint '" + it->path().string() + "'");
    }
    if (!S_ISREG(st.st_mode)) continue;
    files.push_back({*step, it->path(), static_cast<uint64_t>(st.st_size),
                     int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec});
  }
  if (ec) return FsError(ec, "listing checkpoint directory '" + dir.string() + "'");
  std::sort(files.begin(), files.end(),
            [](const CheckpointFile& a, const CheckpointFile& b) { return Newer(b, a); });
  return files;
}

// What a save that did not finish leaves: a writer's temporary file for a
// checkpoint or a pending part (".NAME.tmp-XXXXXX", WriteCheckpoint's), or
// a pending part.
bool IsLeftOver(const std::string& name) {
  if (ParsePendingCheckpointFileName(name)) return true;
  const size_t tmp = name.rfind(".tmp-");
  if (name.empty() || name[0] != '.' || tmp == std::string::npos) return false;
  const std::string_view target = std::string_view(name).substr(1, tmp - 1);
  return ParseCheckpointFileName(target) || ParsePendingCheckpointFileName(target);
}

}  // namespace

std::string CheckpointFileName(int64_t step) {
  return std::string(kPrefix) + std::to_string(step) + std::string(kSuffix);
}

std::optional<int64_t> ParseCheckpointFileName(std::string_view name) {
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(kSuffix)) {
    return std::nullopt;
  }
  const std::string_view digits =
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  // One spelling per step, so two files never claim the same one.
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
  int64_t step = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
  if (ec != std::errc() || end != digits.data() + digits.size() || step < 0) return std::nullopt;
  return step;
}

std::string PendingCheckpointFileName(int64_t step) {
  return CheckpointFileName(step) + std::string(kPending);
}

std::optional<int64_t> ParsePendingCheckpointFileName(std::string_view name) {
  if (!name.ends_with(kPending)) return std::nullopt;
  return ParseCheckpointFileName(name.substr(0, name.size() - kPending.size()));
}

StatusOr<std::vector<CheckpointFile>> ScanCheckpointDir(const std::filesystem::path& dir) {
  return Scan(dir, ParseCheckpointFileName);
}

StatusOr<std::vector<CheckpointFile>> ScanPendingCheckpoints(const std::filesystem::path& dir) {
  return Scan(dir, ParsePendingCheckpointFileName);
}

StatusOr<std::vector<std::filesystem::path>> PruneCheckpoints(const std::filesystem::path& dir,
                                                              int keep, int64_t complete) {
  if (keep < 1) {
    return errors::InvalidArgument("checkpoints to keep must be at least 1, not ", keep);
  }
  TFD_ASSIGN_OR_RETURN(std::vector<CheckpointFile> files, ScanCheckpointDir(dir));
  TFD_ASSIGN_OR_RETURN(std::vector<CheckpointFile> pending, ScanPendingCheckpoints(dir));
  const CheckpointFile* kept = nullptr;
  for (const CheckpointFile& f : files) {
    if (f.step == complete) kept = &f;
  }
  if (kept == nullptr) {
    return errors::NotFound("no checkpoint of step ", complete, " in '", dir.string(),
                            "' to keep; deleting nothing");
  }
  // Oldest first: the files older than the complete one, less its keep - 1
  // newest, then the pending parts older than it.
  std::vector<const CheckpointFile*> doomed;
  std::vector<const CheckpointFile*> older;
  for (const CheckpointFile& f : files) {
    if (Newer(*kept, f)) older.push_back(&f);
  }
  const size_t spare = static_cast<size_t>(keep - 1);
  if (older.size() > spare) doomed.assign(older.begin(), older.end() - spare);
  for (const CheckpointFile& f : pending) {
    if (Newer(*kept, f)) doomed.push_back(&f);
  }
  std::vector<std::filesystem::path> deleted;
  for (const CheckpointFile* f : doomed) {
    std::error_code ec;
    std::filesystem::remove(f->path, ec);
    if (ec) return FsError(ec, "deleting old checkpoint '" + f->path.string() + "'");
    deleted.push_back(f->path);
  }
  return deleted;
}

StatusOr<std::vector<std::filesystem::path>> RemoveUnfinishedSaves(
    const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return FsError(ec, "listing checkpoint directory '" + dir.string() + "'");
  std::vector<std::filesystem::path> removed;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (!IsLeftOver(it->path().filename().string())) continue;
    std::error_code rm;
    std::filesystem::remove(it->path(), rm);
    if (rm) {
      return FsError(rm, "deleting what a save left unfinished: '" + it->path().string() + "'");
    }
    removed.push_back(it->path());
  }
  if (ec) return FsError(ec, "listing checkpoint directory '" + dir.string() + "'");
  return removed;
}

}  // namespace tfd
