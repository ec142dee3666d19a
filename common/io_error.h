// IoError: an errno from a file or process operation as a Status whose code
// says what a caller can do about it, and whose message says what was being
// done to which path.
//
//   if (::rename(tmp, path) != 0) return IoError(errno, "renaming '" + tmp + "'");
//   // -> NOT_FOUND: renaming '/x/.g.tmp-1': No such file or directory
//
// Thread-safety: pure.
#pragma once

#include <string_view>

#include "common/status.h"

namespace tfd {

// NOT_FOUND for a missing file or directory, ALREADY_EXISTS, UNAVAILABLE for
// a full disk or a file-size limit (retrying elsewhere or later may work),
// FAILED_PRECONDITION for permissions, a read-only file system or a
// directory where a file was expected, INTERNAL for the rest.
Status IoError(int err, std::string_view what);

}  // namespace tfd
