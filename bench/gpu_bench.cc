// gpu_bench: the MNIST models trained in one process on the CPU and on
// GPU:0, with the very graph examples/mnist builds (mnist-graph --device
// gpu, no ps tasks: variables and updates on the device too), on generated
// MNIST-sized files. Prints one JSON line per (model, device): steps/s over
// the timed steps, the first and last loss, and the device's allocations
// (device and pinned host memory) during the timed steps (the caching
// allocator's: 0 once warm).
//
//   build/bench/gpu_bench --model classic --steps 2000
//   python3 bench/torch_gpu_mlp.py --model classic --steps 2000   # torch, same GPU
//
// With --json FILE it also writes the steps/s in bench/figures_json.h's
// schema (table: the model; series "tfd CPU", "tfd GPU"). Without a GPU it
// says why and measures the CPU only.
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_sinks.h>

#include "api/train_signature.h"
#include "bench/bench_flags.h"
#include "bench/data_dir.h"
#include "bench/figures_json.h"
#include "bench/mnist_files.h"
#include "daemon/runtime/local_session.h"
#include "examples/mnist/mnist_model.h"
#include "kernels/gpu/gpu_device.h"
#include "kernels/register_all.h"

namespace tfd::bench {
namespace {

namespace sig = train::signature;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string model = "classic";
  int steps = 1000;
  int warmup = 50;
  std::string json_path;  // --json: also write the steps/s there
};

StatusOr<double> Loss(LocalSession& session) {
  TFD_ASSIGN_OR_RETURN(auto out, session.Run({}, {sig::kLoss}, {sig::kTrain}));
  return static_cast<double>(out.fetches.at(0).scalar<float>());
}

Status Measure(const Options& o, const std::string& data, bool gpu, FiguresJson& json) {
  OpRegistry registry;
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
  examples::MnistOptions mo;
  TFD_ASSIGN_OR_RETURN(mo.model, examples::ParseMnistModel(o.model));
  mo.ps_tasks = 0;
  mo.gpu = gpu;
  mo.epochs = 1000;  // never the end of the input within a run
  Scope root = Scope::NewRootScope(registry);
  TFD_RETURN_IF_ERROR(examples::BuildMnist(root, mo));
  boost::asio::thread_pool pool(std::max(1u, std::thread::hardware_concurrency()));
  ResourceMgr resources;
  KernelEnv env;
  env.resources = &resources;
  env.io_dirs = {data};
  env.logger = std::make_shared<spdlog::logger>("gpu_bench",
                                                std::make_shared<spdlog::sinks::stderr_sink_mt>());
  env.logger->set_level(spdlog::level::warn);
  if (gpu) env.gpus = gpu::GpuMemories();
  LocalSession session(registry, env, pool, {.allow_soft_placement = true});
  TFD_RETURN_IF_ERROR(session.Create(root.ToGraphDef()));
  TFD_RETURN_IF_ERROR(session.Run({}, {}, {sig::kInit}).status());
  TFD_ASSIGN_OR_RETURN(double first, Loss(session));
  for (int i = 1; i < o.warmup; ++i) TFD_RETURN_IF_ERROR(Loss(session).status());
  const auto before = gpu ? gpu::GpuDevices()[0]->memory_stats() : gpu::GpuDevice::MemoryStats{};
  const auto start = Clock::now();
  double last = 0;
  for (int i = 0; i < o.steps; ++i) {
    TFD_ASSIGN_OR_RETURN(last, Loss(session));
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  nlohmann::json j = {{"system", "tfd"},
                      {"model", o.model},
                      {"device", gpu ? "gpu" : "cpu"},
                      {"steps", o.steps},
                      {"steps_per_second", o.steps / seconds},
                      {"first_loss", first},
                      {"last_loss", last}};
  if (gpu) {
    const auto stats = gpu::GpuDevices()[0]->memory_stats();
    j["gpu"] = gpu::GpuDevices()[0]->description();
    j["device_allocs_in_timed_steps"] = stats.device_allocs - before.device_allocs;
    j["pinned_allocs_in_timed_steps"] = stats.pinned_allocs - before.pinned_allocs;
    j["gpu_bytes_in_use"] = stats.in_use;
  }
  json.Add(o.model, "one process", gpu ? "tfd GPU" : "tfd CPU", "steps/s", o.steps / seconds);
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
  return OkStatus();
}

Status Main(int argc, char** argv) {
  Options o;
  BenchFlags flags("gpu_bench", "the MNIST models in one process on the CPU and on GPU:0 "
                                "(bench/torch_gpu_mlp.py: torch on the same GPU)");
  flags.Choice("model", {"classic", "large", "deep"}, "the model (examples/mnist)", &o.model)
      .Int("steps", 1, 10000000, "timed steps", &o.steps)
      .Int("warmup", 1, 1000000, "steps before them", &o.warmup)
      .Json(&o.json_path);
  flags.ParseOrExit(argc, argv);
  DataDir data("tfd-gpu-bench");
  if (data.path().empty()) return errors::Internal("cannot make a directory under /tmp");
  TFD_RETURN_IF_ERROR(WriteMnistSizedFiles(data.path()));
  FiguresJson json("gpu_bench", argc, argv);
  TFD_RETURN_IF_ERROR(Measure(o, data.path(), false, json));
  if (gpu::GpuDevices().empty()) {
    std::fprintf(stderr, "gpu_bench: no GPU (%s): the CPU only\n",
                 gpu::GpuUnavailableReason().c_str());
  } else {
    TFD_RETURN_IF_ERROR(Measure(o, data.path(), true, json));
  }
  return json.Write(o.json_path);
}

}  // namespace
}  // namespace tfd::bench

int main(int argc, char** argv) {
  tfd::Status s = tfd::bench::Main(argc, argv);
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
