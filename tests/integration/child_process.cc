#include "tests/integration/child_process.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tfd::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace

std::string TfctlBinary() {
  const char* p = std::getenv("TFCTL");
  return p ? p : "tfctl";
}

std::string OneLine(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::string out;
  for (char c : text) out += c == '\n' ? std::string(" | ") : std::string(1, c);
  return out;
}

StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(const std::vector<std::string>& argv) {
  char tmpl[] = "/tmp/tfd-child-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return errors::Internal("mkdtemp: ", strerror(errno));
  const std::string dir = tmpl;
  SubprocessOptions o;
  o.stdin_path = "/dev/null";
  o.stdout_path = dir + "/stdout";
  o.stderr_path = dir + "/stderr";
  o.truncate_output = true;
  auto process = Subprocess::Start(argv, o);  // stop_grace 0: SIGKILL
  if (!process.ok()) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return process.status();
  }
  return std::make_unique<ChildProcess>(std::move(process).value(), dir);
}

ChildProcess::~ChildProcess() {
  process_.Kill();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string ChildProcess::Stdout() const { return ReadFile(dir_ + "/stdout"); }
std::string ChildProcess::Stderr() const { return ReadFile(dir_ + "/stderr"); }

StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout) {
  TFD_ASSIGN_OR_RETURN(auto child, ChildProcess::Spawn(argv));
  auto status = child->Wait(timeout);
  if (!status.ok()) {
    child->Kill();
    return errors::DeadlineExceeded(status.status().message(), "; stdout: ", child->Stdout(),
                                    "; stderr: ", child->Stderr());
  }
  return ProcessResult{*status, child->Stdout(), child->Stderr()};
}

}  // namespace tfd::testing
