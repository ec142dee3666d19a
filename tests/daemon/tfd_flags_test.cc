// tfd's table of flags (daemon/tfd_flags.h), checked flag by flag: every
// flag with a validation refuses a bad value from each source, naming the
// source and the value; a flag wins over its variable and the variable over
// the --config file; the defaults the help shows are TfdConfig's; unknown
// flags and --help's formats; the removed flags, refused and never listed.
#include "daemon/tfd_flags.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/tfd_config.h"
#include "daemon/tfd_flag_sources.h"
#include "daemon/tfd_flags_doc.h"
#include "tests/integration/temp_dir.h"

namespace tfd {
namespace {

using Env = std::map<std::string, std::string>;

StatusOr<TfdConfig> Parse(std::vector<std::string> flags, Env env = {}) {
  std::vector<std::string> args = {"--cluster", R"({"worker": ["127.0.0.1:2222"]})", "--job",
                                   "worker", "--task", "0"};
  args.insert(args.end(), flags.begin(), flags.end());
  return ParseTfdFlags(args, [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

// The flags whose values are checked by their kind, but --task, which
// Parse always gives.
std::vector<const TfdFlag*> ValidatedFlags() {
  std::vector<const TfdFlag*> flags;
  for (const TfdFlag& flag : TfdFlags()) {
    const bool validated = std::holds_alternative<IntFlag>(flag.kind) ||
                           std::holds_alternative<SecondsFlag>(flag.kind) ||
                           std::holds_alternative<BytesFlag>(flag.kind) ||
                           std::holds_alternative<ChoiceFlag>(flag.kind);
    if (validated && flag.name != "task") flags.push_back(&flag);
  }
  return flags;
}

// A value each kind takes.
std::string GoodValue(const TfdFlag& flag) {
  if (const auto* n = std::get_if<IntFlag>(&flag.kind)) return std::to_string(n->min);
  if (std::holds_alternative<SecondsFlag>(flag.kind)) return "1.5";
  if (std::holds_alternative<BytesFlag>(flag.kind)) return "1K";
  return std::string(FlagChoices(flag).front());
}

bool Refused(const StatusOr<TfdConfig>& c, const std::string& source, const std::string& value) {
  INFO(c.status().ToString());
  return c.status().code() == Code::kInvalidArgument &&
         c.status().message().find(source) != std::string::npos &&
         c.status().message().find("'" + value + "'") != std::string::npos;
}

TEST_CASE("every checked flag refuses a bad value from each source, naming it and the value") {
  testing::TempDir dir;
  const auto flags = ValidatedFlags();
  REQUIRE(flags.size() >= 20);
  for (const TfdFlag* flag : flags) {
    const std::string name(flag->name), env = EnvName(name);
    INFO("--" << name);
    CHECK(Refused(Parse({"--" + name, "bogus"}), "--" + name, "bogus"));
    CHECK(Refused(Parse({"--" + name + "=x12"}), "--" + name, "x12"));
    CHECK(Refused(Parse({}, {{env, "bogus"}}), env, "bogus"));
    const std::string file = dir.Write(name + ".conf", name + " = bogus\n");
    CHECK(Refused(Parse({"--config", file}), name + " in '" + file + "'", "bogus"));
  }
}

TEST_CASE("each kind's range: integers, seconds, byte sizes, choices") {
  CHECK(Refused(Parse({"--max-connections", "-1"}), "--max-connections must be an integer of at "
                "least 0", "-1"));
  CHECK(Refused(Parse({"--threads", "-1"}), "--threads must be an integer of at least 0", "-1"));
  CHECK(Refused(Parse({"--threads", "99999999999"}), "--threads", "99999999999"));
  CHECK(Refused(Parse({"--spin-wait-us", "10001"}), "--spin-wait-us must be an integer from 0 "
                "to 10000 (microseconds)", "10001"));
  CHECK(Refused(Parse({"--step-timeout", "0"}), "--step-timeout must be a positive number of "
                "seconds", "0"));
  CHECK(Refused(Parse({"--drain-grace", "inf"}), "--drain-grace", "inf"));
  CHECK(Refused(Parse({"--memory-budget", "0"}), "--memory-budget must be a positive number of "
                "bytes", "0"));
  auto over = Parse({}, {{"TFD_MAX_MESSAGE_BYTES", "17G"}});
  CHECK(over.status().message() ==
        "TFD_MAX_MESSAGE_BYTES must be at most 16 GiB (Cap'n Proto's own limit), not 17 GiB");
  CHECK(Parse({"--log-level", "verbose"}).status().message() ==
        "--log-level 'verbose' is not one of trace, debug, info, warn, error");
  CHECK(Refused(Parse({"--http-listen", "localhost"}), "--http-listen", "localhost"));
  CHECK(Parse({"--cluster=[1"}).status().code() == Code::kInvalidArgument);
  CHECK(Parse({}, {{"TFD_TASK", "x"}}).ok());  // Parse's --task 0 wins, so x is never read
  auto task = ParseTfdFlags({"--cluster", R"({"ps": ["localhost:1"]})", "--job", "ps"},
                            [](const char* n) -> const char* {
                              return std::string(n) == "TFD_TASK" ? "-1" : nullptr;
                            });
  CHECK(Refused(task, "TFD_TASK must be an integer of at least 0", "-1"));
  // As tfd always read them: text after these three numbers is ignored.
  auto lenient = Parse({"--threads", "4x", "--checkpoint-keep", "3 ", "--step-timeout", "30s"});
  REQUIRE(lenient.ok());
  CHECK(lenient->threads == 4);
  CHECK(lenient->checkpoint_keep == 3);
  CHECK(lenient->step_timeout == std::chrono::seconds(30));
}

TEST_CASE("a flag wins over its variable, and the variable over the --config file") {
  testing::TempDir dir;
  for (const TfdFlag* flag : ValidatedFlags()) {
    const std::string name(flag->name), env = EnvName(name), good = GoodValue(*flag);
    INFO("--" << name << " " << good);
    // The losing source's bad value is never read.
    auto flag_wins = Parse({"--" + name, good}, {{env, "bogus"}});
    CHECK(flag_wins.ok());
    CHECK(Refused(Parse({"--" + name, "bogus"}, {{env, good}}), "--" + name, "bogus"));
    const std::string file = dir.Write(name + ".conf", name + " = bogus\n");
    CHECK(Parse({"--config", file}, {{env, good}}).ok());
    CHECK(Refused(Parse({"--config", file, "--" + name, "-bogus"}, {{env, good}}), "--" + name,
                  "-bogus"));
  }
}

TEST_CASE("a switch: on from the flag, from the file, or from the variable set to 1 or true") {
  testing::TempDir dir;
  for (const auto& [value, on] : std::vector<std::pair<std::string, bool>>{
           {"1", true}, {"true", true}, {"0", false}, {"yes", false}, {"", false}}) {
    auto c = Parse({}, {{"TFD_ALLOW_SOFT_PLACEMENT", value}});
    REQUIRE(c.ok());
    CHECK(c->allow_soft_placement == on);
  }
  CHECK(Parse({"--allow-soft-placement"})->allow_soft_placement);
  const std::string file = dir.Write("on.conf", "allow-soft-placement = true\n");
  CHECK(Parse({"--config", file})->allow_soft_placement);
  CHECK_FALSE(Parse({})->allow_soft_placement);
}

TEST_CASE("host buffers are page-locked unless --pin-host-buffers or TFD_PIN_HOST_BUFFERS is 0") {
  CHECK(Parse({})->pin_host_buffers);
  CHECK_FALSE(Parse({"--pin-host-buffers", "0"})->pin_host_buffers);
  CHECK_FALSE(Parse({}, {{"TFD_PIN_HOST_BUFFERS", "0"}})->pin_host_buffers);
  CHECK(Parse({}, {{"TFD_PIN_HOST_BUFFERS", "1"}})->pin_host_buffers);
  CHECK(Parse({"--pin-host-buffers", "1"}, {{"TFD_PIN_HOST_BUFFERS", "0"}})->pin_host_buffers);
  CHECK(Refused(Parse({}, {{"TFD_PIN_HOST_BUFFERS", "off"}}), "TFD_PIN_HOST_BUFFERS", "off"));
}

TEST_CASE("an unknown or incomplete flag is INVALID_ARGUMENT naming it") {
  auto unknown = Parse({"--no-such-flag", "1"});
  CHECK(unknown.status().code() == Code::kInvalidArgument);
  CHECK(unknown.status().message() == "unrecognised option '--no-such-flag'");
  auto missing = Parse({"--threads"});
  CHECK(missing.status().code() == Code::kInvalidArgument);
  CHECK(missing.status().message().find("'--threads'") != std::string::npos);
  auto twice = Parse({"--threads", "1", "--threads", "2"});
  CHECK(twice.status().code() == Code::kInvalidArgument);
  CHECK(twice.status().message().find("'--threads'") != std::string::npos);
}

// Every scalar a flag sets, to compare two configurations.
std::string Summary(const TfdConfig& c) {
  std::ostringstream s;
  const ServerLimits& l = c.server_limits;
  s << c.listen << " " << c.http_listen << " " << c.checkpoint_keep << " " << c.log_level << " "
    << (c.log_format ? static_cast<int>(*c.log_format) : -1) << " " << c.threads << " "
    << c.step_timeout.count() << " " << c.spin_wait.count() << " " << c.drain_grace.count()
    << " " << l.max_connections << " " << l.max_pending_per_peer << " "
    << l.login_timeout.count() << " " << l.failed_login_rate << " "
    << l.failed_login_max_delay.count() << " " << l.max_message_bytes << " "
    << l.max_sessions_per_client << " " << l.max_registered_graphs << " "
    << c.size_limits.max_graph_tensor_bytes << " " << c.size_limits.max_graph_bytes << " "
    << c.size_limits.max_tensor_bytes << " " << c.memory_budget << " " << c.max_received_bytes
    << " " << c.data_plane_transports << " " << c.pin_host_buffers;
  return s.str();
}

TEST_CASE("the defaults that help and docs show are TfdConfig's") {
  auto defaults = Parse({});
  REQUIRE(defaults.ok());
  std::set<std::string> described;  // defaults in words, not values
  int compared = 0;
  for (const TfdFlag* flag : ValidatedFlags()) {
    if (flag->default_text.empty()) continue;
    INFO("--" << flag->name << " " << flag->default_text);
    auto given = Parse({"--" + std::string(flag->name), std::string(flag->default_text)});
    if (!given.ok()) {
      described.insert(std::string(flag->name));
      continue;
    }
    CHECK(Summary(*given) == Summary(*defaults));
    ++compared;
  }
  CHECK(compared >= 18);
  CHECK(described == std::set<std::string>{"log-format", "max-message-bytes", "memory-budget"});
}

TEST_CASE("--help=FORMAT and --version read no other source") {
  const Env bad = {{"TFD_THREADS", "many"}};
  for (const auto& [flags, format] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--help"}, "text"}, {{"-h"}, "text"}, {{"--help=man"}, "man"},
           {{"--help=markdown"}, "markdown"}, {{"--help=bash-completion"}, "bash-completion"}}) {
    auto c = ParseTfdFlags(flags, [&bad](const char* n) -> const char* {
      auto it = bad.find(n);
      return it == bad.end() ? nullptr : it->second.c_str();
    });
    INFO(flags[0] << ": " << c.status().ToString());
    REQUIRE(c.ok());
    CHECK(c->help);
    CHECK(c->help_format == format);
  }
  auto html = ParseTfdFlags({"--help=html"}, [](const char*) -> const char* { return nullptr; });
  CHECK(Refused(html, "--help 'html' is not one of text, man, markdown, bash-completion", "html"));
}

TEST_CASE("the removed flags are refused from every source and listed nowhere") {
  testing::TempDir dir;
  const std::string file = dir.Write("old.conf", "failed-login-window = 60\n");
  auto from_file = Parse({"--config", file});
  CHECK(from_file.status().code() == Code::kInvalidArgument);
  CHECK(from_file.status().message().find("failed-login-window in '" + file + "' was removed") !=
        std::string::npos);
  const std::string texts[] = {TfdUsage(), TfdManPage("1"), TfdFlagsMarkdown(),
                               TfdBashCompletion()};
  for (const std::string& text : texts) {
    CHECK(text.find("failed-login-window") == std::string::npos);
    CHECK(text.find("failed\\-login\\-window") == std::string::npos);
    CHECK(text.find("max-failed-logins") == std::string::npos);
  }
}

TEST_CASE("the table: names and variables are unique, listed flags have help") {
  std::set<std::string> names, envs;
  for (const TfdFlag& flag : TfdFlags()) {
    INFO(flag.name);
    CHECK(names.insert(std::string(flag.name)).second);
    CHECK(envs.insert(EnvName(flag.name)).second);
    CHECK(flag.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") ==
          std::string_view::npos);
    if (IsListed(flag)) CHECK_FALSE(flag.help.empty());
    // A variable is what tfd reads: in help, man page and docs alike.
    if (IsListed(flag) && HasEnvName(flag)) {
      CHECK(FlagHelpText(flag).find(EnvName(flag.name)) != std::string::npos);
      CHECK(TfdFlagsMarkdown().find("`" + EnvName(flag.name)) != std::string::npos);
    }
  }
  CHECK(EnvName("max-connections-per-peer") == "TFD_MAX_CONNECTIONS_PER_PEER");
}

}  // namespace
}  // namespace tfd
