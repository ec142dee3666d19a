// DataDir: a fresh temporary directory for a benchmark's generated files,
// removed with everything in it when the object goes, on every path out.
//
//   DataDir data("tfd-train-bench");
//   if (data.path().empty()) return errors::Internal("cannot make a directory under /tmp");
//   TFD_RETURN_IF_ERROR(WriteMnistSizedFiles(data.path()));
//
// Thread-safety: one owner.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace tfd::bench {

class DataDir {
 public:
  // `prefix` names the directory under /tmp; path() is empty when it could
  // not be made.
  explicit DataDir(const std::string& prefix) {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    const char* dir = mkdtemp(tmpl.data());
    path_ = dir ? dir : "";
  }
  ~DataDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  DataDir(const DataDir&) = delete;
  DataDir& operator=(const DataDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tfd::bench
