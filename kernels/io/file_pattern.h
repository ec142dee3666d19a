// File name patterns as TF1's tf.matching_files reads them: a glob of
// '*', '?', '[...]' (and '\' escaping the next character) in any component
// of a path, matched component by component; '*' never crosses a '/', and
// names beginning with '.' match as any other (TF1's fnmatch rules).
//
// Matching is confined to the task's io_dirs as every file access is
// (KernelEnv::ResolveIoPath): the part of the pattern before its first
// wildcard must resolve inside them (INVALID_ARGUMENT naming the pattern
// otherwise), and an entry whose path leads out of them (through a link or
// a "..") is not a match. Names come back as the pattern writes them (a
// relative pattern gives relative names a reader resolves the same way),
// sorted, each once.
#pragma once

#include <string>
#include <vector>

#include "common/op_kernel.h"
#include "common/status.h"

namespace tfd::kernels::io {

// The existing files and directories matching `pattern`; none is not an
// error. A pattern without wildcards matches itself when it exists.
StatusOr<std::vector<std::string>> MatchFiles(const std::string& pattern, const KernelEnv& env);

}  // namespace tfd::kernels::io
