// What a stranger on the network reaches of a task with UCX's shared memory
// on (--data-plane-transports=shm): exactly one listener, bound to the
// address the task serves on — UCX opens no socket of its own — and the malformed UCX frames that aborted a task
// through UCX's TCP listener (the security review's 13 bytes) sent to every
// listener the task has, twice, leave it serving. Its shared memory is its
// own user's: no SysV segments, posix ones unlinked and mode 0600.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/log_lines.h"
#include "tests/integration/proc_sockets.h"
#include "tests/integration/raw_socket.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Contains;
using testing::LocalCluster;
using testing::DescriptorsOf;
using testing::OneLine;
using testing::RawSocket;
using testing::TcpSocket;
using testing::TcpSocketsOf;

// "IP:PORT" of every TCP socket `pid` listens on.
std::vector<std::string> ListenersOf(pid_t pid) {
  std::vector<std::string> out;
  for (const TcpSocket& s : TcpSocketsOf(pid)) {
    if (s.listening()) out.push_back(s.local);
  }
  return out;
}

// What aborted UCX 1.13's TCP transport in the review: its magic number and
// an active-message header claiming 4 GiB; the same with the connection
// manager's id and 2 GiB; and a 3-byte connection-manager packet.
std::vector<std::string> UcxCrashFrames() {
  std::string magic(8, '\0');
  const uint64_t m = 0xCAFEBABE12345678ull;
  std::memcpy(magic.data(), &m, 8);
  auto am = [](uint8_t id, uint32_t length) {
    std::string h(5, '\0');
    h[0] = static_cast<char>(id);
    std::memcpy(h.data() + 1, &length, 4);
    return h;
  };
  return {magic + am(0, 0xffffffffu), magic + am(32, 0x7fffffffu), std::string("\x20\x00\x00", 3)};
}

TEST_CASE("a task listens only where it serves, and UCX's crash frames do not reach a parser") {
  // A short login deadline: frames that never complete a login are dropped sooner.
  // UCX on (shared memory), since what it might open is what is looked at.
  LocalCluster cluster({{"ps", 1}, {"worker", 1}},
                       {"--login-timeout", "1", "--data-plane-transports=shm"});
  REQUIRE(cluster.Start("ps", 0).ok());
  REQUIRE(cluster.Start("worker", 0).ok());
  auto client = cluster.Connect("worker", 0, 20s);
  REQUIRE(client.ok());
  // A step across both tasks, so each has its data plane to the other up.
  GraphDef g;
  g.nodes = {testing::Const("x", 2.0f, "/job:ps/task:0"),
             testing::Node("y", "Add", {"x", "x"}, "/job:worker/task:0")};
  REQUIRE((*client)->CreateSession(g).ok());
  REQUIRE((*client)->Run({}, {"y"}, {}, {}).ok());

  for (const auto& [job, address] : {std::pair{"ps", cluster.Address("ps", 0)},
                                     std::pair{"worker", cluster.Address("worker", 0)}}) {
    INFO(job << " at " << address);
    const pid_t pid = cluster.Pid(job, 0);
    const std::vector<std::string> listeners = ListenersOf(pid);
    CHECK(listeners == std::vector<std::string>{address});
    // Each frame to each listener, twice in a row.
    for (int round = 0; round < 2; ++round) {
      for (const std::string& listener : listeners) {
        for (const std::string& frame : UcxCrashFrames()) {
          const std::string to =
              listener[0] == '*' ? "127.0.0.1" + listener.substr(1) : listener;
          auto s = RawSocket::Connect(to, 5s);
          REQUIRE(s.ok());
          (*s)->Send(frame);
          CHECK((*s)->WaitClosed(10s));
        }
      }
    }
    CHECK(cluster.Pid(job, 0) == pid);
  }
  // Both still serve, and still reach each other.
  auto again = (*client)->Run({}, {"y"}, {}, {});
  INFO(again.status().ToString() << "; ps log: " << OneLine(cluster.Log("ps", 0)));
  REQUIRE(again.ok());
  CHECK(again->fetches[0].scalar<float>() == 4.0f);
}

TEST_CASE("a task's shared memory is private to its user: no SysV, posix segments unlinked, 0600") {
  LocalCluster cluster({{"worker", 2}}, {"--data-plane-transports=shm"});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0, 20s);
  REQUIRE(client.ok());
  GraphDef g;
  g.nodes = {testing::Const("x", 2.0f, "/job:worker/task:1"),
             testing::Node("y", "Add", {"x", "x"}, "/job:worker/task:0")};
  REQUIRE((*client)->CreateSession(g).ok());
  REQUIRE((*client)->Run({}, {"y"}, {}, {}).ok());
  for (int task : {0, 1}) {
    const pid_t pid = cluster.Pid("worker", task);
    // No SysV segment made by the task (/proc/sysvipc/shm: the creator's pid).
    std::ifstream sysv("/proc/sysvipc/shm");
    std::string line;
    std::getline(sysv, line);
    while (std::getline(sysv, line)) {
      std::istringstream f(line);
      std::string key, shmid, perms, size, cpid;
      f >> key >> shmid >> perms >> size >> cpid;
      CHECK(cpid != std::to_string(pid));
    }
    int segments = 0;
    for (const auto& [path, target] : DescriptorsOf(pid).files) {
      if (target.find("/dev/shm/") == std::string::npos) continue;
      INFO(target);
      ++segments;
      CHECK(Contains(target, "(deleted)"));
      struct stat st {};
      REQUIRE(stat(path.c_str(), &st) == 0);
      CHECK((st.st_mode & 0777) == 0600);
    }
    CHECK(segments > 0);  // shared memory is in use between the two tasks
  }
}

}  // namespace
}  // namespace tfd
