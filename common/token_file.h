// ReadTokenFile: the one reader of auth token files, for tfd's
// --auth-token-file and tfctl's --token-file alike, so that both ends agree
// on what a token is and neither accepts one that is easy to guess or to
// read.
//
// The token is the file's first line with the whitespace around it trimmed
// (so "openssl rand -hex 32 > token" and an editor's trailing newline both
// work). INVALID_ARGUMENT, naming the file and saying how to make a good one
// (`openssl rand -hex 32`), when:
//   - the file cannot be opened or read, or its first line is longer than
//     kMaxTokenLine;
//   - its mode lets every user read or write it (as ssh refuses such a key):
//     chmod 600 fixes it;
//   - the token is empty or blank;
//   - it carries fewer than 128 bits by its alphabet: 32 hex digits, 22
//     base64 or base64url characters ('=' padding not counted), 20 printable
//     ASCII characters of a wider alphabet, 16 bytes of anything else;
//   - it has fewer than 8 distinct characters ("aaaa...", "abababab...").
// A file its group may read or write is accepted with a warning for the
// caller to log: a Kubernetes Secret mounted with defaultMode 0440 and
// fsGroup (deploy/k8s) is group-readable by design.
//
// The mode is that of the file as opened, symbolic links followed (a
// Kubernetes Secret's file is a link into a timestamped directory).
//
//   TFD_ASSIGN_OR_RETURN(TokenFile file, ReadTokenFile(path));
//   if (!file.warning.empty()) logger->warn("{}", file.warning);
//   use(file.token);
//
// Thread-safety: pure but for reading the file.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tfd {

struct TokenFile {
  std::string token;
  std::string warning;  // empty, or what the caller should log (a group-readable file)
};

// A longer first line is no token but a mistake (a binary, a directory listing).
inline constexpr size_t kMaxTokenLine = 4096;

StatusOr<TokenFile> ReadTokenFile(const std::string& path);

// The token rules alone (no file): OK, or INVALID_ARGUMENT saying what is
// wrong with `token`, read from `path` (named in the message).
Status CheckTokenStrength(std::string_view token, const std::string& path);

}  // namespace tfd
