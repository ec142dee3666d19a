// tfd's configuration: the connection limits and the size limits and memory
// budget, from defaults, flags and TFD_* variables (a flag wins over its
// variable), and a clear INVALID_ARGUMENT naming the flag or variable for a bad value;
// the auth token file, held to common/token_file.h's rules.
#include "daemon/tfd_config.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <unistd.h>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/temp_dir.h"

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
  CHECK(defaults->server_limits.max_connections == 0);
  CHECK(defaults->server_limits.max_pending_per_peer == 64);
  CHECK(defaults->server_limits.login_timeout == 10s);
  CHECK(defaults->server_limits.failed_login_rate == 10);
  CHECK(defaults->server_limits.failed_login_max_delay == 5s);

  auto flags = Parse({"--max-connections", "20", "--max-connections-per-peer", "3",
                      "--login-timeout", "0.5", "--failed-login-rate", "0",
                      "--failed-login-max-delay", "2"});
  INFO(flags.status().ToString());
  REQUIRE(flags.ok());
  CHECK(flags->server_limits.max_connections == 20);
  CHECK(flags->server_limits.max_pending_per_peer == 3);
  CHECK(flags->server_limits.login_timeout == 500ms);
  CHECK(flags->server_limits.failed_login_rate == 0);
  CHECK(flags->server_limits.failed_login_max_delay == 2s);

  auto env = Parse({"--max-connections", "7"},
                   {{"TFD_MAX_CONNECTIONS", "9"}, {"TFD_MAX_CONNECTIONS_PER_PEER", "5"},
                    {"TFD_LOGIN_TIMEOUT", "3"}, {"TFD_FAILED_LOGIN_RATE", "4"},
                    {"TFD_FAILED_LOGIN_MAX_DELAY", "0.5"}});
  REQUIRE(env.ok());
  CHECK(env->server_limits.max_connections == 7);
  CHECK(env->server_limits.max_pending_per_peer == 5);
  CHECK(env->server_limits.login_timeout == 3s);
  CHECK(env->server_limits.failed_login_rate == 4);
  CHECK(env->server_limits.failed_login_max_delay == 500ms);
}

TEST_CASE("a bad connection limit is INVALID_ARGUMENT naming the flag or variable") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--max-connections", "-1"}, "--max-connections must be an integer of at least 0, not '-1'"},
      {{"--max-connections-per-peer", "many"}, "--max-connections-per-peer must be an integer"},
      {{"--login-timeout", "-1"}, "--login-timeout must be a positive number of seconds, not '-1'"},
      {{"--login-timeout", "5s"}, "--login-timeout must be a positive number of seconds, not '5s'"},
      {{"--failed-login-rate", "-2"}, "--failed-login-rate must be an integer of at least 0"},
      {{"--failed-login-max-delay", "0"}, "--failed-login-max-delay must be a positive number"},
      // Gone with the lockout they set: refused, naming what replaced them.
      {{"--max-failed-logins", "10"}, "--max-failed-logins was removed: wrong tokens no longer "
                                      "lock an address out"},
      {{"--failed-login-window", "60"}, "--failed-login-window was removed"},
  };
  for (const auto& [flags, message] : cases) {
    auto c = Parse(flags);
    INFO(flags[0] << " " << flags[1] << ": " << c.status().ToString());
    CHECK(c.status().code() == Code::kInvalidArgument);
    CHECK(c.status().message().find(message) != std::string::npos);
  }
  auto removed = Parse({}, {{"TFD_MAX_FAILED_LOGINS", "10"}});
  CHECK(removed.status().code() == Code::kInvalidArgument);
  CHECK(removed.status().message().find("TFD_MAX_FAILED_LOGINS was removed") != std::string::npos);
  CHECK(removed.status().message().find("--failed-login-rate") != std::string::npos);
  auto env = Parse({}, {{"TFD_LOGIN_TIMEOUT", "soon"}});
  CHECK(env.status().code() == Code::kInvalidArgument);
  CHECK(env.status().message().find("TFD_LOGIN_TIMEOUT must be a positive number") !=
        std::string::npos);
}

TEST_CASE("what a logged-in client may hold: --max-message-bytes, --max-sessions-per-client, "
          "--max-registered-graphs") {
  auto defaults = Parse({});
  REQUIRE(defaults.ok());
  CHECK(defaults->server_limits.max_message_bytes == 0);  // derived from the size limits
  CHECK(defaults->server_limits.max_sessions_per_client == 64);
  CHECK(defaults->server_limits.max_registered_graphs == 4096);
  auto set = Parse({"--max-message-bytes", "1G", "--max-sessions-per-client", "3"},
                   {{"TFD_MAX_REGISTERED_GRAPHS", "100"}});
  INFO(set.status().ToString());
  REQUIRE(set.ok());
  CHECK(set->server_limits.max_message_bytes == uint64_t{1} << 30);
  CHECK(set->server_limits.max_sessions_per_client == 3);
  CHECK(set->server_limits.max_registered_graphs == 100);
  auto huge = Parse({"--max-message-bytes", "32G"});
  CHECK(huge.status().code() == Code::kInvalidArgument);
  CHECK(huge.status().message().find("--max-message-bytes must be at most 16 GiB (Cap'n "
                                     "Proto's own limit), not 32 GiB") != std::string::npos);
  CHECK(Parse({"--max-sessions-per-client", "0"}).status().message().find(
            "--max-sessions-per-client must be an integer of at least 1, not '0'") !=
        std::string::npos);
}

TEST_CASE("--drain-grace: 2 s by default, from the flag or TFD_DRAIN_GRACE, positive") {
  auto defaults = Parse({});
  REQUIRE(defaults.ok());
  CHECK(defaults->drain_grace == 2s);
  auto flag = Parse({"--drain-grace", "0.25"}, {{"TFD_DRAIN_GRACE", "60"}});
  REQUIRE(flag.ok());
  CHECK(flag->drain_grace == 250ms);
  auto env = Parse({}, {{"TFD_DRAIN_GRACE", "60"}});
  REQUIRE(env.ok());
  CHECK(env->drain_grace == 60s);
  for (const char* bad : {"0", "-1", "soon"}) {
    auto c = Parse({"--drain-grace", bad});
    CHECK(c.status().code() == Code::kInvalidArgument);
    CHECK(c.status().message().find(std::string("--drain-grace must be a positive number of "
                                                "seconds, not '") + bad + "'") !=
          std::string::npos);
  }
}

TEST_CASE("--auth-token-file: a weak or world-readable token stops tfd; group-readable warns") {
  testing::TempDir dir;
  const std::string good = dir.WriteSecret("good", testing::kToken);
  auto c = Parse({"--auth-token-file", good});
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  CHECK(c->auth_token == testing::kToken);
  CHECK(c->auth_token_warning.empty());

  const std::string blank = dir.WriteSecret("blank", "   ");
  auto refused = Parse({}, {{"TFD_AUTH_TOKEN_FILE", blank}});
  CHECK(refused.status().code() == Code::kInvalidArgument);
  CHECK(refused.status().message().find("TFD_AUTH_TOKEN_FILE: token file '" + blank +
                                        "' holds no token") != std::string::npos);

  const std::string open = dir.WriteSecret("open", testing::kToken);
  std::filesystem::permissions(open, std::filesystem::perms::others_read,
                               std::filesystem::perm_options::add);
  auto world = Parse({"--auth-token-file", open});
  CHECK(world.status().code() == Code::kInvalidArgument);
  CHECK(world.status().message().find("chmod 600 " + open) != std::string::npos);

  const std::string shared = dir.WriteSecret("shared", testing::kToken);
  std::filesystem::permissions(shared, std::filesystem::perms::group_read,
                               std::filesystem::perm_options::add);
  auto group = Parse({"--auth-token-file", shared});
  REQUIRE(group.ok());
  CHECK(group->auth_token == testing::kToken);
  CHECK(group->auth_token_warning.find("may be read by its group") != std::string::npos);
}

TEST_CASE("--spin-wait-us: off by default, from the flag or TFD_SPIN_WAIT_US, bounded") {
  auto defaults = Parse({});
  REQUIRE(defaults.ok());
  CHECK(defaults->spin_wait == 0us);
  auto flag = Parse({"--spin-wait-us", "150"}, {{"TFD_SPIN_WAIT_US", "20"}});
  REQUIRE(flag.ok());
  CHECK(flag->spin_wait == 150us);
  auto env = Parse({}, {{"TFD_SPIN_WAIT_US", "10000"}});
  REQUIRE(env.ok());
  CHECK(env->spin_wait == kMaxSpinWait);
  for (const char* bad : {"-1", "10001", "150us", "", "lots", "99999999999999999999"}) {
    auto c = Parse({"--spin-wait-us", bad});
    INFO("'" << bad << "': " << c.status().ToString());
    CHECK(c.status().code() == Code::kInvalidArgument);
    CHECK(c.status().message().find(std::string("--spin-wait-us must be an integer from 0 to "
                                                "10000 (microseconds), not '") + bad + "'") !=
          std::string::npos);
  }
  auto bad_env = Parse({}, {{"TFD_SPIN_WAIT_US", "-5"}});
  CHECK(bad_env.status().code() == Code::kInvalidArgument);
  CHECK(bad_env.status().message().find("TFD_SPIN_WAIT_US must be an integer") != std::string::npos);
}

TEST_CASE("byte sizes take binary suffixes") {
  CHECK(ParseByteSize("1048576") == uint64_t{1} << 20);
  CHECK(ParseByteSize("64K") == uint64_t{64} << 10);
  CHECK(ParseByteSize("64M") == uint64_t{64} << 20);
  CHECK(ParseByteSize("64MiB") == uint64_t{64} << 20);
  CHECK(ParseByteSize("8GB") == uint64_t{8} << 30);
  CHECK(ParseByteSize("2t") == uint64_t{2} << 40);
  for (const char* bad : {"", "0", "-5", "1.5G", "12X", "G", "99999999999T", " 5"}) {
    CAPTURE(bad);
    CHECK(!ParseByteSize(bad));
  }
}

TEST_CASE("the limits default to SizeLimits' values and come from flags or TFD_*") {
  auto defaults = Parse({});
  REQUIRE(defaults.ok());
  CHECK(defaults->size_limits.max_graph_tensor_bytes == SizeLimits().max_graph_tensor_bytes);
  CHECK(defaults->size_limits.max_graph_bytes == SizeLimits().max_graph_bytes);
  CHECK(defaults->size_limits.max_tensor_bytes == SizeLimits().max_tensor_bytes);
  CHECK(defaults->memory_budget == 0);

  auto set = Parse({"--max-graph-tensor-bytes", "1G", "--max-tensor-bytes=16G",
                    "--memory-budget", "8G"},
                   {{"TFD_MAX_GRAPH_BYTES", "2G"}, {"TFD_MAX_TENSOR_BYTES", "1K"}});
  INFO(set.status().ToString());
  REQUIRE(set.ok());
  CHECK(set->size_limits.max_graph_tensor_bytes == uint64_t{1} << 30);
  CHECK(set->size_limits.max_graph_bytes == uint64_t{2} << 30);
  CHECK(set->size_limits.max_tensor_bytes == uint64_t{16} << 30);  // the flag wins
  CHECK(set->memory_budget == uint64_t{8} << 30);

  auto bad = Parse({"--memory-budget", "lots"});
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK(bad.status().message().find("--memory-budget must be a positive number of bytes") !=
        std::string::npos);
  auto bad_env = Parse({}, {{"TFD_MAX_GRAPH_BYTES", "0"}});
  CHECK(bad_env.status().message().find("TFD_MAX_GRAPH_BYTES") != std::string::npos);
}

TEST_CASE("the data plane's budget and transports come from flags or TFD_*") {
  auto defaults = Parse({});
  REQUIRE(defaults.ok());
  CHECK(defaults->max_received_bytes == uint64_t{4} << 30);
  CHECK(defaults->data_plane_transports == "stream");

  auto set = Parse({"--max-received-bytes", "512M"}, {{"TFD_DATA_PLANE_TRANSPORTS", "shm"}});
  INFO(set.status().ToString());
  REQUIRE(set.ok());
  CHECK(set->max_received_bytes == uint64_t{512} << 20);
  CHECK(set->data_plane_transports == "shm");
  auto flag_wins = Parse({"--data-plane-transports=stream"}, {{"TFD_DATA_PLANE_TRANSPORTS", "shm"}});
  REQUIRE(flag_wins.ok());
  CHECK(flag_wins->data_plane_transports == "stream");

  auto bad = Parse({"--max-received-bytes", "-1"});
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK(bad.status().message().find("--max-received-bytes") != std::string::npos);
  // UCX transport names are refused: UCX's TCP transport is never used.
  for (const char* old : {"tcp", "sm", "^sm", "tcp sm"}) {
    INFO(old);
    auto bad_tls = Parse({"--data-plane-transports", old});
    CHECK(bad_tls.status().code() == Code::kInvalidArgument);
    CHECK(bad_tls.status().message().find("--data-plane-transports") != std::string::npos);
    CHECK(bad_tls.status().message().find("UCX transports are no longer chosen") != std::string::npos);
  }
  auto bad_name = Parse({"--data-plane-transports", "auto"});
  CHECK(bad_name.status().code() == Code::kInvalidArgument);
  CHECK(bad_name.status().message().find("'shm'") != std::string::npos);
}

TEST_CASE("a --config file fills what flags and TFD_* leave open, in that order") {
  const std::string path = "/tmp/tfd_config_test." + std::to_string(::getpid()) + ".conf";
  {
    std::ofstream out(path);
    out << "# a comment\n"
        << "threads = 3\n"
        << "step-timeout = 7\n"
        << "max-connections = 50\n"
        << "log-device-placement = true\n";
  }
  auto c = Parse({"--config", path, "--threads", "5"}, {{"TFD_STEP_TIMEOUT", "9"}});
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  CHECK(c->threads == 5);                      // the flag wins
  CHECK(c->step_timeout == 9s);                // then the variable
  CHECK(c->server_limits.max_connections == 50);  // then the file
  CHECK(c->log_device_placement);
  // TFD_CONFIG names the file too.
  auto by_env = Parse({}, {{"TFD_CONFIG", path}});
  REQUIRE(by_env.ok());
  CHECK(by_env->threads == 3);
  // A bad value in the file names the file; an unknown name is refused.
  {
    std::ofstream out(path);
    out << "threads = many\n";
  }
  auto bad = Parse({"--config", path});
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK(bad.status().message().find("threads in '" + path + "'") != std::string::npos);
  {
    std::ofstream out(path);
    out << "no-such-flag = 1\n";
  }
  auto unknown = Parse({"--config", path});
  CHECK(unknown.status().code() == Code::kInvalidArgument);
  CHECK(unknown.status().message().find("no-such-flag") != std::string::npos);
  std::remove(path.c_str());
  auto missing = Parse({"--config", path});
  CHECK(missing.status().code() == Code::kInvalidArgument);
  CHECK(missing.status().message().find(path) != std::string::npos);
  // A file without an end is read no further than a config file can be long.
  auto endless = Parse({"--config", "/dev/zero"});
  CHECK(endless.status().code() == Code::kInvalidArgument);
  CHECK(endless.status().message().find("'/dev/zero' holds over 1048576 bytes") !=
        std::string::npos);
}

TEST_CASE("TFD_LOG_DEVICE_PLACEMENT=1 turns the switch on; --help describes every flag") {
  auto on = Parse({}, {{"TFD_LOG_DEVICE_PLACEMENT", "1"}});
  REQUIRE(on.ok());
  CHECK(on->log_device_placement);
  auto off = Parse({}, {{"TFD_LOG_DEVICE_PLACEMENT", "0"}});
  REQUIRE(off.ok());
  CHECK_FALSE(off->log_device_placement);
  auto help = Parse({"--help"});
  REQUIRE(help.ok());
  CHECK(help->help);
  CHECK(help->usage.find("--version") != std::string::npos);
  auto version = Parse({"--version"});
  REQUIRE(version.ok());
  CHECK(version->version);
  CHECK_FALSE(version->help);
  CHECK(help->usage.find("--max-received-bytes arg") != std::string::npos);
  CHECK(help->usage.find("a file of NAME = VALUE lines") != std::string::npos);
}

// A pod's spec names its headless-service DNS name, which may not resolve
// yet, and a host's name may map to 127.0.1.1 in /etc/hosts: either way the
// task must listen where peers can reach it.
TEST_CASE("the default listen address: every interface on the spec's port, loopback kept") {
  auto Spec = [](const std::string& address) {
    std::vector<std::string> args = {"tfd", "--cluster", R"({"ps": [")" + address + R"("]})",
                                     "--job", "ps", "--task", "0"};
    std::vector<const char*> argv;
    for (auto& a : args) argv.push_back(a.c_str());
    return ParseTfdConfig(static_cast<int>(argv.size()), argv.data(),
                          [](const char*) -> const char* { return nullptr; });
  };
  for (const auto& [spec, listen] : std::vector<std::pair<std::string, std::string>>{
           {"ps-0.ps.default.svc.cluster.local:2222", "*:2222"},
           {"10.1.2.3:2223", "*:2223"},
           {"[fd00::7]:2224", "*:2224"},
           {"localhost:2225", "localhost:2225"},
           {"127.0.0.1:2226", "127.0.0.1:2226"},
           {"[::1]:2227", "[::1]:2227"}}) {
    INFO(spec);
    auto config = Spec(spec);
    REQUIRE(config.ok());
    CHECK(config->listen == listen);
  }
  auto explicit_listen = Parse({"--listen", "0.0.0.0:3333"});
  REQUIRE(explicit_listen.ok());
  CHECK(explicit_listen->listen == "0.0.0.0:3333");
  auto from_env = Parse({}, {{"TFD_LISTEN", "0.0.0.0:3334"}});
  REQUIRE(from_env.ok());
  CHECK(from_env->listen == "0.0.0.0:3334");
}

}  // namespace
}  // namespace tfd
