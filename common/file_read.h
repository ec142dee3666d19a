// Reading a whole file that a user named, in bounded memory.
//
//   TFD_ASSIGN_OR_RETURN(std::string text,
//                        ReadFileAtMost(path, kMaxClusterSpecFileBytes, "cluster spec file"));
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tfd {

// The bytes of the file at `path`. A user may name anything there: a
// directory, a FIFO, /dev/zero, a file still growing. NOT_FOUND for a path
// that does not exist or cannot be opened; INVALID_ARGUMENT for a
// directory, or for more than `limit` bytes, seen from the file's size
// before reading when it has one and while reading when it has none, so
// that memory never holds more than `limit` and one chunk. `what` names
// the file in each message ("graph file", "--tls-cert").
StatusOr<std::string> ReadFileAtMost(const std::string& path, size_t limit, std::string_view what);

}  // namespace tfd
