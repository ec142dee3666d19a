// AtomicFile: replaces a file so that readers see the old contents or the
// new, never a mix, and a failure leaves the old file as it was. The bytes go
// to a temporary file beside the target (".NAME.tmp-XXXXXX": the same file
// system, so the rename is atomic), which Commit renames over the target;
// an AtomicFile dropped without a successful Commit removes its temporary.
// With `sync`, the file is fsync'ed before the rename and the directory
// after it, so that the new contents survive a crash once Commit returns.
//
//   TFD_RETURN_IF_ERROR(WriteFileAtomically("g.capnp", bytes));
//
//   TFD_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(path, {.sync = true}));
//   TFD_RETURN_IF_ERROR(file.Append(header));    // as often as needed
//   TFD_RETURN_IF_ERROR(file.Commit());
//
// Errors name the target path and say which step failed; the code follows
// the cause (common/io_error.h): NOT_FOUND for a missing directory,
// FAILED_PRECONDITION for permissions or a read-only file system,
// UNAVAILABLE for a full disk or a file-size limit.
//
// Thread-safety: an AtomicFile belongs to one thread at a time.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tfd {

struct AtomicFileOptions {
  // fsync the file before the rename and its directory after it.
  bool sync = false;
  // The new file's mode, less the umask (as for any file created).
  mode_t mode = 0644;
  // What the file is, for error messages: "checkpoint" gives
  // "writing checkpoint '/d/x': ...". Empty: "writing '/d/x': ...".
  std::string description;
};

class AtomicFile {
 public:
  // Creates the temporary file beside `path`. The target itself is not
  // touched until Commit.
  static StatusOr<AtomicFile> Create(const std::filesystem::path& path,
                                     const AtomicFileOptions& options = {});

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  // Removes the temporary file unless Commit succeeded.
  ~AtomicFile();

  // Writes `n` bytes at the end of the new contents. A failure removes the
  // temporary file, and every later Append and Commit returns it.
  Status Append(const void* data, size_t n);
  Status Append(std::string_view bytes) { return Append(bytes.data(), bytes.size()); }
  // Closes the temporary file and renames it over the target (syncing as
  // asked). Call once; on failure the target is as it was, unless only the
  // directory sync after the rename failed.
  Status Commit();

  const std::filesystem::path& path() const { return path_; }
  // The temporary file, while there is one.
  const std::filesystem::path& temp_path() const { return temp_; }

 private:
  AtomicFile(std::filesystem::path path, std::filesystem::path temp, int fd,
             AtomicFileOptions options);
  // "writing [description ]'PATH'", the start of every error message.
  std::string What() const;
  // Closes and removes the temporary file, if any.
  void Abandon();

  std::filesystem::path path_;
  std::filesystem::path temp_;
  int fd_ = -1;
  AtomicFileOptions options_;
  Status error_;  // the first failure of Append
};

// `bytes` as the whole new contents of `path`, through an AtomicFile.
Status WriteFileAtomically(const std::filesystem::path& path, std::string_view bytes,
                           const AtomicFileOptions& options = {});

}  // namespace tfd
