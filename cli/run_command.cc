// `tfctl run FILE`: runs a graph in this process — a compute pool, the full op
// registry, a resource manager and a LocalSession, as one task
// (/job:localhost/replica:0/task:0) would — and prints the fetched tensors.
#include <unistd.h>

#include <boost/asio/thread_pool.hpp>
#include <boost/program_options.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <thread>

#include "cli/args.h"
#include "cli/chrome_trace.h"
#include "cli/commands.h"
#include "cli/feed_parser.h"
#include "cli/npy.h"
#include "cli/output.h"
#include "common/allowed_cpus.h"
#include "common/graph.h"
#include "common/graph_io.h"
#include "common/prune.h"
#include "common/thread_name.h"
#include "daemon/runtime/executor.h"
#include "daemon/runtime/local_session.h"
#include "daemon/runtime/pool_names.h"
#include "kernels/gpu/gpu_device.h"
#include "kernels/register_all.h"

namespace tfd::cli {
namespace {

namespace po = boost::program_options;

constexpr const char* kTask = "/job:localhost/replica:0/task:0";

struct RunOptions {
  std::string file;
  std::vector<std::string> feeds, fetches, targets, inits, io_dirs;
  int64_t steps = 1;
  double timeout_s = 0;  // 0: the session's default deadline
  bool trace = false;
  bool allow_soft_placement = false;
  std::string trace_file;
  OutputFormat format = OutputFormat::kHuman;
  std::string log_level = "info";
};

RunOptions ParseRunOptions(const Args& args) {
  RunOptions o;
  std::string format = "human";
  po::options_description desc("run options");
  desc.add_options()
      ("file", po::value(&o.file), "the graph file, binary or text; - reads stdin")
      ("feed", po::value(&o.feeds)->composing(), "NAME=VALUE or NAME=@file.npy")
      ("fetch", po::value(&o.fetches)->composing(), "NAME[:PORT] to print")
      ("target", po::value(&o.targets)->composing(), "node to run, output unused")
      ("init", po::value(&o.inits)->composing(), "node to run once before the steps")
      ("steps", po::value(&o.steps), "run the step N times")
      ("timeout", po::value(&o.timeout_s), "deadline of each step, seconds")
      ("trace", po::bool_switch(&o.trace), "print what ran where and when")
      ("trace-file", po::value(&o.trace_file), "write the last step's trace as Chrome trace JSON")
      ("output", po::value(&format), "human or json")
      ("io-dir", po::value(&o.io_dirs)->composing(), "directory file ops may use")
      ("allow-soft-placement", po::bool_switch(&o.allow_soft_placement),
       "run GPU requests that cannot be met on the CPU instead of failing")
      ("log-level", po::value(&o.log_level), "trace, debug, info, warn, error, off");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm = ParseArgs(args, desc, pos);
  if (o.file.empty()) throw UsageError("missing FILE");
  if (o.fetches.empty() && o.targets.empty()) {
    throw UsageError("nothing to run: give at least one --fetch or --target");
  }
  if (o.steps < 1) throw UsageError("--steps must be at least 1");
  if (vm.count("timeout") && !(o.timeout_s > 0 && o.timeout_s < 1e9)) {
    throw UsageError("--timeout must be a positive number of seconds");
  }
  if (spdlog::level::from_str(o.log_level) == spdlog::level::off && o.log_level != "off") {
    throw UsageError("unknown --log-level '" + o.log_level + "'");
  }
  o.format = ParseOutputFormat(format, false);
  if (o.io_dirs.empty()) o.io_dirs.push_back(".");
  return o;
}

// The dtype the fed node declares for the fed output, found by validating
// just that node and what it depends on; kInvalid when that cannot be done
// (the value's own literal then decides, and the session reports any clash).
DType DeclaredDType(const GraphDef& graph, const OpRegistry& registry, const std::string& name) {
  auto id = ParseTensorId(name);
  if (!id.ok()) return DType::kInvalid;
  auto pruned = PruneGraph(graph, {id->node});
  if (!pruned.ok()) return DType::kInvalid;
  auto g = Graph::Build(std::move(pruned).value(), registry);
  if (!g.ok()) return DType::kInvalid;
  const Graph::Node& n = g->node(g->FindNode(id->node));
  if (id->port < 0 || id->port >= static_cast<int>(n.output_types.size())) return DType::kInvalid;
  return n.output_types[id->port];
}

StatusOr<LocalSession::Feeds> BuildFeeds(const RunOptions& o, const GraphDef& graph,
                                         const OpRegistry& registry) {
  LocalSession::Feeds feeds;
  for (const std::string& arg : o.feeds) {
    auto split = SplitFeed(arg);
    if (!split.ok()) throw UsageError(split.status().message());
    const FeedArg& f = *split;
    StatusOr<Tensor> t = f.from_file
                             ? ReadNpy(f.value)
                             : ParseFeedValue(f.value, DeclaredDType(graph, registry, f.name));
    if (!t.ok()) return t.status().WithContext("feed '" + f.name + "'");
    feeds.emplace_back(f.name, std::move(t).value());
  }
  return feeds;
}

std::shared_ptr<spdlog::logger> MakeLogger(const std::string& level) {
  auto logger = std::make_shared<spdlog::logger>(
      "tfctl", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_pattern(std::string("%Y-%m-%d %H:%M:%S.%e %^%l%$ ") + kTask + "] %v");
  logger->set_level(spdlog::level::from_str(level));
  return logger;
}

// A one-line progress report on a terminal: step, steps/s, time left.
class Progress {
 public:
  explicit Progress(int64_t steps) : steps_(steps), enabled_(steps > 1 && isatty(STDERR_FILENO)) {}
  void Step(int64_t done) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(500) && done != steps_) return;
    last_ = now;
    const double secs = std::chrono::duration<double>(now - start_).count();
    const double rate = secs > 0 ? done / secs : 0;
    const double left = rate > 0 ? (steps_ - done) / rate : 0;
    std::fprintf(stderr, "\rstep %lld/%lld  %.1f steps/s  %.0fs left   ", static_cast<long long>(done),
                 static_cast<long long>(steps_), rate, left);
    if (done == steps_) std::fputc('\n', stderr);
  }

 private:
  int64_t steps_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_;
};

void PrintResult(const RunOptions& o, const LocalSession::RunOutput& out) {
  if (o.format == OutputFormat::kJson) {
    Json fetches = Json::object();
    for (size_t i = 0; i < o.fetches.size(); ++i) fetches[o.fetches[i]] = TensorToJson(out.fetches[i]);
    Json result{{"fetches", std::move(fetches)}};
    if (o.trace) result["trace"] = TraceToJson(out.stats);
    std::cout << DumpJson(result) << std::endl;
    return;
  }
  for (size_t i = 0; i < o.fetches.size(); ++i) {
    std::cout << FormatFetch(o.fetches[i], out.fetches[i]) << "\n";
  }
  if (o.fetches.empty()) {
    std::cout << "ok: ran " << o.steps << (o.steps == 1 ? " step" : " steps") << "\n";
  }
  if (o.trace) std::cout << FormatTrace(out.stats);
  std::cout.flush();
}

Status Run(const RunOptions& o) {
  TFD_ASSIGN_OR_RETURN(GraphDef graph, ReadGraphArg(o.file));
  OpRegistry registry;
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
  TFD_ASSIGN_OR_RETURN(LocalSession::Feeds feeds, BuildFeeds(o, graph, registry));

  // The pool outlives the session (declared first, destroyed last), so no
  // pool thread runs a kernel of a destroyed session.
  const int threads = NumAllowedCpus();
  boost::asio::thread_pool pool(threads);
  NamePoolThreads(pool, threads, "compute");
  // Cheap kernels run inline on the thread that waits for the step (every
  // kernel does when this process may use one CPU only).
  NameThisThread("tfctl");
  ResourceMgr resources;
  KernelEnv env;
  env.resources = &resources;
  env.logger = MakeLogger(o.log_level);
  env.task = kTask;
  for (const std::string& d : o.io_dirs) env.io_dirs.emplace_back(d);
  env.gpus = gpu::GpuMemories();
  LocalSession session(registry, env, pool,
                       {.allow_soft_placement = o.allow_soft_placement,
                        .inline_kernels = InlineKernelsFor(0)});
  TFD_RETURN_IF_ERROR(session.Create(std::move(graph)));

  LocalSession::RunOptions run_options;
  if (o.timeout_s > 0) {
    run_options.deadline = std::chrono::milliseconds(
        std::max<int64_t>(1, static_cast<int64_t>(std::llround(o.timeout_s * 1000))));
  }
  if (!o.inits.empty()) {
    auto init = session.Run(feeds, {}, o.inits, run_options);
    if (!init.ok()) return init.status().WithContext("--init");
  }
  Progress progress(o.steps);
  LocalSession::RunOutput out;
  for (int64_t step = 1; step <= o.steps; ++step) {
    run_options.trace = (o.trace || !o.trace_file.empty()) && step == o.steps;
    auto result = session.Run(feeds, o.fetches, o.targets, run_options);
    if (!result.ok()) {
      if (o.steps == 1) return result.status();
      return result.status().WithContext("step " + std::to_string(step) + " of " +
                                         std::to_string(o.steps));
    }
    progress.Step(step);
    if (step == o.steps) out = std::move(result).value();
  }
  if (!o.trace_file.empty()) TFD_RETURN_IF_ERROR(WriteChromeTrace(out.stats, o.trace_file));
  PrintResult(o, out);
  return OkStatus();
}

}  // namespace

int RunCommand(const Args& args) {
  const RunOptions o = ParseRunOptions(args);
  Status s = Run(o);
  return s.ok() ? 0 : ReportError(s, o.format);
}

}  // namespace tfd::cli
