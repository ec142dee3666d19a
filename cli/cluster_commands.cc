// tfctl wait, status and vars: questions asked of running tasks.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <kj/async-io.h>

#include "cli/args.h"
#include "cli/cluster_probe.h"
#include "cli/commands.h"
#include "cli/connection_flags.h"
#include "cli/output.h"
#include "cli/vars_listing.h"
#include "common/cluster_spec.h"

namespace tfd::cli {
namespace {
namespace po = boost::program_options;

// A task that could not be asked: "down" when it could not be reached in
// time, "refused" when it turned the login down, "error" for anything else.
const char* StateName(const Status& s) {
  switch (s.code()) {
    case Code::kUnavailable:
    case Code::kDeadlineExceeded:
      return "down";
    case Code::kUnauthenticated:
      return "refused";
    default:
      return "error";
  }
}

std::string Describe(const VariableDescription& v) {
  return std::string(DTypeName(v.dtype)) + v.shape.ToString();
}

// The spec --cluster gives, for a command that asks its tasks. A value
// that is no spec (malformed, or a file over the limit) or that has no task
// is a UsageError, thrown before anything is dialled; a file that cannot be
// read is the status, for exit 1 as for any file.
StatusOr<ClusterSpec> SpecOfTasks(const std::string& cluster_flag) {
  auto spec = ClusterSpec::FromFlag(cluster_flag);
  if (!spec.ok() && spec.status().code() == Code::kInvalidArgument) {
    throw UsageError("--cluster: " + spec.status().message());
  }
  if (spec.ok() && spec->NumTasks() == 0) {
    throw UsageError("--cluster: the cluster spec has no tasks to ask");
  }
  return spec;
}

// Reports a failed wait; its exit status is 3 at the deadline, else 1. A
// deadline is an expected outcome for scripts: its own exit status. Client::
// Connect retries until the deadline and only then gives up, UNAVAILABLE, so
// that is the deadline too while `connecting` (not a refused token or TLS).
int WaitFailed(const Status& s, OutputFormat format, bool connecting) {
  ReportError(s, format);
  const bool deadline =
      s.code() == Code::kDeadlineExceeded || (connecting && s.code() == Code::kUnavailable);
  return deadline ? 3 : 1;
}

}  // namespace

int WaitCommand(const Args& args) {
  std::string what;
  ConnectionFlags remote;
  std::vector<std::string> vars;
  std::string output = "human";
  po::options_description options("wait");
  options.add_options()
      ("action", po::value(&what)->required(), "cluster (every task reachable) or init (variables initialized)")
      ("var", po::value(&vars)->composing(), "with init: a variable to wait for (default: all)")
      ("output", po::value(&output), "human|json");
  AddConnectionFlags(options, remote);
  po::positional_options_description positional;
  positional.add("action", 1);
  ParseArgs(args, options, positional);
  if (what != "cluster" && what != "init") throw UsageError("wait what? 'cluster' or 'init'");
  const OutputFormat format = ParseOutputFormat(output, false);
  auto io = kj::setupAsyncIo();
  auto client = ConnectToTarget(io, remote);
  if (!client.ok()) return WaitFailed(client.status(), format, /*connecting=*/true);
  const Status s = what == "cluster" ? (*client)->WaitCluster(remote.timeout()).status()
                                     : (*client)->WaitInitialized(vars, remote.timeout());
  if (!s.ok()) return WaitFailed(s, format, /*connecting=*/false);
  if (format == OutputFormat::kJson) {
    std::cout << DumpJson(Json{{"ready", what}}) << std::endl;
  } else {
    std::cout << (what == "cluster" ? "cluster ready" : "variables initialized") << std::endl;
  }
  return 0;
}

namespace {

// A task's row of `tfctl status --output json`.
Json StatusJson(const TaskAnswer<TaskStatusInfo>& a) {
  const auto& st = a.answer;
  Json t{{"task", a.task},
         {"address", a.address},
         {"up", st.ok()},
         {"state", st.ok() ? "up" : StateName(st.status())}};
  if (!st.ok()) {
    t["error"] = st.status().ToString();
    return t;
  }
  t["uptime_seconds"] = st->uptime_seconds;
  t["sessions"] = st->sessions;
  t["registered_graphs"] = st->registered_graphs;
  t["variables"] = st->variables;
  t["pid"] = st->pid;
  // Hex text: JSON readers lose a 64-bit integer's low bits.
  t["incarnation"] = fmt::format("{:016x}", st->incarnation);
  t["restored_alone"] = st->restored_alone;
  t["devices"] = st->devices;
  const DataPlaneInfo& d = st->data_plane;
  t["data_plane"] =
      Json{{"transports", d.transports},         {"pushes_sent", d.pushes_sent},
           {"bytes_sent", d.bytes_sent},         {"pushes_received", d.pushes_received},
           {"bytes_received", d.bytes_received}, {"pushes_refused", d.pushes_refused},
           {"held_back", d.held_back},           {"pushes_abandoned", d.pushes_abandoned},
           {"bytes_held", d.bytes_held},         {"steps_held", d.steps_held},
           {"steps_served", d.steps_served}};
  return t;
}

// The status table on stdout; why each task is down on stderr, after it.
void PrintStatusTable(const std::vector<TaskAnswer<TaskStatusInfo>>& answers) {
  std::printf("%-32s %-22s %-7s %9s %8s %6s %5s\n", "TASK", "ADDRESS", "STATE", "UPTIME",
              "SESSIONS", "GRAPHS", "VARS");
  for (const auto& a : answers) {
    const auto& st = a.answer;
    if (!st.ok()) {
      std::printf("%-32s %-22s %-7s %9s %8s %6s %5s\n", a.task.c_str(), a.address.c_str(),
                  StateName(st.status()), "-", "-", "-", "-");
      continue;
    }
    std::printf("%-32s %-22s %-7s %8.0fs %8u %6u %5u\n", a.task.c_str(), a.address.c_str(), "up",
                st->uptime_seconds, st->sessions, st->registered_graphs, st->variables);
    // The GPUs under their task (the CPU is every task's).
    for (size_t d = 1; d < st->devices.size(); ++d) std::printf("  %s\n", st->devices[d].c_str());
  }
  std::fflush(stdout);
  for (const auto& a : answers) {
    // What the task said (a refused token, say) is reported, not just "down".
    if (!a.answer.ok()) {
      std::fprintf(stderr, "%s: %s\n", a.task.c_str(), a.answer.status().ToString().c_str());
    }
  }
}

}  // namespace

// Every task is asked at once (cli/cluster_probe.h): tasks down or hung
// cost about one --timeout in all.
int StatusCommand(const Args& args) {
  std::string cluster_flag, output = "human";
  double timeout_s = 2;
  std::string token_file;
  po::options_description options("status");
  options.add_options()
      ("cluster", po::value(&cluster_flag)->required(), "cluster spec: JSON or a file")
      ("timeout", po::value(&timeout_s), "seconds to wait for each task, all asked at once (default 2)")
      ("token-file", po::value(&token_file), "file holding the cluster's auth token")
      ("output", po::value(&output), "human|json");
  TlsFiles tls_files;
  AddTlsFlags(options, tls_files);
  ParseArgs(args, options, {});
  const OutputFormat format = ParseOutputFormat(output, false);
  if (!(timeout_s > 0 && timeout_s < 1e9)) {
    throw UsageError("--timeout must be a positive number of seconds");
  }
  auto spec = SpecOfTasks(cluster_flag);
  if (!spec.ok()) return ReportError(spec.status(), format);
  auto token = ReadToken(token_file);
  if (!token.ok()) return ReportError(token.status(), format);
  // Loaded here for its error; each probing thread loads its own.
  if (auto tls = LoadTls(tls_files); !tls.ok()) return ReportError(tls.status(), format);
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  const auto answers = AskEveryTask<TaskStatusInfo>(
      *spec, {*token, tls_files, timeout}, [timeout](Client& c) { return c.GetStatus(timeout); });
  if (format == OutputFormat::kJson) {
    Json tasks = Json::array();
    for (const auto& a : answers) tasks.push_back(StatusJson(a));
    std::cout << DumpJson(Json{{"tasks", tasks}}) << std::endl;
  } else {
    PrintStatusTable(answers);
  }
  const bool all_up =
      std::all_of(answers.begin(), answers.end(), [](const auto& a) { return a.answer.ok(); });
  return all_up ? 0 : 1;
}

namespace {

// What the tasks of a listing hold, and those that did not answer.
struct VarsListing {
  std::vector<VariableDescription> vars;
  struct Unreachable {
    std::string task, address;
    Status why;
  };
  std::vector<Unreachable> unreachable;
};

// Every variable of the task `remote` names or, with a cluster spec
// (non-null `spec`), of every task of it that answers: a task down or
// refusing is reported in `unreachable`, and the others are still listed
// (as tfctl status reports each task). The tasks are asked at once.
StatusOr<VarsListing> ListVariables(kj::AsyncIoContext& io, const ConnectionFlags& remote,
                                    const ClusterSpec* spec) {
  VarsListing listing;
  if (spec == nullptr) {
    TFD_ASSIGN_OR_RETURN(auto client, ConnectToTarget(io, remote));
    TFD_ASSIGN_OR_RETURN(listing.vars, client->ListVariables(remote.timeout()));
    return listing;
  }
  TFD_ASSIGN_OR_RETURN(auto token, ReadToken(remote.token_file));
  TFD_RETURN_IF_ERROR(LoadTls(remote.tls).status());  // for its error; each thread loads its own
  const auto timeout = remote.timeout();
  const auto answers = AskEveryTask<std::vector<VariableDescription>>(
      *spec, {token, remote.tls, timeout},
      [timeout](Client& c) { return c.ListVariables(timeout); });
  for (const auto& a : answers) {
    if (a.answer.ok()) {
      listing.vars.insert(listing.vars.end(), a.answer->begin(), a.answer->end());
    } else {
      listing.unreachable.push_back({a.task, a.address, a.answer.status()});
    }
  }
  return listing;
}

// tfctl vars list: a partitioned variable's shards on one line; exit 1
// when a task of the cluster did not answer, each named on stderr (or in
// the JSON's "unreachable").
int ListVarsCommand(kj::AsyncIoContext& io, const ConnectionFlags& remote, const ClusterSpec* spec,
                    OutputFormat format) {
  auto listing = ListVariables(io, remote, spec);
  if (!listing.ok()) return ReportError(listing.status(), format);
  const std::vector<VarsRow> rows = GroupVariables(listing->vars);
  if (format == OutputFormat::kJson) {
    Json list = Json::array(), unreachable = Json::array();
    for (const VarsRow& r : rows) list.push_back(VarsRowJson(r));
    for (const auto& u : listing->unreachable) {
      unreachable.push_back(Json{{"task", u.task},
                                 {"address", u.address},
                                 {"state", StateName(u.why)},
                                 {"error", u.why.ToString()}});
    }
    std::cout << DumpJson(Json{{"variables", list}, {"unreachable", unreachable}}) << std::endl;
  } else {
    for (const VarsRow& r : rows) std::cout << VarsRowText(r) << "\n";
    std::cout.flush();
    for (const auto& u : listing->unreachable) {
      std::cerr << u.task << " (" << u.address << "): " << u.why.ToString() << "\n";
    }
  }
  return listing->unreachable.empty() ? 0 : 1;
}

}  // namespace

int VarsCommand(const Args& args) {
  std::string what, name, cluster_flag, output = "human";
  ConnectionFlags remote;
  po::options_description options("vars");
  options.add_options()
      ("action", po::value(&what)->required(), "list (every variable) or get (one)")
      ("name", po::value(&name), "with get: the variable to read")
      ("cluster", po::value(&cluster_flag),
       "with list: every task of this cluster spec (JSON or a file), not just --target")
      ("output", po::value(&output), "human|json");
  AddConnectionFlags(options, remote);
  po::positional_options_description positional;
  positional.add("action", 1).add("name", 1);
  ParseArgs(args, options, positional);
  if (what != "list" && what != "get") throw UsageError("vars what? 'list' or 'get NAME'");
  if (what == "get" && name.empty()) throw UsageError("vars get needs a variable name");
  if (what == "get" && !cluster_flag.empty()) throw UsageError("vars get takes --target, not --cluster");
  const OutputFormat format = ParseOutputFormat(output, false);
  std::optional<ClusterSpec> spec;
  if (!cluster_flag.empty()) {
    auto parsed = SpecOfTasks(cluster_flag);
    if (!parsed.ok()) return ReportError(parsed.status(), format);
    spec = std::move(parsed).value();
  }
  auto io = kj::setupAsyncIo();
  if (what == "list") return ListVarsCommand(io, remote, spec ? &*spec : nullptr, format);
  auto client = ConnectToTarget(io, remote);
  if (!client.ok()) return ReportError(client.status(), format);
  auto var = (*client)->ReadVariable(name, remote.timeout());
  if (!var.ok()) return ReportError(var.status(), format);
  const auto& [v, value] = *var;
  if (format == OutputFormat::kJson) {
    Json j{{"name", v.name}, {"dtype", DTypeName(v.dtype)}, {"shape", v.shape.ToString()},
           {"initialized", v.initialized}, {"device", v.device}};
    if (value.initialized()) j["value"] = TensorToJson(value);
    std::cout << DumpJson(j) << std::endl;
  } else {
    std::cout << v.name << " " << Describe(v) << " " << (v.initialized ? "initialized" : "uninitialized")
              << " on " << v.device << "\n";
    if (value.initialized()) std::cout << FormatFetch(v.name, value) << "\n";
  }
  return 0;
}

}  // namespace tfd::cli
