// TempDir: a fresh directory under /tmp for a test's files (graphs, token
// files), removed with everything in it when the TempDir goes away.
//
//   TempDir dir;
//   const std::string token = dir.Write("token", "s3cret\n");
//
// Thread-safety: one test thread.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tfd::testing {

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

 private:
  std::string path_;
};

}  // namespace tfd::testing
