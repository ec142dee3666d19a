// TempDir: a fresh directory under /tmp for a test's files (graphs, token
// files), removed with everything in it when the TempDir goes away.
//
//   TempDir dir;
//   const std::string graph = dir.Write("graph.txt", text);
//   const std::string token_file = dir.WriteSecret("token", testing::kToken);
//
// Thread-safety: one test thread.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tfd::testing {

// Tokens as `openssl rand -hex 16` makes them (128 bits), for tests with
// --auth-token-file: the cluster's, and another one that is wrong.
inline constexpr const char* kToken = "9f86d081884c7d659a2feaa0c55ad015";
inline constexpr const char* kWrongToken = "2c26b46b68ffc68ff99b453c1d304134";

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/tfd-test-XXXXXX";
    const char* made = mkdtemp(tmpl);
    path_ = made ? made : "/tmp";
  }
  ~TempDir() {
    std::error_code ec;
    if (path_ != "/tmp") std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `contents` to `name` in the directory and returns its path.
  std::string Write(const std::string& name, const std::string& contents) const {
    const std::string file = path_ + "/" + name;
    std::ofstream(file) << contents;
    return file;
  }
  // Writes `token` and a newline to `name`, readable by its owner only (as
  // tfd and tfctl require of a token file: common/token_file.h), and
  // returns its path.
  std::string WriteSecret(const std::string& name, const std::string& token) const {
    const std::string file = Write(name, token + "\n");
    std::filesystem::permissions(file, std::filesystem::perms::owner_read |
                                           std::filesystem::perms::owner_write);
    return file;
  }

 private:
  std::string path_;
};

}  // namespace tfd::testing
