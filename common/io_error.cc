#include "common/io_error.h"

#include <cerrno>
#include <cstring>

namespace tfd {

Status IoError(int err, std::string_view what) {
  const std::string msg = errors::StrCat(what, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return errors::NotFound(msg);
    case EEXIST:
      return errors::AlreadyExists(msg);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return errors::Unavailable(msg);
    case EACCES:
    case EPERM:
    case EROFS:
    case EISDIR:
      return errors::FailedPrecondition(msg);
    default:
      return errors::Internal(msg);
  }
}

}  // namespace tfd
