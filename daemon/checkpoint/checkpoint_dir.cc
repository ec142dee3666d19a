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

StatusOr<std::vector<CheckpointFile>> ScanCheckpointDir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return FsError(ec, "listing checkpoint directory '" + dir.string() + "'");
  std::vector<CheckpointFile> files;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const auto step = ParseCheckpointFileName(it->path().filename().string());
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

StatusOr<std::vector<std::filesystem::path>> PruneCheckpoints(const std::filesystem::path& dir,
                                                              int keep) {
  if (keep < 1) {
    return errors::InvalidArgument("checkpoints to keep must be at least 1, not ", keep);
  }
  TFD_ASSIGN_OR_RETURN(std::vector<CheckpointFile> files, ScanCheckpointDir(dir));
  std::vector<std::filesystem::path> deleted;
  const size_t excess = files.size() > static_cast<size_t>(keep) ? files.size() - keep : 0;
  for (size_t i = 0; i < excess; ++i) {
    std::error_code ec;
    std::filesystem::remove(files[i].path, ec);
    if (ec) return FsError(ec, "deleting old checkpoint '" + files[i].path.string() + "'");
    deleted.push_back(files[i].path);
  }
  return deleted;
}

StatusOr<std::vector<std::filesystem::path>> RemoveStaleTemporaries(
    const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return FsError(ec, "listing checkpoint directory '" + dir.string() + "'");
  std::vector<std::filesystem::path> removed;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    // WriteCheckpoint's temporary for NAME is ".NAME.tmp-XXXXXX".
    const std::string name = it->path().filename().string();
    const size_t tmp = name.rfind(".tmp-");
    if (name.empty() || name[0] != '.' || tmp == std::string::npos ||
        !ParseCheckpointFileName(std::string_view(name).substr(1, tmp - 1))) {
      continue;
    }
    std::error_code rm;
    std::filesystem::remove(it->path(), rm);
    if (rm) return FsError(rm, "deleting stale temporary '" + it->path().string() + "'");
    removed.push_back(it->path());
  }
  if (ec) return FsError(ec, "listing checkpoint directory '" + dir.string() + "'");
  return removed;
}

}  // namespace tfd
