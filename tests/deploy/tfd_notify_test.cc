// tfd under a service manager, played by this test: with NOTIFY_SOCKET set
// (a socket this test binds, at a path or in the abstract namespace) tfd
// sends READY=1 only once its port accepts connections, WATCHDOG=1 at half
// of WATCHDOG_USEC, and STOPPING=1 when SIGTERM starts its drain; then it
// exits 0. What tfd@.service (Type=notify, WatchdogSec=) relies on.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "common/subprocess.h"
#include "tests/util/notify_receiver.h"

namespace tfd {
namespace {

using testing::NotifyReceiver;
using namespace std::chrono_literals;

std::string Tfd() {
  const char* p = std::getenv("TFD");
  return p ? p : "tfd";
}

// A port the kernel considers free right now on 127.0.0.1.
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `text` on one line: meson reads Catch2's TAP output a line per result.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n') c = '|';
  }
  return text;
}

std::string UniqueName() {
  std::random_device rd;
  return "tfd-notify-" + std::to_string(getpid()) + "-" + std::to_string(rd());
}

// One tfd task (ps:0 of a one-task cluster on loopback) run through env(1)
// with the given variables, its log in `log`.
Subprocess StartTfd(int port, const std::vector<std::string>& vars, const std::string& log) {
  std::vector<std::string> argv = {"env"};
  argv.insert(argv.end(), vars.begin(), vars.end());
  const std::string spec = "{\"ps\": [\"127.0.0.1:" + std::to_string(port) + "\"]}";
  for (std::string a : {Tfd(), std::string("--cluster"), spec, std::string("--job"),
                        std::string("ps"), std::string("--task"), std::string("0"),
                        std::string("--threads"), std::string("1")}) {
    argv.push_back(a);
  }
  SubprocessOptions o;
  o.stdout_path = "/dev/null";
  o.stderr_path = log;
  o.stop_grace = 10s;  // the test stops what it started, also when it fails
  auto p = Subprocess::Start(argv, o);
  INFO(p.status().ToString());
  REQUIRE(p.ok());
  return std::move(p).value();
}

void RunLifecycle(const std::string& socket_name, const std::string& dir) {
  NotifyReceiver manager(socket_name);
  const int port = FreePort();
  const std::string log = dir + "/tfd.log";
  // 600 ms: a keep-alive every 300 ms.
  Subprocess tfd = StartTfd(port, {"NOTIFY_SOCKET=" + socket_name, "WATCHDOG_USEC=600000"}, log);

  std::string seen;
  const bool ready = manager.WaitFor("READY=1", 60s, seen);
  INFO(OneLine("datagrams: " + seen + "log: " + ReadFile(log)));
  REQUIRE(ready);
  // READY=1 means the port is open now, not soon.
  CHECK(Accepts(port));
  CHECK(seen.find("STATUS=serving /job:ps/replica:0/task:0 on 127.0.0.1:" + std::to_string(port)) !=
        std::string::npos);

  // Keep-alives from the event loop, more than one.
  int keep_alives = 0;
  for (int i = 0; i < 2; ++i) {
    std::string more;
    if (manager.WaitFor("WATCHDOG=1", 5s, more)) ++keep_alives;
  }
  CHECK(keep_alives == 2);

  tfd.Signal(SIGTERM);
  std::string stopping;
  CHECK(manager.WaitFor("STOPPING=1", 20s, stopping));
  auto status = tfd.Wait(30s);
  REQUIRE(status.ok());
  CHECK(*status == 0);
}

TEST_CASE("tfd notifies a socket path: READY=1 when listening, WATCHDOG=1, STOPPING=1") {
  char tmpl[] = "/tmp/tfd-notify-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  RunLifecycle(dir + "/notify.sock", dir);
  std::filesystem::remove_all(dir);
}

TEST_CASE("tfd notifies an abstract socket (@name)") {
  char tmpl[] = "/tmp/tfd-notify-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  RunLifecycle("@" + UniqueName(), dir);
  std::filesystem::remove_all(dir);
}

TEST_CASE("WATCHDOG_PID of another process: no keep-alives, READY=1 still") {
  char tmpl[] = "/tmp/tfd-notify-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  NotifyReceiver manager("@" + UniqueName());
  // env(1) execs tfd in its own pid: pid 1 is never tfd's.
  Subprocess tfd = StartTfd(FreePort(),
                            {"NOTIFY_SOCKET=" + manager.name(), "WATCHDOG_USEC=200000",
                             "WATCHDOG_PID=1"},
                            dir + "/tfd.log");
  std::string seen;
  REQUIRE(manager.WaitFor("READY=1", 60s, seen));
  std::string later;
  CHECK_FALSE(manager.WaitFor("WATCHDOG=1", 1s, later));
  CHECK(tfd.Stop(20s) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a NOTIFY_SOCKET tfd cannot use is logged, and tfd serves anyway") {
  char tmpl[] = "/tmp/tfd-notify-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const int port = FreePort();
  const std::string log = dir + "/tfd.log";
  Subprocess tfd = StartTfd(port, {"NOTIFY_SOCKET=not-absolute"}, log);
  bool up = false;
  for (int i = 0; i < 600 && !up; ++i) {
    up = Accepts(port);
    if (!up) usleep(100 * 1000);
  }
  INFO(OneLine(ReadFile(log)));
  CHECK(up);
  CHECK(ReadFile(log).find("cannot notify systemd: INVALID_ARGUMENT: NOTIFY_SOCKET 'not-absolute'") !=
        std::string::npos);
  CHECK(tfd.Stop(20s) == 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tfd
