// tfctl submit: a session on a running task's master, N steps of a graph.
// The between-graph training loop of the classic walkthroughs: the same
// file submitted to every worker, progress on stderr when it is a terminal.
#include <kj/async-io.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli/args.h"
#include "cli/chrome_trace.h"
#include "cli/commands.h"
#include "cli/feed_parser.h"
#include "cli/npy.h"
#include "cli/output.h"
#include "cli/connection_flags.h"

namespace tfd::cli {
namespace {
namespace po = boost::program_options;

struct SubmitOptions {
  std::string file;
  ConnectionFlags remote;
  std::vector<std::string> runs, fetches, feeds, inits;
  int64_t steps = 1;
  double step_timeout_s = 0;
  bool trace = false;
  std::string trace_file;
  std::string output = "human";
};

SubmitOptions Parse(const Args& args) {
  SubmitOptions o;
  po::options_description options("submit");
  options.add_options()
      ("file", po::value(&o.file)->required(), "the graph file, binary or text; - reads stdin")
      ("run", po::value(&o.runs)->composing(), "target op to run each step")
      ("fetch", po::value(&o.fetches)->composing(), "tensor to fetch (last step printed)")
      ("feed", po::value(&o.feeds)->composing(), "NAME=VALUE or NAME=@file.npy")
      ("init", po::value(&o.inits)->composing(), "op to run once before the steps")
      ("steps", po::value(&o.steps), "number of steps (default 1)")
      ("step-timeout", po::value(&o.step_timeout_s), "seconds one step may take")
      ("trace", po::bool_switch(&o.trace), "print where each node of the last step ran")
      ("trace-file", po::value(&o.trace_file), "write the last step's trace as Chrome trace JSON")
      ("output", po::value(&o.output), "human|json");
  AddConnectionFlags(options, o.remote);
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm = ParseArgs(args, options, positional);
  if (o.steps < 0) throw UsageError("--steps must not be negative");
  if (o.runs.empty() && o.fetches.empty()) throw UsageError("give at least one --run or --fetch");
  return o;
}

// The dtype the fed node declares in its "dtype" attr (placeholders), else unknown.
DType DeclaredDType(const GraphDef& g, const std::string& name) {
  const std::string node = name.substr(0, name.find(':'));
  for (const NodeDef& n : g.nodes) {
    if (n.name != node) continue;
    auto it = n.attrs.find("dtype");
    if (it != n.attrs.end()) {
      if (const DType* d = std::get_if<DType>(&it->second)) return *d;
    }
  }
  return DType::kInvalid;
}

StatusOr<Client::Feeds> BuildFeeds(const SubmitOptions& o, const GraphDef& g) {
  Client::Feeds feeds;
  for (const std::string& arg : o.feeds) {
    TFD_ASSIGN_OR_RETURN(FeedArg f, SplitFeed(arg));
    auto t = f.from_file ? ReadNpy(f.value) : ParseFeedValue(f.value, DeclaredDType(g, f.name));
    if (!t.ok()) return t.status().WithContext("--feed " + f.name);
    feeds.emplace_back(f.name, std::move(t).value());
  }
  return feeds;
}

void Progress(int64_t step, int64_t steps, double seconds, const std::string& value) {
  const double rate = seconds > 0 ? step / seconds : 0;
  const double left = rate > 0 ? (steps - step) / rate : 0;
  std::fprintf(stderr, "\rstep %lld/%lld  %.1f steps/s  %.0f s left%s%s   ",
               static_cast<long long>(step), static_cast<long long>(steps), rate, left,
               value.empty() ? "" : "  ", value.c_str());
  std::fflush(stderr);
}

Status Submit(const SubmitOptions& o, OutputFormat format) {
  TFD_ASSIGN_OR_RETURN(GraphDef graph, ReadGraphArg(o.file));
  TFD_ASSIGN_OR_RETURN(Client::Feeds feeds, BuildFeeds(o, graph));
  auto io = kj::setupAsyncIo();
  TFD_ASSIGN_OR_RETURN(auto client, ConnectToTarget(io, o.remote));
  const auto step_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(o.step_timeout_s * 1000));
  TFD_RETURN_IF_ERROR(client->CreateSession(graph, step_timeout));
  for (const std::string& init : o.inits) {
    auto r = client->Run({}, {}, {init}, {});
    if (!r.ok()) return r.status().WithContext("--init " + init);
  }
  const bool show_progress = isatty(STDERR_FILENO) && format == OutputFormat::kHuman && o.steps > 1;
  const auto start = std::chrono::steady_clock::now();
  Client::RunOutput last;
  for (int64_t step = 1; step <= o.steps; ++step) {
    Client::RunOptions options;
    options.trace = (o.trace || !o.trace_file.empty()) && step == o.steps;
    auto out = client->Run(feeds, o.fetches, o.runs, options);
    if (!out.ok()) return out.status().WithContext("step " + std::to_string(step));
    last = std::move(out).value();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (show_progress) {
      std::string value;
      if (!last.fetches.empty() && last.fetches[0].num_elements() == 1) {
        value = o.fetches[0] + "=" + FormatValues(last.fetches[0], 1);
      }
      Progress(step, o.steps, seconds, value);
    }
  }
  if (show_progress) std::fputc('\n', stderr);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  (void)client->CloseSession();
  if (!o.trace_file.empty()) TFD_RETURN_IF_ERROR(WriteChromeTrace(last.stats, o.trace_file));
  if (format == OutputFormat::kJson) {
    Json fetches = Json::object();
    for (size_t i = 0; i < o.fetches.size() && i < last.fetches.size(); ++i) {
      fetches[o.fetches[i]] = TensorToJson(last.fetches[i]);
    }
    Json j{{"fetches", fetches}, {"steps", o.steps}, {"seconds", seconds},
           {"task", client->task()}};
    if (o.trace) j["trace"] = TraceToJson(last.stats);
    std::cout << DumpJson(j) << std::endl;
  } else {
    for (size_t i = 0; i < o.fetches.size() && i < last.fetches.size(); ++i) {
      std::cout << FormatFetch(o.fetches[i], last.fetches[i]) << "\n";
    }
    if (o.trace) std::cout << FormatTrace(last.stats);
  }
  return OkStatus();
}

}  // namespace

int SubmitCommand(const Args& args) {
  const SubmitOptions o = Parse(args);
  const OutputFormat format = ParseOutputFormat(o.output, false);
  Status s = Submit(o, format);
  return s.ok() ? 0 : ReportError(s, format);
}

}  // namespace tfd::cli
