// tfctl start and stop: the daemons of a cluster spec that live on this
// host, as background processes with pid files and logs in a run directory.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/program_options.hpp>
#include <kj/async-io.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/connection_flags.h"
#include "cli/output.h"
#include "common/allowed_cpus.h"
#include "common/cluster_spec.h"
#include "common/cpu_split.h"
#include "common/subprocess.h"
#include "daemon/rpc/kj_status.h"

namespace tfd::cli {
namespace {
namespace po = boost::program_options;
namespace fs = std::filesystem;

struct DaemonFlags {
  std::string cluster;
  std::string job;
  int task = -1;
  std::string run_dir = "run";
  std::string tfd;
  std::vector<std::string> tfd_flags;
  double timeout_s = 20;
  std::string cpus_per_task;  // start only; "" pins nothing
};

DaemonFlags Parse(const Args& args, const char* what) {
  const bool start = std::string(what) == "start";
  DaemonFlags f;
  po::options_description options(what);
  options.add_options()
      ("cluster", po::value(&f.cluster)->required(), "cluster spec: JSON or a file")
      ("job", po::value(&f.job), "only this job's tasks")
      ("task", po::value(&f.task), "only this task index")
      ("run-dir", po::value(&f.run_dir), "pid files and logs (default ./run)")
      ("tfd", po::value(&f.tfd), "the tfd binary (default: beside tfctl, or TFD, or PATH)")
      ("tfd-flag", po::value(&f.tfd_flags)->composing(), "a flag passed to every tfd, e.g. --tfd-flag=--data-dir=data")
      ("timeout", po::value(&f.timeout_s), "seconds to wait for the tasks, which start or stop together (default 20)");
  if (start) {
    options.add_options()
        ("cpus-per-task", po::value(&f.cpus_per_task),
         "N or 'even': each task on this host its own N of tfctl's allowed CPUs (even: as many "
         "as all get), in start order");
  }
  po::variables_map vm = ParseArgs(args, options);
  // Checked before anything is launched or signalled: a timeout of 0 would
  // give up on every task at once, and tfd itself refuses --task -1.
  if (!(f.timeout_s > 0 && f.timeout_s <= 1e9)) {
    throw UsageError("--timeout must be a positive number of seconds (at most 1e9)");
  }
  if (vm.count("task") > 0 && f.task < 0) throw UsageError("--task must not be negative");
  return f;
}

// --timeout, as a duration.
std::chrono::milliseconds Timeout(const DaemonFlags& f) {
  return std::chrono::milliseconds(static_cast<int64_t>(f.timeout_s * 1000));
}

// Whether `address` names this host, so its task is ours to start.
bool IsLocal(const std::string& address) {
  std::string host = address.substr(0, address.rfind(':'));
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1" ||
         host == "0.0.0.0" || host == name;
}

std::string FindTfd(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("TFD")) return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& candidate : {self.parent_path() / "tfd",
                                      self.parent_path().parent_path() / "daemon" / "tfd"}) {
      if (fs::exists(candidate, ec)) return candidate.string();
    }
  }
  return "tfd";
}

struct Task {
  std::string job;
  int index;
  std::string address;
  int slot;  // its place among the spec's tasks on this host, selected or not
  std::string name() const { return "/job:" + job + "/replica:0/task:" + std::to_string(index); }
  std::string file(const std::string& dir, const char* ext) const {
    return dir + "/" + job + "-" + std::to_string(index) + ext;
  }
};

// The tasks of the spec on this host that --job and --task select, and in
// `local_tasks` how many the spec has on this host in all.
// A --cluster that is no spec (malformed, over the size limit) is a
// UsageError (exit 2); a file that cannot be read, the status (exit 1).
StatusOr<std::vector<Task>> Select(const DaemonFlags& f, ClusterSpec* spec_out, int* local_tasks) {
  auto parsed = ClusterSpec::FromFlag(f.cluster);
  if (!parsed.ok() && parsed.status().code() == Code::kInvalidArgument) {
    throw UsageError("--cluster: " + parsed.status().message());
  }
  TFD_ASSIGN_OR_RETURN(ClusterSpec spec, std::move(parsed));
  if (!f.job.empty() && !spec.HasJob(f.job)) {
    return errors::InvalidArgument("--job '", f.job, "' is not in the cluster spec");
  }
  std::vector<Task> tasks;
  int slot = 0;
  for (const auto& [job, addresses] : spec.jobs()) {
    for (size_t i = 0; i < addresses.size(); ++i) {
      if (!IsLocal(addresses[i])) continue;
      const bool selected =
          (f.job.empty() || job == f.job) && (f.task < 0 || static_cast<int>(i) == f.task);
      if (selected) tasks.push_back({job, static_cast<int>(i), addresses[i], slot});
      ++slot;
    }
  }
  *local_tasks = slot;
  if (f.task >= 0 && tasks.empty()) {
    return errors::InvalidArgument("no task ", f.task, " on this host matches the selection");
  }
  *spec_out = std::move(spec);
  return tasks;
}

// The command line of process `pid`, one string per argument; empty for a
// process that is gone or a zombie.
std::vector<std::string> ReadCmdline(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  for (std::string arg; std::getline(in, arg, '\0');) argv.push_back(std::move(arg));
  return argv;
}

// Whether pid is task t's tfd as `tfctl start` ran it: its command line holds
// `--job JOB --task N`, and its `--cluster` spec gives that task t's address,
// so the same task of another cluster (another run directory's pid file
// copied here) is not this one. A process that has exited but that its
// parent has not reaped yet (a zombie) has an empty command line and is not:
// in a container whose pid 1 never reaps, it would otherwise look alive
// forever. Neither is a process that took the pid of a tfd that is long
// gone, which stop must not signal.
bool IsTaskDaemon(pid_t pid, const Task& t) {
  const std::vector<std::string> argv = ReadCmdline(pid);
  const std::string index = std::to_string(t.index);
  bool is_task = false;
  std::string cluster;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i + 3 < argv.size() && argv[i] == "--job" && argv[i + 1] == t.job &&
        argv[i + 2] == "--task" && argv[i + 3] == index) {
      is_task = true;
    } else if (argv[i] == "--cluster" && i + 1 < argv.size()) {
      cluster = argv[i + 1];
    } else if (argv[i].rfind("--cluster=", 0) == 0) {
      cluster = argv[i].substr(std::strlen("--cluster="));
    }
  }
  if (!is_task || cluster.empty()) return false;
  auto spec = ClusterSpec::FromJson(cluster);  // start passes JSON, never a file
  if (!spec.ok()) return false;
  auto address = spec->TaskAddress(t.job, t.index);
  return address.ok() && *address == t.address;
}

// The pid in t's pid file while that process is t's daemon, else -1.
pid_t ReadPid(const std::string& path, const Task& t) {
  std::ifstream in(path);
  pid_t pid = -1;
  if (!(in >> pid) || pid <= 0 || !IsTaskDaemon(pid, t)) return -1;
  return pid;
}

// Writes `pid` to `path` through a temporary file renamed over it, so that a
// reader finds the old pid file or the new one, never part of one.
// INVALID_ARGUMENT naming the path and the system's error.
Status WritePidFile(const std::string& path, pid_t pid) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  const std::string text = std::to_string(pid) + "\n";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return errors::InvalidArgument("cannot write pid file '", path, "': ", std::strerror(errno));
  }
  int error = 0;
  if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    error = errno != 0 ? errno : EIO;
  }
  if (close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && rename(tmp.c_str(), path.c_str()) != 0) error = errno;
  if (error == 0) return OkStatus();
  unlink(tmp.c_str());
  return errors::InvalidArgument("cannot write pid file '", path, "': ", std::strerror(error));
}

// A task's tfd that start launched and has not let go of yet.
struct Launched {
  const Task* task;
  Subprocess child;
  uintmax_t log_offset;  // where this run's output starts in the task's log
};

// Starts task t's tfd (pinned to `cpus` unless empty) and writes its pid
// file; does not wait for it to listen. A pid file that cannot be written
// stops the tfd again: a daemon that stop cannot find must not be left.
StatusOr<Launched> Launch(const DaemonFlags& f, const Task& t, const std::string& tfd,
                          const std::string& spec_json, const std::vector<int>& cpus) {
  std::vector<std::string> argv = {tfd, "--cluster", spec_json, "--job", t.job, "--task",
                                   std::to_string(t.index)};
  argv.insert(argv.end(), f.tfd_flags.begin(), f.tfd_flags.end());
  const std::string log = t.file(f.run_dir, ".log");
  std::error_code ec;
  const uintmax_t log_offset = fs::exists(log, ec) ? fs::file_size(log, ec) : 0;
  SubprocessOptions o;
  o.stdin_path = "/dev/null";
  o.stdout_path = log;
  o.stderr_path = log;
  o.new_session = true;  // outlives this terminal
  o.cpus = cpus;
  auto child = Subprocess::Start(argv, o);
  if (!child.ok()) {
    return errors::Unavailable("cannot start ", tfd, " for ", t.name(), ": ",
                               child.status().message());
  }
  if (Status written = WritePidFile(t.file(f.run_dir, ".pid"), child->pid()); !written.ok()) {
    child->Stop(Timeout(f));
    return written;
  }
  return Launched{&t, std::move(child).value(), ec ? 0 : log_offset};
}

// The last non-empty line `path` has past `offset` (what the task wrote
// since it was launched), at most 300 characters of it; "" when none.
std::string LastLogLine(const std::string& path, uintmax_t offset) {
  constexpr uintmax_t kTail = 64 * 1024;
  constexpr size_t kMaxLine = 300;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const uintmax_t size = static_cast<uintmax_t>(std::max<std::streamoff>(in.tellg(), 0));
  const uintmax_t from = std::max(offset, size > kTail ? size - kTail : 0);
  if (from >= size) return "";
  in.seekg(static_cast<std::streamoff>(from));
  std::string text(size - from, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  std::string last;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (!line.empty()) last = std::move(line);
    start = end + 1;
  }
  if (last.size() > kMaxLine) last = last.substr(0, kMaxLine) + "...";
  return last;
}

// Whether process `pid` is `ancestor` or runs under it (a --tfd wrapper that
// runs tfd as its child), by the parent pids in /proc.
bool IsSelfOrDescendant(pid_t pid, pid_t ancestor) {
  for (int depth = 0; depth < 32 && pid > 1; ++depth) {
    if (pid == ancestor) return true;
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    std::getline(in, stat);
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) return false;
    std::istringstream rest(stat.substr(paren + 1));
    char state = 0;
    if (!(rest >> state >> pid)) return false;
  }
  return false;
}

// The value the --tfd-flag words give tfd's `flag` ("--flag V" or
// "--flag=V"; the last one wins, as for tfd); "" when they give none.
std::string TfdFlagValue(const DaemonFlags& f, const std::string& flag) {
  std::string value;
  for (size_t i = 0; i < f.tfd_flags.size(); ++i) {
    if (f.tfd_flags[i] == flag && i + 1 < f.tfd_flags.size()) value = f.tfd_flags[i + 1];
    if (f.tfd_flags[i].rfind(flag + "=", 0) == 0) value = f.tfd_flags[i].substr(flag.size() + 1);
  }
  return value;
}

// How start logs in to see which task answers, with what the tasks are
// started with: the file of a --tfd-flag=--auth-token-file, else
// TFD_AUTH_TOKEN_FILE's, and the --tfd-flag=--tls-* files, else TFD_TLS_*'s,
// as tfd reads them. The token is "" when there is none or it cannot be
// read (tfd then exits, saying why, or the login is refused: see WaitTask).
struct TfdLogin {
  std::string token;
  TlsFiles tls;
};

TfdLogin LoginOfTfd(const DaemonFlags& f) {
  auto token = ReadToken(TfdFlagValue(f, "--auth-token-file"));
  return {
      token.ok() ? *token : "",
      {TfdFlagValue(f, "--tls-cert"), TfdFlagValue(f, "--tls-key"), TfdFlagValue(f, "--tls-ca")}};
}

// What became of a task start launched, while it waited.
struct Outcome {
  enum Kind { kUp, kExited, kOtherProcess, kNotListening } kind = kNotListening;
  Status status;        // why, unless kUp
  int wait_status = 0;  // kExited: as waitpid gave it
};

// Whether the child `pid` has exited; reaps it into `outcome` if so.
bool Reaped(pid_t pid, Outcome* outcome) {
  int status = 0;
  if (waitpid(pid, &status, WNOHANG) != pid) return false;
  outcome->kind = Outcome::kExited;
  outcome->wait_status = status;
  return true;
}

// One look at whether task t, launched as the child `pid`, answers a login
// at its address as itself: the task that answers is t, and its pid is the
// child's (or a process under it), since another process already listening
// there (a tfd not in this run directory, or the spec's other task at the
// same address) answers as well while the child fails to bind: then
// kOtherProcess. A login refused for want of the token cannot tell who
// answers: kUp, and the caller checks that the child still runs. kNotListening,
// with why, is to be looked at again.
Outcome LogsInAsTask(kj::AsyncIoContext& io, const Task& t, pid_t pid, const std::string& token,
                     std::chrono::milliseconds timeout) {
  Outcome outcome;
  auto client = Client::Connect(io, t.address, token, timeout);
  if (!client.ok()) {
    const bool refused = client.status().code() == Code::kUnauthenticated;
    outcome.kind = refused ? Outcome::kUp : Outcome::kNotListening;
    outcome.status = refused ? OkStatus() : client.status();
    return outcome;
  }
  auto info = (*client)->GetStatus(timeout);
  if (!info.ok()) {
    outcome.status = info.status();
  } else if ((*client)->task() != t.name() ||
             !IsSelfOrDescendant(static_cast<pid_t>(info->pid), pid)) {
    outcome.kind = Outcome::kOtherProcess;
    outcome.status = errors::Unavailable(t.address, " is served by ", (*client)->task(), " pid ",
                                         info->pid, ", not by the tfd started (pid ", pid, ")");
  } else {
    outcome.kind = Outcome::kUp;
  }
  return outcome;
}

// LogsInAsTask for a task with TLS. Start holds the task's own certificate,
// with which a login is a peer task's, not a client's: the TLS handshake
// alone is made, which shows that whoever answers holds t's key (one whose
// certificate names another task is kOtherProcess); that the child still
// runs is the rest, as for a refused token.
Outcome HandshakesAsTask(kj::AsyncIoContext& io, Tls& tls, const Task& t,
                         std::chrono::milliseconds timeout) {
  Outcome outcome;
  auto shake =
      io.provider->getNetwork()
          .parseAddress(t.address)
          .then([](kj::Own<kj::NetworkAddress> a) { return a->connect().attach(kj::mv(a)); })
          .then([&tls, &t](kj::Own<kj::AsyncIoStream> stream) {
            return tls.WrapClient(kj::mv(stream), t.address, t.name());
          })
          .then([](kj::Own<kj::AsyncIoStream>) { return true; })
          .exclusiveJoin(
              io.provider->getTimer().afterDelay(timeout.count() * kj::MILLISECONDS).then([] {
                return false;
              }));
  try {
    if (shake.wait(io.waitScope)) {
      outcome.kind = Outcome::kUp;
    } else {
      outcome.status = errors::Unavailable("no TLS handshake from ", t.address, " within ",
                                           timeout.count() / 1000.0, " s");
    }
  } catch (const kj::Exception& e) {
    outcome.status = StatusFromKj(e);
    if (outcome.status.code() == Code::kUnauthenticated) outcome.kind = Outcome::kOtherProcess;
  }
  return outcome;
}

// Looks at task t, launched as the child `pid`, until it answers at its
// address as itself or the deadline passes. The child is reaped between
// looks, so one that exits ends the wait at once.
Outcome WaitTask(const Task& t, pid_t pid, const TfdLogin& login,
                 std::chrono::steady_clock::time_point deadline) {
  using std::chrono::milliseconds;
  auto io = kj::setupAsyncIo();
  // A Tls serves the event loop of one thread: this one's own. Files that
  // do not load leave the look a plain login; the child, which cannot load
  // them either, exits.
  auto loaded = LoadTls(login.tls);
  const std::shared_ptr<Tls> tls = loaded.ok() ? *loaded : nullptr;
  Outcome outcome;
  outcome.status = errors::Unavailable("no attempt made");
  for (milliseconds slice(500);; slice = std::min(slice * 2, milliseconds(2000))) {
    if (Reaped(pid, &outcome)) return outcome;
    const auto left =
        std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left <= milliseconds(0)) return outcome;
    outcome = tls ? HandshakesAsTask(io, *tls, t, std::min(left, slice))
                  : LogsInAsTask(io, t, pid, login.token, std::min(left, slice));
    if (outcome.kind == Outcome::kNotListening) continue;
    if (outcome.kind == Outcome::kUp && Reaped(pid, &outcome)) return outcome;
    return outcome;
  }
}

// WaitTask for every task launched, all at once: the tasks start together,
// so the last one to listen bounds the wait, not the sum of all. One thread
// each, since a Client belongs to the thread of its event loop.
std::vector<Outcome> WaitListening(const std::vector<Launched>& launched, const TfdLogin& login,
                                   std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<Outcome> outcomes(launched.size());
  std::vector<std::thread> waiters;
  waiters.reserve(launched.size());
  for (size_t i = 0; i < launched.size(); ++i) {
    waiters.emplace_back([&, i] {
      outcomes[i] = WaitTask(*launched[i].task, launched[i].child.pid(), login, deadline);
    });
  }
  for (std::thread& t : waiters) t.join();
  return outcomes;
}

// "exited with status N" or "was killed by signal N (name)", of a waitpid status.
std::string DescribeExit(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
}

// Prints how the start of `l` went; false, with the error printed, when its
// daemon is not serving. One still starting is left running, as it may yet
// listen; one that exited, or that cannot serve its address because another
// process does (it is stopped), leaves no daemon and no pid file.
bool ReportStart(const DaemonFlags& f, Launched& l, const Outcome& outcome,
                 const std::vector<int>& cpus) {
  const Task& t = *l.task;
  const std::string log = t.file(f.run_dir, ".log");
  if (outcome.kind == Outcome::kUp) {
    const pid_t pid = l.child.Release();  // the daemon outlives tfctl
    std::cout << "started " << t.name() << " pid " << pid << " on " << t.address << " (log " << log
              << ")";
    if (!cpus.empty()) std::cout << " on CPUs " << FormatCpuList(cpus);
    std::cout << "\n";
    return true;
  }
  if (outcome.kind == Outcome::kNotListening) {
    l.child.Release();
    ReportError(errors::Unavailable(t.name(), " is not listening (log: ", log,
                                    "): ", outcome.status.message()));
    return false;
  }
  std::string why;
  if (outcome.kind == Outcome::kExited) {
    l.child.Release();  // WaitTask reaped it
    why = DescribeExit(outcome.wait_status);
  } else {
    l.child.Stop(Timeout(f));
    why = "cannot serve its address: " + outcome.status.message();
  }
  std::remove(t.file(f.run_dir, ".pid").c_str());
  const std::string last = LastLogLine(log, l.log_offset);
  ReportError(
      errors::Unavailable(t.name(), " ", why, last.empty() ? "" : ": ", last, " (log: ", log, ")"));
  return false;
}

}  // namespace

int StartCommand(const Args& args) {
  const DaemonFlags f = Parse(args, "start");
  ClusterSpec spec;
  int local_tasks = 0;
  auto tasks = Select(f, &spec, &local_tasks);
  if (!tasks.ok()) return ReportError(tasks.status());
  // Each task's CPUs by its place among the host's tasks, so that tasks
  // started one at a time get the CPUs they would get started together.
  auto cpu_sets = SplitCpus(f.cpus_per_task, AllowedCpus(), local_tasks);
  if (!cpu_sets.ok()) throw UsageError(cpu_sets.status().message());
  std::error_code ec;
  fs::create_directories(f.run_dir, ec);
  if (ec) return ReportError(errors::InvalidArgument("cannot create --run-dir '", f.run_dir, "': ", ec.message()));
  const std::string tfd = FindTfd(f.tfd);
  const std::string spec_json = spec.ToJson();
  // Every daemon first, then one wait for all of them: started one after
  // another, each task's start-up would add to the next one's.
  int failed = 0;
  std::vector<Launched> launched;
  for (const Task& t : *tasks) {
    if (pid_t pid = ReadPid(t.file(f.run_dir, ".pid"), t); pid > 0) {
      std::cout << t.name() << " already running (pid " << pid << ")\n";
      continue;
    }
    auto l = Launch(f, t, tfd, spec_json, (*cpu_sets)[t.slot]);
    if (!l.ok()) {
      ReportError(l.status());
      ++failed;
      continue;
    }
    launched.push_back(std::move(l).value());
  }
  const std::vector<Outcome> outcomes = WaitListening(launched, LoginOfTfd(f), Timeout(f));
  for (size_t i = 0; i < launched.size(); ++i) {
    if (!ReportStart(f, launched[i], outcomes[i], (*cpu_sets)[launched[i].task->slot])) ++failed;
  }
  return failed == 0 ? 0 : 1;
}

int StopCommand(const Args& args) {
  const DaemonFlags f = Parse(args, "stop");
  ClusterSpec spec;
  int local_tasks = 0;
  auto tasks = Select(f, &spec, &local_tasks);
  if (!tasks.ok()) return ReportError(tasks.status());
  // SIGTERM to every task first, then one wait for all of them, so that they
  // drain together rather than one after another.
  struct Stopping {
    const Task* task;
    pid_t pid;
    bool gone = false;
  };
  std::vector<Stopping> stopping;
  for (const Task& t : *tasks) {
    const std::string pid_file = t.file(f.run_dir, ".pid");
    const pid_t pid = ReadPid(pid_file, t);
    if (pid <= 0) {
      std::cout << t.name() << " not running\n";
      std::remove(pid_file.c_str());
      continue;
    }
    kill(pid, SIGTERM);
    stopping.push_back({&t, pid});
  }
  const auto deadline = std::chrono::steady_clock::now() + Timeout(f);
  for (size_t left = stopping.size(); left > 0 && std::chrono::steady_clock::now() < deadline;) {
    for (Stopping& s : stopping) {
      if (s.gone) continue;
      waitpid(s.pid, nullptr, WNOHANG);  // reaps it when we happen to be its parent
      if (!IsTaskDaemon(s.pid, *s.task)) {
        s.gone = true;
        --left;
      }
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  int failed = 0;
  for (const Stopping& s : stopping) {
    if (!s.gone) {
      kill(s.pid, SIGKILL);
      ReportError(errors::DeadlineExceeded(s.task->name(), " (pid ", s.pid,
                                           ") did not stop within ", f.timeout_s, " s: killed"));
      ++failed;
    } else {
      std::cout << "stopped " << s.task->name() << " (pid " << s.pid << ")\n";
    }
    std::remove(s.task->file(f.run_dir, ".pid").c_str());
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace tfd::cli
