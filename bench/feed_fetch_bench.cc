// feed_fetch_bench: a C++ client feeding a float32 tensor to a task and
// fetching it back through an Identity, step by step: what the Python
// package's sess.run of the same step (bench/python_step_bench.py, which
// runs this beside it) is measured against.
//
//   feed_fetch_bench --target HOST:PORT --graph FILE [--feed big] [--fetch big_out]
//                    [--mib 64] [--rounds 5]
//
// FILE holds a Placeholder `--feed` of float32 [n] and the tensor `--fetch`
// that returns it; n comes from --mib. After one untimed step, whose fetch is
// checked to equal the feed, it prints one JSON line: {"seconds": [one per
// round]}, each the wall time of Client::Run, feed serialized and fetch
// received (aliasing its message, as a C++ client keeps it). Exit status 1
// when a step fails or the fetch differs, 2 for bad flags.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/graph_io.h"
#include "common/tensor.h"
#include "daemon/client/client.h"

namespace tfd::bench {
namespace {

struct Flags {
  std::string target, graph, feed = "big", fetch = "big_out";
  long mib = 64, rounds = 5;
};

constexpr const char* kUsage =
    "usage: feed_fetch_bench --target HOST:PORT --graph FILE [--feed NAME] [--fetch NAME] "
    "[--mib N] [--rounds N]\n";

StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return errors::InvalidArgument(flag, " needs a value");
    const std::string value = argv[++i];
    if (flag == "--target") {
      f.target = value;
    } else if (flag == "--graph") {
      f.graph = value;
    } else if (flag == "--feed") {
      f.feed = value;
    } else if (flag == "--fetch") {
      f.fetch = value;
    } else if (flag == "--mib" || flag == "--rounds") {
      char* end = nullptr;
      const long v = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || v <= 0) {
        return errors::InvalidArgument(flag, " takes a positive integer, got '", value, "'");
      }
      (flag == "--mib" ? f.mib : f.rounds) = v;
    } else {
      return errors::InvalidArgument("unknown flag '", flag, "'");
    }
  }
  if (f.target.empty() || f.graph.empty()) {
    return errors::InvalidArgument("--target and --graph are required");
  }
  return f;
}

StatusOr<std::vector<double>> Measure(const Flags& f) {
  SizeLimits limits;
  TFD_ASSIGN_OR_RETURN(GraphDef graph, LoadGraph(f.graph, limits));
  auto io = kj::setupAsyncIo();
  TFD_ASSIGN_OR_RETURN(auto client, Client::Connect(io, f.target, "", std::chrono::seconds(30)));
  TFD_RETURN_IF_ERROR(client->CreateSession(graph));
  const int64_t n = f.mib * (int64_t{1} << 20) / 4;
  TFD_ASSIGN_OR_RETURN(Tensor big, Tensor::Allocate(DType::kFloat32, TensorShape({n})));
  float* data = big.data<float>();
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(i % 1000) * 0.5f;
  const Client::Feeds feeds{{f.feed, big}};
  const Client::RunOptions options{.timeout = std::chrono::seconds(120)};
  TFD_ASSIGN_OR_RETURN(auto first, client->Run(feeds, {f.fetch}, {}, options));
  const Tensor& back = first.fetches.at(0);
  if (back.total_bytes() != big.total_bytes() ||
      std::memcmp(back.raw_data(), big.raw_data(), big.total_bytes()) != 0) {
    return errors::Internal("the fetch '", f.fetch, "' is not the tensor fed to '", f.feed, "'");
  }
  std::vector<double> seconds;
  for (long r = 0; r < f.rounds; ++r) {
    const auto began = std::chrono::steady_clock::now();
    TFD_ASSIGN_OR_RETURN(auto out, client->Run(feeds, {f.fetch}, {}, options));
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
  }
  TFD_RETURN_IF_ERROR(client->CloseSession());
  return seconds;
}

}  // namespace
}  // namespace tfd::bench

int main(int argc, char** argv) {
  using namespace tfd;
  auto flags = bench::ParseFlags(argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "error: %s\n%s", flags.status().ToString().c_str(), bench::kUsage);
    return 2;
  }
  auto seconds = bench::Measure(*flags);
  if (!seconds.ok()) {
    std::fprintf(stderr, "error: %s\n", seconds.status().ToString().c_str());
    return 1;
  }
  std::string line = "{\"seconds\": [";
  for (size_t i = 0; i < seconds->size(); ++i) {
    line += (i ? ", " : "") + std::to_string((*seconds)[i]);
  }
  std::printf("%s]}\n", line.c_str());
  return 0;
}
