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
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_flags.h"
#include "common/graph_io.h"
#include "common/tensor.h"
#include "daemon/client/client.h"

namespace tfd::bench {
namespace {

struct Flags {
  std::string target, graph, feed = "big", fetch = "big_out";
  int64_t mib = 64, rounds = 5;
};

// The command line into `f`; exits on --help or a bad flag.
void ParseFlags(int argc, char** argv, Flags& f) {
  BenchFlags flags("feed_fetch_bench", "a C++ client's feed and fetch of one float32 tensor "
                                       "(bench/python_step_bench.py runs it)");
  flags.Text("target", "HOST:PORT", "the task", &f.target)
      .Required()
      .Text("graph", "FILE", "a graph with the placeholder --feed and the tensor --fetch", &f.graph)
      .Required()
      .Text("feed", "NAME", "the float32 [n] placeholder", &f.feed)
      .Text("fetch", "NAME", "the tensor that returns it", &f.fetch)
      .Int("mib", 1, 1 << 20, "the tensor's MiB", &f.mib)
      .Int("rounds", 1, 1000000, "timed steps", &f.rounds);
  flags.ParseOrExit(argc, argv);
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
  for (int64_t r = 0; r < f.rounds; ++r) {
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
  bench::Flags flags;
  bench::ParseFlags(argc, argv, flags);
  auto seconds = bench::Measure(flags);
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
