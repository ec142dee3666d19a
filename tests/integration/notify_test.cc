// tfd under a service manager, played by this test: with NOTIFY_SOCKET set
// (a socket this test binds, at a path or in the abstract namespace) tfd
// sends READY=1 only once its port accepts connections, WATCHDOG=1 at half
// of WATCHDOG_USEC, and STOPPING=1 when SIGTERM starts its drain; then it
// exits 0. What tfd@.service (Type=notify, WatchdogSec=) relies on. And
// with stderr on the stream JOURNAL_STREAM names, lines that journald reads
// priorities from.
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/raw_socket.h"
#include "tests/integration/temp_dir.h"
#include "tests/util/notify_receiver.h"

namespace tfd::testing {
namespace {

using namespace std::chrono_literals;

// Environment variables for the processes started while it lives (tfd
// inherits the test's environment), restored to what they were after.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, std::string>& vars) {
    for (const auto& [name, value] : vars) {
      const char* old = getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, old] : saved_) {
      if (old) {
        setenv(name.c_str(), old->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

// An abstract socket name no other test run on this machine uses.
std::string UniqueAbstractName() {
  std::random_device rd;
  return "@tfd-notify-" + std::to_string(getpid()) + "-" + std::to_string(rd());
}

// ps:0 of a one-task cluster on loopback, started with `vars` set.
void SpawnPs(LocalCluster& cluster, const std::map<std::string, std::string>& vars) {
  ScopedEnv env(vars);
  Status s = cluster.Spawn("ps", 0);
  INFO(s.ToString());
  REQUIRE(s.ok());
}

void RunLifecycle(const std::string& socket_name) {
  NotifyReceiver manager(socket_name);
  LocalCluster cluster({{"ps", 1}}, {"--threads", "1"});
  // 600 ms: a keep-alive every 300 ms.
  SpawnPs(cluster, {{"NOTIFY_SOCKET", socket_name}, {"WATCHDOG_USEC", "600000"}});

  std::string seen;
  const bool ready = manager.WaitFor("READY=1", 60s, seen);
  INFO(OneLine("datagrams: " + seen + "log: " + cluster.Log("ps", 0)));
  REQUIRE(ready);
  // READY=1 means the port accepts now, not soon: one attempt, no retry.
  auto connected = RawSocket::Connect(cluster.Address("ps", 0), 5s);
  CHECK(connected.ok());
  CHECK(seen.find("STATUS=serving /job:ps/replica:0/task:0 on " + cluster.Address("ps", 0)) !=
        std::string::npos);

  // Keep-alives from the event loop, more than one.
  int keep_alives = 0;
  for (int i = 0; i < 2; ++i) {
    std::string more;
    if (manager.WaitFor("WATCHDOG=1", 5s, more)) ++keep_alives;
  }
  CHECK(keep_alives == 2);

  // SIGTERM: STOPPING=1 as the drain starts (the datagram waits in the
  // socket), then exit 0.
  auto status = cluster.Stop("ps", 0, 30s);
  REQUIRE(status.ok());
  CHECK(*status == 0);
  std::string stopping;
  CHECK(manager.WaitFor("STOPPING=1", 5s, stopping));
}

TEST_CASE("tfd notifies a socket path: READY=1 when listening, WATCHDOG=1, STOPPING=1") {
  TempDir dir;
  RunLifecycle(dir.path() + "/notify.sock");
}

TEST_CASE("tfd notifies an abstract socket (@name)") {
  RunLifecycle(UniqueAbstractName());
}

TEST_CASE("WATCHDOG_PID of another process: no keep-alives, READY=1 still") {
  NotifyReceiver manager(UniqueAbstractName());
  LocalCluster cluster({{"ps", 1}}, {"--threads", "1"});
  // pid 1 is never tfd's.
  SpawnPs(cluster, {{"NOTIFY_SOCKET", manager.name()},
                    {"WATCHDOG_USEC", "200000"},
                    {"WATCHDOG_PID", "1"}});
  std::string seen;
  REQUIRE(manager.WaitFor("READY=1", 60s, seen));
  std::string later;
  CHECK_FALSE(manager.WaitFor("WATCHDOG=1", 1s, later));
  auto status = cluster.Stop("ps", 0, 20s);
  REQUIRE(status.ok());
  CHECK(*status == 0);
}

TEST_CASE("a NOTIFY_SOCKET tfd cannot use is logged, and tfd serves anyway") {
  LocalCluster cluster({{"ps", 1}}, {"--threads", "1"});
  {
    ScopedEnv env(std::map<std::string, std::string>{{"NOTIFY_SOCKET", "not-absolute"}});
    Status s = cluster.Start("ps", 0);  // waits until it accepts connections
    INFO(s.ToString());
    CHECK(s.ok());
  }
  INFO(OneLine(cluster.Log("ps", 0)));
  CHECK(cluster.Log("ps", 0).find(
            "cannot notify systemd: INVALID_ARGUMENT: NOTIFY_SOCKET 'not-absolute'") !=
        std::string::npos);
  auto status = cluster.Stop("ps", 0, 20s);
  REQUIRE(status.ok());
  CHECK(*status == 0);
}

// tfd started by a shell the way systemd starts it: stderr on a stream
// whose device and inode JOURNAL_STREAM names (here a file), or with that
// variable stale (stderr elsewhere). The log is read from the file.
std::string LogUnder(LocalCluster& cluster, const std::string& log_file, bool stale) {
  const std::string script =
      "f=\"$1\"; shift; : >\"$f\"; : >\"$f.other\"; "
      "JOURNAL_STREAM=$(stat -c %d:%i \"$f" + std::string(stale ? ".other" : "") +
      "\"); export JOURNAL_STREAM; exec \"$@\" 2>>\"$f\"";
  auto tfd = ChildProcess::Spawn({"sh", "-c", script, "sh", log_file, TfdBinary(), "--cluster",
                                  cluster.spec().ToJson(), "--job", "ps", "--task", "0",
                                  "--threads", "1"});
  REQUIRE(tfd.ok());
  std::string log;
  for (int i = 0; i < 200 && log.find("listening on") == std::string::npos; ++i) {
    std::this_thread::sleep_for(50ms);
    std::ifstream in(log_file);
    log.assign(std::istreambuf_iterator<char>(in), {});
  }
  (*tfd)->Kill();
  return log;
}

TEST_CASE("on journald's stream tfd writes priorities and no timestamps; not when stale") {
  LocalCluster cluster({{"ps", 1}});
  TempDir dir;
  const std::string journal = LogUnder(cluster, dir.path() + "/journal", false);
  INFO("journal: " << OneLine(journal));
  const std::string task = "[/job:ps/replica:0/task:0] ";
  CHECK(journal.find("<6>" + task + "listening on " + cluster.Address("ps", 0)) !=
        std::string::npos);
  std::istringstream lines(journal);
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    INFO(line);
    CHECK(std::regex_match(line, std::regex(R"(<[2-7]>\[/job:ps/replica:0/task:0\] .*)")));
  }
  CHECK(count >= 3);

  const std::string stale = LogUnder(cluster, dir.path() + "/stale", true);
  INFO("stale: " << OneLine(stale));
  CHECK(stale.find("] [info] " + task + "listening on") != std::string::npos);
  CHECK(stale.find("<6>") == std::string::npos);
}

}  // namespace
}  // namespace tfd::testing
