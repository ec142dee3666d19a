// AtomicFile: a file is replaced whole or not at all — after any failure
// (a directory that cannot be written, a missing one, a write cut short, a
// rename refused) the old file is as it was and no temporary is left, and the
// error names the path.
#include "common/atomic_file.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "common/subprocess.h"
#include "tests/util/io_test_util.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Contains;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

// The names in `dir`, sorted.
std::vector<std::string> Names(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST_CASE("a new file, then a replacement, with nothing left beside them") {
  TempDir dir;
  const auto path = dir.path() / "graph.capnp";
  const mode_t old_umask = ::umask(022);
  REQUIRE(WriteFileAtomically(path, "first").ok());
  CHECK(ReadFile(path) == "first");
  REQUIRE(WriteFileAtomically(path, "second, longer").ok());
  ::umask(old_umask);
  CHECK(ReadFile(path) == "second, longer");
  CHECK(Names(dir.path()) == std::vector<std::string>{"graph.capnp"});
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
}

TEST_CASE("streamed in pieces and synced, the file appears only at Commit") {
  TempDir dir;
  const auto path = dir.path() / "model.ckpt";
  WriteFile(path, "old");
  auto file = AtomicFile::Create(path, {.sync = true});
  REQUIRE(file.ok());
  CHECK(file->temp_path().parent_path() == dir.path());
  CHECK(file->temp_path().filename().string().rfind(".model.ckpt.tmp-", 0) == 0);
  REQUIRE(file->Append("new ").ok());
  REQUIRE(file->Append(std::string(1 << 20, 'x')).ok());
  CHECK(ReadFile(path) == "old");
  REQUIRE(file->Commit().ok());
  CHECK(ReadFile(path) == "new " + std::string(1 << 20, 'x'));
  CHECK(Names(dir.path()) == std::vector<std::string>{"model.ckpt"});
  CHECK(file->Commit().code() == Code::kFailedPrecondition);  // once only
}

TEST_CASE("an AtomicFile dropped before Commit leaves the old file and no temporary") {
  TempDir dir;
  const auto path = dir.path() / "g.txt";
  WriteFile(path, "old");
  {
    auto file = AtomicFile::Create(path);
    REQUIRE(file.ok());
    REQUIRE(file->Append("half of it").ok());
    CHECK(std::filesystem::exists(file->temp_path()));
  }
  CHECK(ReadFile(path) == "old");
  CHECK(Names(dir.path()) == std::vector<std::string>{"g.txt"});
}

// Root writes anywhere, so as root the attempt runs in a child that has
// given its privileges up; the child sends back the status it got.
Status WriteAsUnprivileged(const std::filesystem::path& path, const std::string& bytes) {
  if (::geteuid() != 0) return WriteFileAtomically(path, bytes);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  auto child = Subprocess::Fork([&] {
    ::close(fds[0]);
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) return 99;
    const Status s = WriteFileAtomically(path, bytes);
    const std::string message = s.message();
    (void)!::write(fds[1], message.data(), message.size());
    return static_cast<int>(s.code());
  });
  ::close(fds[1]);
  REQUIRE(child.ok());
  std::string message;
  char buf[256];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;) message.append(buf, n);
  ::close(fds[0]);
  const int code = child->Wait(30s).value();
  REQUIRE(code != 99);
  return Status(static_cast<Code>(code), message);
}

TEST_CASE("a directory that cannot be written: FAILED_PRECONDITION naming the path") {
  TempDir dir;
  const auto path = dir.path() / "graph.capnp";
  WriteFile(path, "old");
  REQUIRE(::chmod(dir.path().c_str(), 0555) == 0);
  const Status s = WriteAsUnprivileged(path, "new");
  ::chmod(dir.path().c_str(), 0700);
  INFO(s.ToString());
  CHECK(s.code() == Code::kFailedPrecondition);
  CHECK(Contains(s.message(), path.string()));
  CHECK(ReadFile(path) == "old");
  CHECK(Names(dir.path()) == std::vector<std::string>{"graph.capnp"});
}

TEST_CASE("a missing directory: NOT_FOUND naming the path") {
  TempDir dir;
  const auto path = dir.path() / "nowhere" / "graph.capnp";
  const Status s = WriteFileAtomically(path, "new", {.description = "graph file"});
  CHECK(s.code() == Code::kNotFound);
  CHECK(Contains(s.message(), "writing graph file '" + path.string() + "'"));
}

// As on a full disk: a file-size limit cuts the write short.
TEST_CASE("a write cut short: UNAVAILABLE, the old file untouched, no temporary") {
  TempDir dir;
  const auto path = dir.path() / "model.ckpt";
  WriteFile(path, "old");
  rlimit saved;
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 64 * 1024;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  auto file = AtomicFile::Create(path, {.sync = true});
  Status appended = file.ok() ? file->Append(std::string(1 << 20, 'x')) : file.status();
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, old_handler);
  REQUIRE(file.ok());
  CHECK(appended.code() == Code::kUnavailable);
  CHECK(Contains(appended.message(), path.string()));
  // The failure sticks: nothing more is written, and Commit refuses.
  CHECK(file->Append("more").code() == Code::kUnavailable);
  CHECK(file->Commit().code() == Code::kUnavailable);
  CHECK(ReadFile(path) == "old");
  CHECK(Names(dir.path()) == std::vector<std::string>{"model.ckpt"});
}

TEST_CASE("a rename refused (a directory in the way): the temporary is removed") {
  TempDir dir;
  const auto path = dir.path() / "taken";
  std::filesystem::create_directory(path);
  WriteFile(path / "inside", "kept");
  const Status s = WriteFileAtomically(path, "new");
  CHECK_FALSE(s.ok());
  CHECK(Contains(s.message(), path.string()));
  CHECK(Contains(s.message(), "renaming"));
  CHECK(ReadFile(path / "inside") == "kept");
  CHECK(Names(dir.path()) == std::vector<std::string>{"taken"});
}

TEST_CASE("a path that names a directory is refused before anything is written") {
  TempDir dir;
  CHECK(WriteFileAtomically(dir.path() / "", "x").code() == Code::kInvalidArgument);
  CHECK(WriteFileAtomically(dir.path() / ".", "x").code() == Code::kInvalidArgument);
  CHECK(Names(dir.path()).empty());
}

}  // namespace
}  // namespace tfd
