// Where tfctl's commands connect: --target, else the task TF_CONFIG names,
// and a usage error that says which is missing.
#include "cli/connection_flags.h"

#include <catch2/catch.hpp>

#include "cli/args.h"

namespace tfd::cli {
namespace {

std::string UsageMessage(const std::string& target, const char* tf_config) {
  try {
    TargetOrTfConfig(target, tf_config);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("the target: --target wins, else TF_CONFIG's task") {
  const char* tf_config =
      R"({"cluster": {"chief": ["c0:2222"], "worker": ["w0:2222", "w1:2222"]},
          "task": {"type": "worker", "index": 1}})";
  CHECK(TargetOrTfConfig("h:1", tf_config) == "h:1");
  CHECK(TargetOrTfConfig("", tf_config) == "w1:2222");
  CHECK(TargetOrTfConfig("h:1", nullptr) == "h:1");
}

TEST_CASE("the target: neither given, or TF_CONFIG that cannot give one, is a usage error") {
  CHECK(UsageMessage("", nullptr).find("--target is required") != std::string::npos);
  CHECK(UsageMessage("", "").find("--target is required") != std::string::npos);
  CHECK(UsageMessage("", "{nope").find("TF_CONFIG") != std::string::npos);
  CHECK(UsageMessage("", R"({"cluster": {"worker": ["w0:1"]}})").find("names no task") !=
        std::string::npos);
  const std::string out_of_range =
      UsageMessage("", R"({"cluster": {"worker": ["w0:1"]}, "task": {"type": "worker", "index": 3}})");
  CHECK(out_of_range.find("not in its cluster") != std::string::npos);
  CHECK(out_of_range.find("worker") != std::string::npos);
}

// The usage error ParseArgs throws for `args` with the connection flags.
std::string FlagsUsageMessage(const Args& args) {
  ConnectionFlags flags;
  boost::program_options::options_description options;
  AddConnectionFlags(options, flags);
  try {
    ParseArgs(args, options);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("the target: a --target that is not HOST:PORT is a usage error at once") {
  // Each once was dialled until the deadline, then reported UNAVAILABLE.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"127.0.0.1:99999", "port '99999'"},
      {"127.0.0.1:-5", "port '-5'"},
      {":31001", "no host"},
      {"127.0.0.1:", "no port"},
      {"127.0.0.1:abc", "port 'abc'"},
      {"127.0.0.1", "not HOST:PORT"},
      {"127.0.0.1:0", "port '0'"},
  };
  for (const auto& [target, why] : bad) {
    INFO(target);
    for (const std::string& message :
         {UsageMessage(target, nullptr), FlagsUsageMessage({"--target", target})}) {
      CHECK(message.find("--target") != std::string::npos);
      CHECK(message.find("'" + target + "'") != std::string::npos);
      CHECK(message.find(why) != std::string::npos);
    }
  }
  CHECK(FlagsUsageMessage({"--target", "localhost:31001"}).empty());
  CHECK(FlagsUsageMessage({"--target", "[::1]:65535"}).empty());
}

TEST_CASE("the connection --timeout must be a positive number of seconds") {
  for (const char* timeout : {"0", "-1", "nan", "1e9"}) {
    INFO(timeout);
    CHECK(FlagsUsageMessage({"--timeout", timeout}).find("--timeout must be a positive") !=
          std::string::npos);
  }
  CHECK(FlagsUsageMessage({"--timeout", "0.5"}).empty());
}

}  // namespace
}  // namespace tfd::cli
