// BenchFlags: what a bench's command line sets, what it refuses (naming the
// flag and the value), and that its usage lists every flag with the default
// its variable held.
#include "bench/bench_flags.h"

#include <catch2/catch.hpp>
#include <cstdlib>

namespace tfd::bench {
namespace {

struct Options {
  std::string tfd = "/usr/bin/tfd";
  std::string model = "classic";
  int steps = 200;
  int64_t bytes = 1 << 20;
  std::vector<int> tasks{4, 8};
  double seconds = 2.5;
  bool traced = false;
  std::string custom;
  std::string target;
  bool prefetch = true;
};

struct Fixture {
  Options o;
  BenchFlags flags{"demo_bench", "a bench for the test"};
  Fixture() {
    flags.Text("tfd", "PATH", "the tfd binary", &o.tfd)
        .Choice("model", {"classic", "deep"}, "the model", &o.model)
        .Int("steps", 1, 1000, "steps", &o.steps)
        .Int("bytes", 0, int64_t{1} << 40, "bytes", &o.bytes)
        .IntList("tasks", 2, 64, "cluster sizes", &o.tasks)
        .Number("seconds", 0.5, 60, "how long", &o.seconds)
        .ShownDefault("2.5 s")
        .Switch("traced", "trace the steps", &o.traced)
        .Bit("prefetch", "the input made ahead", &o.prefetch)
        .Text("target", "HOST:PORT", "the task", &o.target)
        .Required()
        .Custom("cpus", "A-B", "the CPUs", [this](const std::string& v) {
          if (v.find('-') == std::string::npos) return errors::InvalidArgument("--cpus: not A-B");
          o.custom = v;
          return OkStatus();
        });
  }
  Status Parse(std::vector<std::string> args) {
    args.insert(args.begin(), {"demo_bench", "--target", "h:1"});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return flags.Parse(static_cast<int>(argv.size()), argv.data());
  }
};

TEST_CASE("no flags leave every default") {
  Fixture f;
  REQUIRE(f.Parse({}).ok());
  CHECK(f.o.tfd == "/usr/bin/tfd");
  CHECK(f.o.steps == 200);
  CHECK(f.o.tasks == std::vector<int>{4, 8});
  CHECK_FALSE(f.o.traced);
}

TEST_CASE("each kind of flag, as `--name value` and `--name=value`") {
  Fixture f;
  REQUIRE(f.Parse({"--tfd", "/x/tfd", "--model=deep", "--steps", "7", "--bytes=1099511627776",
                   "--tasks", "2,16,64", "--seconds", "0.5", "--traced", "--cpus=0-3", "--prefetch", "0"})
              .ok());
  CHECK(f.o.tfd == "/x/tfd");
  CHECK(f.o.model == "deep");
  CHECK(f.o.steps == 7);
  CHECK(f.o.bytes == int64_t{1} << 40);
  CHECK(f.o.tasks == std::vector<int>{2, 16, 64});
  CHECK(f.o.seconds == 0.5);
  CHECK(f.o.traced);
  CHECK(f.o.custom == "0-3");
  CHECK_FALSE(f.o.prefetch);
}

TEST_CASE("a bad value is INVALID_ARGUMENT naming the flag and the value") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--steps", "0"}, "--steps takes whole numbers from 1 to 1000, not '0'"},
      {{"--steps", "12x"}, "not '12x'"},
      {{"--steps", "99999999999999999999"}, "not '99999999999999999999'"},
      {{"--tasks", "4,,8"}, "--tasks takes whole numbers from 2 to 64, not ''"},
      {{"--tasks", "4,"}, "--tasks takes a comma-separated list"},
      {{"--tasks", "4,65"}, "not '65'"},
      {{"--seconds", "nan"}, "--seconds takes a number from 0.5 to 60, not 'nan'"},
      {{"--model", "wide"}, "--model is one of classic|deep, not 'wide'"},
      {{"--traced=1"}, "--traced takes no value"},
      {{"--prefetch", "yes"}, "--prefetch is 0 or 1, not 'yes'"},
      {{"--steps"}, "--steps needs a value"},
      {{"--no-such"}, "unknown flag --no-such"},
      {{"stray"}, "unexpected argument 'stray'"},
      {{"--cpus", "3"}, "--cpus: not A-B"},
  };
  for (const auto& [args, said] : cases) {
    Fixture f;
    const Status s = f.Parse(args);
    INFO(args.back() << " -> " << s.ToString());
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find(said) != std::string::npos);
  }
}

TEST_CASE("a required flag not given is INVALID_ARGUMENT naming it") {
  Fixture f;
  std::vector<char*> argv{const_cast<char*>("demo_bench"), const_cast<char*>("--steps"),
                          const_cast<char*>("3")};
  const Status s = f.flags.Parse(static_cast<int>(argv.size()), argv.data());
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message() == "--target is required");
  CHECK(f.flags.Usage().find("the task (required)") != std::string::npos);
}

TEST_CASE("--tfd: $TFD, else the built one, and NOT_FOUND when it is not an executable") {
  std::string tfd;
  char* argv[] = {const_cast<char*>("demo_bench")};
  ::setenv("TFD", "/bin/true", 1);
  BenchFlags from_env("demo_bench", "");
  from_env.TfdBinary("/no/such/tfd", &tfd);
  CHECK(from_env.Parse(1, argv).ok());
  CHECK(tfd == "/bin/true");
  ::unsetenv("TFD");
  BenchFlags built("demo_bench", "");
  built.TfdBinary("/no/such/tfd", &tfd);
  const Status s = built.Parse(1, argv);
  CHECK(s.code() == Code::kNotFound);
  CHECK(s.message().find("'/no/such/tfd'") != std::string::npos);
}

TEST_CASE("--help and -h are CANCELLED; the usage lists every flag with its default") {
  Fixture f;
  CHECK(f.Parse({"--steps", "3", "--help"}).code() == Code::kCancelled);
  CHECK(f.Parse({"-h"}).code() == Code::kCancelled);
  const std::string usage = f.flags.Usage();
  CHECK(usage.find("usage: demo_bench [FLAGS]\na bench for the test\n") == 0);
  for (const char* line : {"--tfd PATH", "the tfd binary (default /usr/bin/tfd)",
                           "--model classic|deep", "--steps N", "(default 200)",
                           "--tasks LIST", "(default 4,8)", "how long (default 2.5 s)",
                           "--traced", "--cpus A-B", "--prefetch 0|1", "(default 1)"}) {
    INFO(line);
    CHECK(usage.find(line) != std::string::npos);
  }
}

}  // namespace
}  // namespace tfd::bench
