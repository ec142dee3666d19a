// Glob matching within io_dirs; see file_pattern.h.
#include "kernels/io/file_pattern.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace tfd::kernels::io {
namespace {

namespace fs = std::filesystem;

bool HasWildcard(const std::string& component) {
  return component.find_first_of("*?[\\") != std::string::npos;
}

// `pattern` cut at its '/'s; a leading '/' leaves an empty first component.
std::vector<std::string> Components(const std::string& pattern) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t slash; (slash = pattern.find('/', begin)) != std::string::npos; begin = slash + 1) {
    parts.push_back(pattern.substr(begin, slash - begin));
  }
  parts.push_back(pattern.substr(begin));
  return parts;
}

std::string Join(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

Status ListError(const std::string& dir, const std::error_code& ec) {
  if (ec == std::errc::permission_denied) {
    return errors::PermissionDenied("cannot list '", dir, "' to match files: ", ec.message());
  }
  return errors::Internal("cannot list '", dir, "' to match files: ", ec.message());
}

// A match so far: the name as the pattern writes it, and where it is.
struct Candidate {
  std::string name;
  fs::path path;
};

// Each candidate's entries (when it is a directory) matching `component`;
// RESOURCE_EXHAUSTED once their names take more than max_bytes.
StatusOr<std::vector<Candidate>> Step(const std::vector<Candidate>& from,
                                      const std::string& component, uint64_t max_bytes) {
  std::vector<Candidate> next;
  uint64_t bytes = 0;
  const auto add = [&](std::string name, fs::path path) {
    bytes += name.size();
    next.push_back({std::move(name), std::move(path)});
    return bytes <= max_bytes;
  };
  for (const Candidate& c : from) {
    std::error_code ec;
    bool fits = true;
    if (!HasWildcard(component)) {
      fs::path p = c.path / component;
      if (fs::exists(p, ec)) fits = add(Join(c.name, component), std::move(p));
    } else if (fs::is_directory(c.path, ec)) {
      fs::directory_iterator it(c.path, ec), end;
      for (; fits && !ec && it != end; it.increment(ec)) {
        const std::string entry = it->path().filename().string();
        if (fnmatch(component.c_str(), entry.c_str(), 0) == 0) {
          fits = add(Join(c.name, entry), it->path());
        }
      }
      if (ec) return ListError(c.name.empty() ? "." : c.name, ec);
    }
    if (!fits) {
      return errors::ResourceExhausted("the files matched so far have names of ", bytes,
                                       " bytes, more than a tensor may hold (", max_bytes,
                                       ", --max-tensor-bytes)");
    }
  }
  return next;
}

}  // namespace

StatusOr<std::vector<std::string>> MatchFiles(const std::string& pattern, const KernelEnv& env) {
  if (pattern.empty()) return errors::InvalidArgument("empty file pattern");
  const std::vector<std::string> parts = Components(pattern);
  const auto first_wild = std::find_if(parts.begin(), parts.end(), HasWildcard);
  // The fixed part, as written ("" for a pattern starting with a wildcard).
  std::string prefix;
  for (auto it = parts.begin(); it != first_wild; ++it) {
    prefix += (it == parts.begin() ? "" : "/") + *it;
  }
  if (first_wild == parts.end()) {  // no wildcard: the file itself
    TFD_ASSIGN_OR_RETURN(const fs::path path, env.ResolveIoPath(pattern));
    std::error_code ec;
    if (fs::exists(path, ec)) return std::vector<std::string>{pattern};
    return std::vector<std::string>{};
  }
  const std::string base = first_wild == parts.begin() ? "." : prefix.empty() ? "/" : prefix;
  auto root = env.ResolveIoPath(base);
  if (!root.ok()) return root.status().WithContext("file pattern '" + pattern + "'");
  std::vector<Candidate> found{{first_wild == parts.begin() ? "" : base, *root}};
  for (auto it = first_wild; it != parts.end() && !found.empty(); ++it) {
    if (it->empty()) continue;  // "a//b" or a trailing '/'
    TFD_ASSIGN_OR_RETURN(found, Step(found, *it, env.limits.max_tensor_bytes));
    // Nothing outside io_dirs is listed or named (a link, a "..").
    std::erase_if(found, [&](const Candidate& c) { return !env.ResolveIoPath(c.name).ok(); });
  }
  std::vector<std::string> names;
  for (Candidate& c : found) names.push_back(std::move(c.name));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace tfd::kernels::io
