#include "common/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <random>

#include "common/io_error.h"

namespace tfd {
namespace {

// ".NAME.tmp-" and six random letters or digits: hidden from `ls`, and
// recognisable as a leftover (daemon/checkpoint/checkpoint_dir.h removes
// those of checkpoints).
std::filesystem::path TempName(const std::filesystem::path& path, std::mt19937& random) {
  static constexpr char kChars[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::uniform_int_distribution<size_t> pick(0, sizeof(kChars) - 2);
  std::string name = "." + path.filename().string() + ".tmp-";
  for (int i = 0; i < 6; ++i) name += kChars[pick(random)];
  return path.parent_path() / name;
}

}  // namespace

StatusOr<AtomicFile> AtomicFile::Create(const std::filesystem::path& path,
                                        const AtomicFileOptions& options) {
  AtomicFile file(path, {}, -1, options);
  if (path.filename().empty() || path.filename() == "." || path.filename() == "..") {
    return errors::InvalidArgument(file.What(), ": the path names a directory");
  }
  // Not mkstemp: it makes the file 0600 whatever the umask says; O_EXCL
  // with a fresh random name is as safe and gives the file the mode that
  // any file this process creates would have.
  std::mt19937 random(std::random_device{}());
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::filesystem::path temp = TempName(path, random);
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, options.mode);
    if (fd >= 0) {
      file.temp_ = std::move(temp);
      file.fd_ = fd;
      return file;
    }
    if (errno != EEXIST) return IoError(errno, file.What() + " (creating a temporary file)");
  }
  return errors::AlreadyExists(file.What(), " (creating a temporary file): every name tried exists");
}

AtomicFile::AtomicFile(std::filesystem::path path, std::filesystem::path temp, int fd,
                       AtomicFileOptions options)
    : path_(std::move(path)), temp_(std::move(temp)), fd_(fd), options_(std::move(options)) {}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      temp_(std::move(other.temp_)),
      fd_(other.fd_),
      options_(std::move(other.options_)),
      error_(std::move(other.error_)) {
  other.fd_ = -1;
  other.temp_.clear();
}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    Abandon();
    path_ = std::move(other.path_);
    temp_ = std::move(other.temp_);
    fd_ = other.fd_;
    options_ = std::move(other.options_);
    error_ = std::move(other.error_);
    other.fd_ = -1;
    other.temp_.clear();
  }
  return *this;
}

AtomicFile::~AtomicFile() { Abandon(); }

void AtomicFile::Abandon() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
}

std::string AtomicFile::What() const {
  std::string what = "writing ";
  if (!options_.description.empty()) what += options_.description + " ";
  return what + "'" + path_.string() + "'";
}

Status AtomicFile::Append(const void* data, size_t n) {
  if (!error_.ok()) return error_;  // and the temporary is gone
  if (fd_ < 0) return errors::FailedPrecondition(What(), ": already committed");
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t written = ::write(fd_, p, n);
    if (written < 0) {
      if (errno == EINTR) continue;
      error_ = IoError(errno, What());
      Abandon();  // nothing more can come of it
      return error_;
    }
    p += written;
    n -= static_cast<size_t>(written);
  }
  return OkStatus();
}

Status AtomicFile::Commit() {
  if (!error_.ok()) return error_;
  if (fd_ < 0) return errors::FailedPrecondition(What(), ": already committed");
  if (options_.sync && ::fsync(fd_) != 0) error_ = IoError(errno, What());
  // close can report a failed delayed write (NFS, a full disk).
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0 && error_.ok()) error_ = IoError(errno, What());
  if (error_.ok() && ::rename(temp_.c_str(), path_.c_str()) != 0) {
    error_ = IoError(errno, What() + " (renaming)");
  }
  if (!error_.ok()) {
    Abandon();
    return error_;
  }
  temp_.clear();  // it is the target now
  if (options_.sync) {
    // Make the rename itself durable.
    const std::filesystem::path dir = path_.has_parent_path() ? path_.parent_path() : ".";
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return IoError(errno, What() + " (syncing the directory)");
    const int rc = ::fsync(dfd);
    const int err = errno;
    ::close(dfd);
    if (rc != 0) return IoError(err, What() + " (syncing the directory)");
  }
  return OkStatus();
}

Status WriteFileAtomically(const std::filesystem::path& path, std::string_view bytes,
                           const AtomicFileOptions& options) {
  TFD_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(path, options));
  TFD_RETURN_IF_ERROR(file.Append(bytes));
  return file.Commit();
}

}  // namespace tfd
