#include "common/file_read.h"

#include <filesystem>
#include <fstream>

namespace tfd {

StatusOr<std::string> ReadFileAtMost(const std::string& path, size_t limit, std::string_view what) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec) {
    return errors::NotFound(what, " '", path, "' does not exist");
  }
  if (std::filesystem::is_directory(path, ec)) {
    return errors::InvalidArgument(what, " '", path, "' is a directory");
  }
  const auto size = std::filesystem::file_size(path, ec);  // none for a pipe or a device
  if (!ec && size > limit) {
    return errors::InvalidArgument(what, " '", path, "' is ", size, " bytes, over the limit of ",
                                   limit);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return errors::NotFound(what, " '", path, "' cannot be opened");
  std::string bytes;
  if (!ec) bytes.reserve(size);
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    const auto n = static_cast<size_t>(in.gcount());
    if (n > limit - bytes.size()) {
      return errors::InvalidArgument(what, " '", path, "' holds over ", limit, " bytes, the limit");
    }
    bytes.append(chunk, n);
  }
  if (in.bad()) return errors::Unavailable("reading ", what, " '", path, "' failed");
  return bytes;
}

}  // namespace tfd
