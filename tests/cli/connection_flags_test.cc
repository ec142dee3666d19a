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

}  // namespace
}  // namespace tfd::cli
