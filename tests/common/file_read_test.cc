// ReadFileAtMost: a file a user named is read whole when it is within the
// limit, and refused, with a code and the path, when it is not a file, is
// missing, or is longer than the limit — also when nothing tells its length
// before reading (a FIFO, /dev/zero), where it stops at the limit.
#include "common/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/util/io_test_util.h"

namespace tfd {
namespace {

using testing::Contains;
using testing::TempDir;
using testing::WriteFile;

constexpr size_t kLimit = 100000;  // over one read chunk (64 KiB)

TEST_CASE("a file up to the limit is read whole, its bytes as they are") {
  TempDir dir;
  for (const size_t size : {size_t{0}, size_t{1}, size_t{65536}, size_t{65537}, kLimit}) {
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i * 7);
    const std::string path = (dir.path() / "f").string();
    WriteFile(path, bytes);
    auto read = ReadFileAtMost(path, kLimit, "test file");
    REQUIRE(read.ok());
    INFO("size " << size);
    const bool same = *read == bytes;  // not printed: the bytes are binary
    CHECK(same);
  }
  // A file that reports no size (procfs) is read for what it holds.
  auto status = ReadFileAtMost("/proc/self/status", kLimit, "test file");
  REQUIRE(status.ok());
  CHECK(Contains(*status, "Name:"));
}

TEST_CASE("a file one byte over the limit is refused by its size, naming both") {
  TempDir dir;
  const std::string path = (dir.path() / "big").string();
  WriteFile(path, std::string(kLimit + 1, 'x'));
  auto read = ReadFileAtMost(path, kLimit, "test file");
  CHECK(read.status().code() == Code::kInvalidArgument);
  CHECK(Contains(read.status().message(),
                 "test file '" + path + "' is 100001 bytes, over the limit of 100000"));
}

TEST_CASE("an endless device or a FIFO fed past the limit is refused at the limit") {
  auto zero = ReadFileAtMost("/dev/zero", kLimit, "test file");
  CHECK(zero.status().code() == Code::kInvalidArgument);
  CHECK(Contains(zero.status().message(), "'/dev/zero' holds over 100000 bytes, the limit"));

  TempDir dir;
  const std::string fifo = (dir.path() / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // The writer waits at most 30 s for the reader to open the FIFO, then
  // ends when the reader goes (EPIPE) or after limit + 1 bytes.
  std::thread writer([&] {
    std::signal(SIGPIPE, SIG_IGN);
    int fd = -1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (fd < 0 && std::chrono::steady_clock::now() < deadline) {
      fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // ENXIO until there is a reader
      if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (fd < 0) return;
    ::fcntl(fd, F_SETFL, 0);  // blocking writes from here on
    const std::string block(4096, 'y');
    size_t sent = 0;
    while (sent <= kLimit) {
      const ssize_t n = ::write(fd, block.data(), block.size());
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    ::close(fd);
  });
  auto fed = ReadFileAtMost(fifo, kLimit, "test file");
  writer.join();
  CHECK(fed.status().code() == Code::kInvalidArgument);
  CHECK(Contains(fed.status().message(), "holds over 100000 bytes, the limit"));
}

TEST_CASE("a missing path and a directory are refused, each with its code") {
  TempDir dir;
  const std::string missing = (dir.path() / "nope").string();
  auto none = ReadFileAtMost(missing, kLimit, "test file");
  CHECK(none.status().code() == Code::kNotFound);
  CHECK(Contains(none.status().message(), "test file '" + missing + "' does not exist"));

  auto directory = ReadFileAtMost(dir.path().string(), kLimit, "test file");
  CHECK(directory.status().code() == Code::kInvalidArgument);
  CHECK(Contains(directory.status().message(), "is a directory"));
}

}  // namespace
}  // namespace tfd
