// tfd's connection-limit flags: defaults, flags, TFD_* variables (a flag
// wins over its variable), and a clear INVALID_ARGUMENT naming the flag or
// variable for a bad value.
#include "daemon/tfd_config.h"

#include <catch2/catch.hpp>
#include <map>

namespace tfd {
namespace {

using namespace std::chrono_literals;

StatusOr<TfdConfig> Parse(std::vector<std::string> flags, std::map<std::string, std::string> env = {}) {
  std::vector<std::string> args = {"tfd", "--cluster", R"({"worker": ["127.0.0.1:2222"]})", "--job",
                                   "worker", "--task", "0"};
  args.insert(args.end(), flags.begin(), flags.end());
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  return ParseTfdConfig(static_cast<int>(argv.size()), argv.data(), [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST_CASE("connection limits: defaults, flags and TFD_* variables") {
  auto defaults = Parse({});
  REQUIRE(defaults.ok());
  CHECK(defaults->limits.max_connections == 1024);
  CHECK(defaults->limits.max_pending_per_peer == 64);
  CHECK(defaults->limits.login_timeout == 10s);
  CHECK(defaults->limits.max_failed_logins == 10);
  CHECK(defaults->limits.failed_login_window == 60s);

  auto flags = Parse({"--max-connections", "20", "--max-connections-per-peer", "3",
                      "--login-timeout", "0.5", "--max-failed-logins", "0",
                      "--failed-login-window", "2"});
  INFO(flags.status().ToString());
  REQUIRE(flags.ok());
  CHECK(flags->limits.max_connections == 20);
  CHECK(flags->limits.max_pending_per_peer == 3);
  CHECK(flags->limits.login_timeout == 500ms);
  CHECK(flags->limits.max_failed_logins == 0);
  CHECK(flags->limits.failed_login_window == 2s);

  auto env = Parse({"--max-connections", "7"},
                   {{"TFD_MAX_CONNECTIONS", "9"}, {"TFD_MAX_CONNECTIONS_PER_PEER", "5"},
                    {"TFD_LOGIN_TIMEOUT", "3"}, {"TFD_MAX_FAILED_LOGINS", "4"},
                    {"TFD_FAILED_LOGIN_WINDOW", "30"}});
  REQUIRE(env.ok());
  CHECK(env->limits.max_connections == 7);
  CHECK(env->limits.max_pending_per_peer == 5);
  CHECK(env->limits.login_timeout == 3s);
  CHECK(env->limits.max_failed_logins == 4);
  CHECK(env->limits.failed_login_window == 30s);
}

TEST_CASE("a bad connection limit is INVALID_ARGUMENT naming the flag or variable") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--max-connections", "0"}, "--max-connections must be an integer of at least 1, not '0'"},
      {{"--max-connections-per-peer", "many"}, "--max-connections-per-peer must be an integer"},
      {{"--login-timeout", "-1"}, "--login-timeout must be a positive number of seconds, not '-1'"},
      {{"--login-timeout", "5s"}, "--login-timeout must be a positive number of seconds, not '5s'"},
      {{"--max-failed-logins", "-2"}, "--max-failed-logins must be an integer of at least 0"},
      {{"--failed-login-window", "0"}, "--failed-login-window must be a positive number"},
  };
  for (const auto& [flags, message] : cases) {
    auto c = Parse(flags);
    INFO(flags[0] << " " << flags[1] << ": " << c.status().ToString());
    CHECK(c.status().code() == Code::kInvalidArgument);
    CHECK(c.status().message().find(message) != std::string::npos);
  }
  auto env = Parse({}, {{"TFD_LOGIN_TIMEOUT", "soon"}});
  CHECK(env.status().code() == Code::kInvalidArgument);
  CHECK(env.status().message().find("TFD_LOGIN_TIMEOUT must be a positive number") !=
        std::string::npos);
}

}  // namespace
}  // namespace tfd
