// SystemdNotifier against a real datagram socket playing systemd: states
// arrive as sent, at a path and in the abstract namespace; the environment
// is read as sd_notify(3) and sd_watchdog_enabled(3) read it; keep-alives
// come from the event loop while their promise is held, and stop with it.
#include "daemon/systemd_notify.h"

#include <kj/async-io.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <random>

#include <spdlog/sinks/null_sink.h>

#include "tests/util/notify_receiver.h"

namespace tfd {
namespace {

using testing::NotifyReceiver;
using namespace std::chrono_literals;

// A name no other test run on this machine uses at the same time.
std::string UniqueName(const std::string& prefix) {
  std::random_device rd;
  return prefix + "tfd-notify-test-" + std::to_string(getpid()) + "-" + std::to_string(rd());
}

// An environment of these variables only.
std::function<const char*(const char*)> Env(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

std::unique_ptr<SystemdNotifier> MustCreate(std::map<std::string, std::string> vars) {
  auto n = SystemdNotifier::FromEnvironment(Env(std::move(vars)));
  INFO(n.status().ToString());
  REQUIRE(n.ok());
  REQUIRE(*n != nullptr);
  return std::move(n).value();
}

TEST_CASE("no NOTIFY_SOCKET, no notifier") {
  for (auto vars : {std::map<std::string, std::string>{},
                    std::map<std::string, std::string>{{"NOTIFY_SOCKET", ""}},
                    std::map<std::string, std::string>{{"WATCHDOG_USEC", "1000000"}}}) {
    auto n = SystemdNotifier::FromEnvironment(Env(vars));
    REQUIRE(n.ok());
    CHECK(*n == nullptr);
  }
}

TEST_CASE("states arrive at a socket path") {
  const std::string path =
      (std::filesystem::temp_directory_path() / UniqueName("")).string() + ".sock";
  NotifyReceiver manager(path);
  auto notifier = MustCreate({{"NOTIFY_SOCKET", path}});
  REQUIRE(notifier->Notify("READY=1\nSTATUS=serving").ok());
  REQUIRE(notifier->Notify("STOPPING=1").ok());
  CHECK(manager.Receive(5s) == std::optional<std::string>("READY=1\nSTATUS=serving"));
  CHECK(manager.Receive(5s) == std::optional<std::string>("STOPPING=1"));
}

TEST_CASE("states arrive at an abstract socket (@name)") {
  NotifyReceiver manager(UniqueName("@"));
  auto notifier = MustCreate({{"NOTIFY_SOCKET", manager.name()}});
  REQUIRE(notifier->Notify("READY=1").ok());
  CHECK(manager.Receive(5s) == std::optional<std::string>("READY=1"));
  // The same name as a path is another socket: nothing there.
  auto as_path = MustCreate({{"NOTIFY_SOCKET", "/" + manager.name().substr(1)}});
  CHECK(as_path->Notify("READY=1").code() == Code::kUnavailable);
}

TEST_CASE("a socket no one receives on: UNAVAILABLE naming it") {
  const std::string path = "/tmp/" + UniqueName("") + ".missing";
  auto notifier = MustCreate({{"NOTIFY_SOCKET", path}});
  Status s = notifier->Notify("READY=1");
  CHECK(s.code() == Code::kUnavailable);
  CHECK_THAT(s.message(), Catch::Contains(path));
}

TEST_CASE("a manager that does not read never blocks the sender") {
  NotifyReceiver manager(UniqueName("@"));
  auto notifier = MustCreate({{"NOTIFY_SOCKET", manager.name()}});
  // A datagram socket's queue holds a few (net.unix.max_dgram_qlen, 10 by
  // default); past that a blocking send would hang here.
  int refused = 0;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) {
    if (!notifier->Notify("WATCHDOG=1").ok()) ++refused;
  }
  CHECK(refused > 0);
  CHECK(std::chrono::steady_clock::now() - started < 5s);
}

TEST_CASE("NOTIFY_SOCKET values the protocol cannot reach are refused") {
  for (const std::string& bad : std::vector<std::string>{"relative/path", "vsock:2:1234",
                                                      "/" + std::string(200, 'x'), "@" + std::string(200, 'x')}) {
    auto n = SystemdNotifier::FromEnvironment(Env({{"NOTIFY_SOCKET", bad}}));
    INFO(bad);
    REQUIRE(!n.ok());
    CHECK(n.status().code() == Code::kInvalidArgument);
    CHECK_THAT(n.status().message(), Catch::Contains("NOTIFY_SOCKET"));
  }
}

TEST_CASE("WATCHDOG_USEC: keep-alives at half the interval, for this process only") {
  const std::string socket = "@unused";
  CHECK(MustCreate({{"NOTIFY_SOCKET", socket}})->keep_alive_interval() == std::nullopt);
  CHECK(MustCreate({{"NOTIFY_SOCKET", socket}, {"WATCHDOG_USEC", "30000000"}})
            ->keep_alive_interval() == std::chrono::microseconds(15000000));
  CHECK(MustCreate({{"NOTIFY_SOCKET", socket},
                    {"WATCHDOG_USEC", "30000000"},
                    {"WATCHDOG_PID", std::to_string(getpid())}})
            ->keep_alive_interval() == std::chrono::microseconds(15000000));
  // Inherited from a parent the watchdog was meant for.
  CHECK(MustCreate({{"NOTIFY_SOCKET", socket},
                    {"WATCHDOG_USEC", "30000000"},
                    {"WATCHDOG_PID", std::to_string(getpid() + 1)}})
            ->keep_alive_interval() == std::nullopt);
  for (std::string bad : {"0", "-5", "10s", "abc", "99999999999999999999999"}) {
    auto n = SystemdNotifier::FromEnvironment(
        Env({{"NOTIFY_SOCKET", socket}, {"WATCHDOG_USEC", bad}}));
    INFO(bad);
    REQUIRE(!n.ok());
    CHECK(n.status().code() == Code::kInvalidArgument);
    CHECK_THAT(n.status().message(), Catch::Contains("WATCHDOG_USEC"));
  }
}

TEST_CASE("KeepAlive sends WATCHDOG=1 from the event loop while held") {
  auto io = kj::setupAsyncIo();
  kj::Timer& timer = io.provider->getTimer();
  auto logger = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  NotifyReceiver manager(UniqueName("@"));
  // 40 ms: a keep-alive every 20 ms.
  auto notifier = MustCreate({{"NOTIFY_SOCKET", manager.name()}, {"WATCHDOG_USEC", "40000"}});
  {
    kj::Promise<void> keep_alive = notifier->KeepAlive(timer, logger);
    // Nothing before the loop turns: the keep-alives come from it.
    CHECK(manager.Receive(50ms) == std::nullopt);
    timer.afterDelay(300 * kj::MILLISECONDS).wait(io.waitScope);
  }
  int keep_alives = 0;
  while (auto m = manager.Receive(0ms)) {
    CHECK(*m == "WATCHDOG=1");
    ++keep_alives;
  }
  // 15 due in 300 ms; a loaded machine may fire late, never early.
  CHECK(keep_alives >= 3);
  CHECK(keep_alives <= 16);
  // Dropped: no more, however long the loop runs.
  timer.afterDelay(100 * kj::MILLISECONDS).wait(io.waitScope);
  CHECK(manager.Receive(0ms) == std::nullopt);
}

TEST_CASE("KeepAlive without a watchdog sends nothing") {
  auto io = kj::setupAsyncIo();
  auto logger = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  NotifyReceiver manager(UniqueName("@"));
  auto notifier = MustCreate({{"NOTIFY_SOCKET", manager.name()}});
  kj::Promise<void> keep_alive = notifier->KeepAlive(io.provider->getTimer(), logger);
  io.provider->getTimer().afterDelay(100 * kj::MILLISECONDS).wait(io.waitScope);
  CHECK(manager.Receive(0ms) == std::nullopt);
}

}  // namespace
}  // namespace tfd
