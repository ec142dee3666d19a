// tfd's configuration: the size limits and the memory budget from flags and
// TFD_* variables.
#include "daemon/tfd_config.h"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

namespace tfd {
namespace {

StatusOr<TfdConfig> Parse(std::vector<std::string> flags,
                          const std::map<std::string, std::string>& env = {}) {
  flags.insert(flags.begin(), {"tfd", "--cluster", R"({"ps": ["localhost:2222"]})", "--job", "ps",
                               "--task", "0"});
  std::vector<const char*> argv;
  for (const std::string& f : flags) argv.push_back(f.c_str());
  return ParseTfdConfig(static_cast<int>(argv.size()), argv.data(), [&](const char* name) {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
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
  CHECK(defaults->limits.max_graph_tensor_bytes == SizeLimits().max_graph_tensor_bytes);
  CHECK(defaults->limits.max_graph_bytes == SizeLimits().max_graph_bytes);
  CHECK(defaults->limits.max_tensor_bytes == SizeLimits().max_tensor_bytes);
  CHECK(defaults->memory_budget == 0);

  auto set = Parse({"--max-graph-tensor-bytes", "1G", "--max-tensor-bytes=16G",
                    "--memory-budget", "8G"},
                   {{"TFD_MAX_GRAPH_BYTES", "2G"}, {"TFD_MAX_TENSOR_BYTES", "1K"}});
  INFO(set.status().ToString());
  REQUIRE(set.ok());
  CHECK(set->limits.max_graph_tensor_bytes == uint64_t{1} << 30);
  CHECK(set->limits.max_graph_bytes == uint64_t{2} << 30);
  CHECK(set->limits.max_tensor_bytes == uint64_t{16} << 30);  // the flag wins
  CHECK(set->memory_budget == uint64_t{8} << 30);

  auto bad = Parse({"--memory-budget", "lots"});
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK(bad.status().message().find("--memory-budget must be a positive number of bytes") !=
        std::string::npos);
  auto bad_env = Parse({}, {{"TFD_MAX_GRAPH_BYTES", "0"}});
  CHECK(bad_env.status().message().find("TFD_MAX_GRAPH_BYTES") != std::string::npos);
}

}  // namespace
}  // namespace tfd
