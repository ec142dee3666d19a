// MatchingFiles as tf.matching_files users rely on it: globs in any
// component, dot files matched, escapes, sorted names written as the
// pattern writes them, several patterns at once; and confinement to the
// task's io_dirs (a fixed part that leaves them refused, a link out of
// them no match), hostile match counts refused.
#include "kernels/register_all.h"
#include "tests/util/io_test_util.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {
namespace {

struct MatchEnv {
  MatchEnv() {
    REQUIRE(kernels::RegisterAll(registry).ok());
    env.io_dirs = {dir.path()};
    for (const char* d : {"a", "b", "c", "c/d"}) std::filesystem::create_directory(dir.path() / d);
    for (const char* f : {"a/x1.csv", "a/x2.csv", "a/y.txt", "b/x3.csv", ".hidden.csv", "q*.csv",
                          "qq.csv", "c/d/e.csv"}) {
      WriteFile(dir.path() / f, "data");
    }
    std::filesystem::create_directory_symlink("/etc", dir.path() / "out");
  }
  // The names matched, or the error.
  StatusOr<std::vector<std::string>> Match(std::vector<std::string> patterns, bool vector = true) {
    RunOpOptions options;
    options.env = &env;
    Tensor in = vector ? Tensor::FromVector(patterns) : Tensor::Scalar(patterns.at(0));
    TFD_ASSIGN_OR_RETURN(auto out, RunOp(registry, "MatchingFiles", {}, {in}, options));
    REQUIRE(out[0].rank() == 1);
    return std::vector<std::string>(out[0].data<std::string>(),
                                    out[0].data<std::string>() + out[0].num_elements());
  }
  void RequireMatches(const std::string& pattern, const std::vector<std::string>& want) {
    auto got = Match({pattern}, false);
    INFO(pattern << ": " << got.status().ToString());
    REQUIRE(got.ok());
    CHECK(*got == want);
  }

  TempDir dir;
  OpRegistry registry;
  KernelEnv env;
};

TEST_CASE("MatchingFiles matches globs in any component, sorted, as the pattern writes them") {
  MatchEnv e;
  e.RequireMatches("a/*.csv", {"a/x1.csv", "a/x2.csv"});
  e.RequireMatches("*/x?.csv", {"a/x1.csv", "a/x2.csv", "b/x3.csv"});
  e.RequireMatches("[ab]/x[13].csv", {"a/x1.csv", "b/x3.csv"});
  e.RequireMatches("*.csv", {".hidden.csv", "q*.csv", "qq.csv"});  // dot files match, as TF1's
  e.RequireMatches("q\\*.csv", {"q*.csv"});                        // an escaped '*' is itself
  e.RequireMatches("c/*/e.csv", {"c/d/e.csv"});
  e.RequireMatches("c//d/*", {"c//d/e.csv"});  // its fixed part as written
  e.RequireMatches("a/y.txt", {"a/y.txt"});    // no wildcard: the file, when it exists
  e.RequireMatches("a/missing.txt", {});
  e.RequireMatches("*/nothing*", {});  // no match is not an error
  const std::string abs = e.dir.path().string();
  e.RequireMatches(abs + "/b/*", {abs + "/b/x3.csv"});
  auto two = e.Match({"b/*.csv", "a/x1.csv"});
  REQUIRE(two.ok());
  CHECK(*two == std::vector<std::string>{"a/x1.csv", "b/x3.csv"});
}

TEST_CASE("MatchingFiles stays within io_dirs and refuses hostile counts") {
  MatchEnv e;
  for (const char* outside : {"../*", "/etc/*", "out/*", "/etc/passwd"}) {
    auto got = e.Match({outside}, false);
    INFO(outside);
    CHECK(got.status().code() == Code::kInvalidArgument);
    CHECK_THAT(got.status().message(), Catch::Contains("outside the allowed directories"));
  }
  e.RequireMatches("*/passwd", {});    // out/passwd is through a link out of io_dirs
  e.RequireMatches("*/../../*", {});   // a ".." after a wildcard leads out: no match
  e.env.limits.max_tensor_bytes = 12;  // "a/x1.csv" and "a/x2.csv" take 16 bytes
  auto many = e.Match({"a/*"}, false);
  CHECK(many.status().code() == Code::kResourceExhausted);
  CHECK(e.Match({"*"}, true).status().code() == Code::kResourceExhausted);
  e.env.io_dirs.clear();
  CHECK(e.Match({"a/*"}, false).status().code() == Code::kInvalidArgument);
  CHECK(e.Match({""}, false).status().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd::testing
