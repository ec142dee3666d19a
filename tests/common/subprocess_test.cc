// Subprocess: what tfctl start, the benchmarks and the integration tests
// rely on — exit statuses (signals as 128 + N), a wait that ends at its
// deadline, stopping with a grace period, output in files, a session of its
// own, a CPU pin, a limit on open files, and children that die with the
// thread that started them.
#include "common/subprocess.h"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/util/io_test_util.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Contains;
using testing::ReadFile;
using testing::TempDir;

StatusOr<Subprocess> Shell(const std::string& script, const SubprocessOptions& o = {}) {
  return Subprocess::Start({"/bin/sh", "-c", script}, o);
}

// Field `n` (1-based, as in proc(5)) of /proc/PID/stat.
std::string StatField(pid_t pid, int n) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  // The command name may hold spaces; fields after it are counted from ')'.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= n; ++i) rest >> field;
  return field;
}

TEST_CASE("a child's exit code, and 128 + N for a child ended by signal N") {
  auto ok = Shell("exit 0");
  REQUIRE(ok.ok());
  CHECK(ok->Wait(10s).value() == 0);
  CHECK_FALSE(ok->running());
  CHECK(ok->exit_status() == 0);

  auto three = Shell("exit 3");
  REQUIRE(three.ok());
  CHECK(three->Wait(10s).value() == 3);

  auto killed = Shell("kill -TERM $$");
  REQUIRE(killed.ok());
  CHECK(killed->Wait(10s).value() == 128 + SIGTERM);
}

TEST_CASE("a wait that passes its deadline says so and leaves the child running") {
  auto sleeper = Shell("exec sleep 30");
  REQUIRE(sleeper.ok());
  const auto start = std::chrono::steady_clock::now();
  auto waited = sleeper->Wait(100ms);
  CHECK(std::chrono::steady_clock::now() - start >= 100ms);
  CHECK(waited.status().code() == Code::kDeadlineExceeded);
  CHECK(sleeper->running());
  CHECK(::kill(sleeper->pid(), 0) == 0);
  CHECK(sleeper->Kill() == 128 + SIGKILL);
  CHECK_FALSE(sleeper->running());
}

TEST_CASE("Stop: SIGTERM first, SIGKILL when the grace runs out") {
  auto polite = Shell("exec sleep 30");
  REQUIRE(polite.ok());
  CHECK(polite->Stop(10s) == 128 + SIGTERM);

  // A child that ignores SIGTERM is killed after the grace. It says when
  // it ignores it, so the signal does not come first.
  TempDir dir;
  const std::string ready = (dir.path() / "ready").string();
  auto stubborn = Shell("trap '' TERM; echo ready; while :; do sleep 1; done",
                        {.stdout_path = ready});
  REQUIRE(stubborn.ok());
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (ReadFile(ready).empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(1ms);
  }
  REQUIRE(ReadFile(ready) == "ready\n");
  const auto start = std::chrono::steady_clock::now();
  CHECK(stubborn->Stop(200ms) == 128 + SIGKILL);
  CHECK(std::chrono::steady_clock::now() - start >= 200ms);

  auto done = Shell("exit 4");
  REQUIRE(done.ok());
  REQUIRE(done->Wait(10s).ok());
  CHECK(done->Stop(10s) == 4);  // already reaped: its status
}

TEST_CASE("a child still running when its Subprocess goes away is stopped and reaped") {
  pid_t pid = -1;
  {
    auto child = Shell("exec sleep 30", {.stop_grace = 5s});
    REQUIRE(child.ok());
    pid = child->pid();
  }
  // Reaped: no longer our child (a zombie would still be one).
  CHECK(::waitpid(pid, nullptr, WNOHANG) < 0);
  CHECK(errno == ECHILD);
}

TEST_CASE("output goes to files, appended or truncated; stdin from a file") {
  TempDir dir;
  const std::string out = (dir.path() / "out").string();
  const std::string err = (dir.path() / "err").string();
  const std::string in = (dir.path() / "in").string();
  testing::WriteFile(in, "from stdin\n");
  SubprocessOptions o{.stdin_path = in, .stdout_path = out, .stderr_path = err};
  for (int i = 0; i < 2; ++i) {
    auto p = Shell("cat; echo to-stdout; echo to-stderr >&2", o);
    REQUIRE(p.ok());
    REQUIRE(p->Wait(10s).value() == 0);
  }
  CHECK(ReadFile(out) == "from stdin\nto-stdout\nfrom stdin\nto-stdout\n");
  CHECK(ReadFile(err) == "to-stderr\nto-stderr\n");

  o.truncate_output = true;
  o.stdin_path = "/dev/null";
  auto p = Shell("cat; echo once", o);
  REQUIRE(p.ok());
  REQUIRE(p->Wait(10s).value() == 0);
  CHECK(ReadFile(out) == "once\n");
  CHECK(ReadFile(err).empty());

  // One file for both, as >log 2>&1: nothing overwrites anything.
  const std::string log = (dir.path() / "log").string();
  auto both = Shell("echo one; echo two >&2; echo three", {.stdout_path = log, .stderr_path = log});
  REQUIRE(both.ok());
  REQUIRE(both->Wait(10s).value() == 0);
  CHECK(ReadFile(log) == "one\ntwo\nthree\n");
}

TEST_CASE("what cannot be started is an error naming it") {
  auto missing = Subprocess::Start({"no-such-program-tfd"});
  CHECK(missing.status().code() == Code::kNotFound);
  CHECK(Contains(missing.status().message(), "no-such-program-tfd"));

  auto missing_path = Subprocess::Start({"/nowhere/tfd"});
  CHECK(missing_path.status().code() == Code::kNotFound);
  CHECK(Contains(missing_path.status().message(), "/nowhere/tfd"));

  TempDir dir;
  const std::string plain = (dir.path() / "not-executable").string();
  testing::WriteFile(plain, "#!/bin/sh\n");
  ::chmod(plain.c_str(), 0644);
  auto refused = Subprocess::Start({plain});
  CHECK_FALSE(refused.ok());
  CHECK(Contains(refused.status().message(), plain));

  auto no_dir = Shell("true", {.stdout_path = (dir.path() / "no" / "log").string()});
  CHECK(no_dir.status().code() == Code::kNotFound);
  CHECK(Contains(no_dir.status().message(), "no/log"));

  CHECK(Subprocess::Start({}).status().code() == Code::kInvalidArgument);
}

TEST_CASE("a program is found in PATH") {
  auto p = Subprocess::Start({"sh", "-c", "exit 7"});
  REQUIRE(p.ok());
  CHECK(p->Wait(10s).value() == 7);
}

TEST_CASE("new_session: the child leads a session of its own") {
  auto same = Shell("exec sleep 30");
  auto own = Shell("exec sleep 30", {.new_session = true});
  REQUIRE(same.ok());
  REQUIRE(own.ok());
  // Field 6 is the session id; a session leader's is its own pid. The
  // session is set before exec, so it holds once the command is sleep.
  CHECK(StatField(own->pid(), 6) == std::to_string(own->pid()));
  CHECK(StatField(same->pid(), 6) == StatField(::getpid(), 6));
}

TEST_CASE("cpu pins the child; max_open_files limits it") {
  const std::vector<int> cpus = AllowedCpus();
  REQUIRE_FALSE(cpus.empty());
  TempDir dir;
  const std::string out = (dir.path() / "out").string();
  auto pinned = Shell("grep Cpus_allowed_list /proc/self/status; ulimit -n",
                      {.stdout_path = out, .cpu = cpus.back(), .max_open_files = 64});
  REQUIRE(pinned.ok());
  REQUIRE(pinned->Wait(10s).value() == 0);
  const std::string text = ReadFile(out);
  INFO(text);
  CHECK(Contains(text, "Cpus_allowed_list:\t" + std::to_string(cpus.back()) + "\n"));
  CHECK(Contains(text, "\n64\n"));
}

TEST_CASE("cpus pins the child to a set of CPUs; a CPU out of range is refused") {
  const std::vector<int> cpus = AllowedCpus();
  REQUIRE_FALSE(cpus.empty());
  TempDir dir;
  const std::string out = (dir.path() / "out").string();
  // The first and last allowed CPUs: two when there are two, else one.
  const std::vector<int> set = {cpus.front(), cpus.back()};
  auto pinned = Shell("grep Cpus_allowed_list /proc/self/status", {.stdout_path = out, .cpus = set});
  REQUIRE(pinned.ok());
  REQUIRE(pinned->Wait(10s).value() == 0);
  const std::string text = ReadFile(out);
  INFO(text);
  const std::string want = cpus.size() == 1 ? std::to_string(cpus[0])
                           : cpus.back() == cpus.front() + 1
                               ? std::to_string(cpus.front()) + "-" + std::to_string(cpus.back())
                               : std::to_string(cpus.front()) + "," + std::to_string(cpus.back());
  CHECK(Contains(text, "Cpus_allowed_list:\t" + want + "\n"));
  auto refused = Shell("true", {.cpus = {CPU_SETSIZE}});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == Code::kInvalidArgument);
}

// Thread pools are sized by the affinity mask: a thread pinned to one CPU
// (and so what it starts) counts one, whatever the machine has.
TEST_CASE("NumAllowedCpus counts the CPUs of the affinity mask, not the machine's") {
  const std::vector<int> cpus = AllowedCpus();
  REQUIRE_FALSE(cpus.empty());
  CHECK(NumAllowedCpus() == static_cast<int>(cpus.size()));
  int pinned_count = 0;
  std::vector<int> pinned_list;
  std::thread pinned([&] {
    if (!PinSelf(cpus.back()).ok()) return;
    pinned_count = NumAllowedCpus();
    pinned_list = AllowedCpus();
  });
  pinned.join();
  CHECK(pinned_count == 1);
  CHECK(pinned_list == std::vector<int>{cpus.back()});
}

TEST_CASE("die_with_parent: the child gets SIGTERM when its starter ends") {
  // Orphans come back to this process (not to init), so the grandchild's
  // end can be seen here.
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  auto starter = Subprocess::Fork([&] {
    auto child = Subprocess::Start({"/bin/sh", "-c", "exec sleep 30"}, {.die_with_parent = true});
    if (!child.ok()) return 1;
    const pid_t pid = child->Release();
    (void)!::write(pipe_fds[1], &pid, sizeof(pid));
    return 0;  // the starter ends; its child must follow
  });
  REQUIRE(starter.ok());
  pid_t grandchild = -1;
  REQUIRE(::read(pipe_fds[0], &grandchild, sizeof(grandchild)) == sizeof(grandchild));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  CHECK(starter->Wait(10s).value() == 0);
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  pid_t r = 0;
  while ((r = ::waitpid(grandchild, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  if (r == 0) ::kill(grandchild, SIGKILL);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  REQUIRE(r == grandchild);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
}

TEST_CASE("Fork runs a function in a copy of this process") {
  int value = 41;
  auto child = Subprocess::Fork([&] { return value + 1; });
  REQUIRE(child.ok());
  CHECK(child->Wait(10s).value() == 42);
}

TEST_CASE("Release lets a child go: nothing stops it") {
  auto child = Shell("exec sleep 30", {.stop_grace = 0ms});
  REQUIRE(child.ok());
  pid_t pid = -1;
  {
    Subprocess moved = std::move(child).value();
    pid = moved.Release();
    CHECK_FALSE(moved.running());
  }
  CHECK(::kill(pid, 0) == 0);
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

}  // namespace
}  // namespace tfd
