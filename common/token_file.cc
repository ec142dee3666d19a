#include "common/token_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

namespace tfd {
namespace {

constexpr size_t kMinDistinct = 8;
constexpr const char* kHowToMake = "make one with: openssl rand -hex 32 > ";

// The narrowest alphabet `token` is written in, and how many of its
// characters carry 128 bits in it.
struct Alphabet {
  const char* name;
  size_t needed;  // characters (bytes for kBinary) for 128 bits
};
constexpr Alphabet kHex{"hex digits", 32};
constexpr Alphabet kBase64{"base64 characters", 22};        // 6 bits each
constexpr Alphabet kPrintable{"printable characters", 20};  // 95 of them: 6.6 bits each
constexpr Alphabet kBinary{"bytes", 16};

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
bool IsBase64(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '/' || c == '-' ||
         c == '_';
}
bool IsPrintable(char c) { return c >= 0x20 && c <= 0x7e; }

template <typename Pred>
bool All(std::string_view s, Pred pred) {
  for (char c : s) {
    if (!pred(c)) return false;
  }
  return true;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::string Mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// The first line of `fd`, at most kMaxTokenLine bytes of it.
StatusOr<std::string> FirstLine(int fd, const std::string& path) {
  std::string line;
  char buf[512];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return errors::InvalidArgument("cannot read token file '", path, "': ", std::strerror(errno));
    }
    if (n == 0) return line;
    const std::string_view chunk(buf, static_cast<size_t>(n));
    const size_t end = chunk.find('\n');
    line.append(chunk.substr(0, end));
    if (line.size() > kMaxTokenLine) {
      return errors::InvalidArgument("token file '", path, "' is not a token: its first line is "
                                     "longer than ", kMaxTokenLine, " bytes; ", kHowToMake, path);
    }
    if (end != std::string_view::npos) return line;
  }
}

}  // namespace

Status CheckTokenStrength(std::string_view token, const std::string& path) {
  if (token.empty()) {
    return errors::InvalidArgument("token file '", path, "' holds no token (its first line is "
                                   "empty or blank); ", kHowToMake, path);
  }
  std::string_view counted = token;
  Alphabet alphabet = kBinary;
  if (All(token, IsHex)) {
    alphabet = kHex;
  } else if (std::string_view unpadded = token.substr(0, token.find_last_not_of('=') + 1);
             All(unpadded, IsBase64)) {
    alphabet = kBase64;
    counted = unpadded;
  } else if (All(token, IsPrintable)) {
    alphabet = kPrintable;
  }
  if (counted.size() < alphabet.needed) {
    return errors::InvalidArgument(
        "token file '", path, "' holds a token of ", counted.size(), " ", alphabet.name,
        "; an auth token needs at least 128 random bits, ", alphabet.needed, " ", alphabet.name,
        " or more; ", kHowToMake, path);
  }
  const std::set<char> distinct(token.begin(), token.end());
  if (distinct.size() < kMinDistinct) {
    return errors::InvalidArgument("token file '", path, "' holds a token of only ",
                                   distinct.size(), " distinct characters, too regular to be "
                                   "random (at least ", kMinDistinct, " needed); ", kHowToMake,
                                   path);
  }
  return OkStatus();
}

StatusOr<TokenFile> ReadTokenFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return errors::InvalidArgument("cannot read token file '", path, "': ", std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  // The mode of what was opened, after any symbolic links.
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return errors::InvalidArgument("cannot read token file '", path, "': ", std::strerror(errno));
  }
  TokenFile file;
  if ((st.st_mode & (S_IROTH | S_IWOTH)) != 0) {
    return errors::InvalidArgument("token file '", path, "' may be ",
                                   (st.st_mode & S_IROTH) != 0 ? "read" : "written",
                                   " by every user (mode ", Mode(st.st_mode),
                                   "); keep it to its owner: chmod 600 ", path);
  }
  if ((st.st_mode & (S_IRGRP | S_IWGRP)) != 0) {
    file.warning = "token file '" + path + "' may be " +
                   ((st.st_mode & S_IRGRP) != 0 ? "read" : "written") + " by its group (mode " +
                   Mode(st.st_mode) + "); unless that group is meant to hold the token (a "
                   "Kubernetes Secret mounted for fsGroup), chmod 600 " + path;
  }
  TFD_ASSIGN_OR_RETURN(std::string line, FirstLine(fd, path));
  file.token = std::string(Trim(line));
  TFD_RETURN_IF_ERROR(CheckTokenStrength(file.token, path));
  return file;
}

}  // namespace tfd
