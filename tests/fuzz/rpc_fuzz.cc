// libFuzzer target: any bytes as calls a logged-in client makes of a live
// task. The task (master, worker, sessions, a checkpoint directory) runs in
// this process and listens on loopback; each input gets a fresh session and
// a callable on it, then is cut into calls:
//
//   [method: 1 byte][n: 2 bytes, little-endian][n bytes: the params]
//
// The method byte picks one of kMethods (every Master, Session, Callable
// and Worker method, checked against the schema; a RegisteredGraph has none); the params bytes are read as one
// segment holding that method's params struct, whatever they say, and sent
// as they are. Every call must end in an answer or an error: never a crash,
// never a hang (each call is cancelled after kCallBudget, which the task
// must honour), and the task must still answer a status call afterwards.
//
//   CXX=clang++ meson setup build-fuzz -Dfuzz=true -Dtests=false
//   ninja -C build-fuzz tests/fuzz/rpc_fuzz
//   ./build-fuzz/tests/fuzz/rpc_fuzz -max_total_time=60 tests/fuzz/corpus/rpc_fuzz
//
// Seeds (tests/fuzz/corpus/rpc_fuzz/) are written by rpc_fuzz_seeds.cc;
// RPC_FUZZ_TRACE=1 prints each call an input makes and how it ended.
#include <capnp/any.h>
#include <capnp/message.h>
#include <capnp/schema.h>
#include <capnp/serialize.h>
#include <kj/async-io.h>

#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "common/graph_io.h"
#include "common/memory_budget.h"
#include "common/resource_mgr.h"
#include "daemon/checkpoint/checkpoint_manager.h"
#include "daemon/distributed/loop_inbox.h"
#include "daemon/distributed/task_server.h"
#include "daemon/rpc/connection.h"
#include "kernels/register_all.h"
#include "schemas/rpc.capnp.h"

namespace tfd {
namespace {

// Long enough for any honest call of a small graph, short enough to fuzz.
constexpr auto kCallBudget = 200 * kj::MILLISECONDS;

enum class Target { kMaster, kSession, kCallable, kWorker };
struct Method {
  Target target;
  uint64_t interface_id;
  uint16_t ordinal;
};
const Method kMethods[] = {
    {Target::kMaster, capnp::typeId<proto::Master>(), 0},   // createSession
    {Target::kMaster, capnp::typeId<proto::Master>(), 1},   // waitCluster
    {Target::kMaster, capnp::typeId<proto::Master>(), 2},   // waitInitialized
    {Target::kMaster, capnp::typeId<proto::Master>(), 3},   // saveCheckpoint
    {Target::kMaster, capnp::typeId<proto::Master>(), 4},   // restoreCheckpoint
    {Target::kMaster, capnp::typeId<proto::Master>(), 5},   // listCheckpoints
    {Target::kSession, capnp::typeId<proto::Session>(), 0},  // extend
    {Target::kSession, capnp::typeId<proto::Session>(), 1},  // run
    {Target::kSession, capnp::typeId<proto::Session>(), 2},  // close
    {Target::kSession, capnp::typeId<proto::Session>(), 3},  // makeCallable
    {Target::kCallable, capnp::typeId<proto::Callable>(), 0},  // run
    {Target::kWorker, capnp::typeId<proto::Worker>(), 0},   // registerGraph
    {Target::kWorker, capnp::typeId<proto::Worker>(), 1},   // abortStep
    {Target::kWorker, capnp::typeId<proto::Worker>(), 2},   // status
    {Target::kWorker, capnp::typeId<proto::Worker>(), 3},   // listVariables
    {Target::kWorker, capnp::typeId<proto::Worker>(), 4},   // readVariable
    {Target::kWorker, capnp::typeId<proto::Worker>(), 5},   // saveCheckpoint
    {Target::kWorker, capnp::typeId<proto::Worker>(), 6},   // restoreCheckpoint
    {Target::kWorker, capnp::typeId<proto::Worker>(), 7},   // listCheckpoints
    {Target::kWorker, capnp::typeId<proto::Worker>(), 8},   // holdSteps
    {Target::kWorker, capnp::typeId<proto::Worker>(), 9},   // releaseSteps
    {Target::kWorker, capnp::typeId<proto::Worker>(), 10},  // finishCheckpoint
    {Target::kMaster, capnp::typeId<proto::Master>(), 6},   // reportUninitialized
};
constexpr size_t kNumMethods = sizeof(kMethods) / sizeof(kMethods[0]);

// Aborts unless kMethods lists every method of each interface it calls: a
// method added to the schema and not here would never be fuzzed (the list
// once lacked finishCheckpoint). New entries go at the end, so the seeds'
// method bytes keep their meaning.
void CheckEveryMethodListed() {
  auto check = [](capnp::InterfaceSchema schema) {
    size_t listed = 0;
    for (const Method& m : kMethods) listed += m.interface_id == schema.getProto().getId();
    if (listed != schema.getMethods().size()) {
      fprintf(stderr, "rpc_fuzz: kMethods lists %zu of the %u methods of %s\n", listed,
              schema.getMethods().size(), schema.getShortDisplayName().cStr());
      abort();
    }
  };
  check(capnp::Schema::from<proto::Master>());
  check(capnp::Schema::from<proto::Session>());
  check(capnp::Schema::from<proto::Callable>());
  check(capnp::Schema::from<proto::Worker>());
}

NodeDef Node(std::string name, std::string op, std::vector<std::string> inputs, AttrMap attrs) {
  return NodeDef{std::move(name), std::move(op), std::move(inputs), "", std::move(attrs)};
}

// What every input starts from: y = x + c, a variable v initialized to c.
GraphDef SeedGraph() {
  const Tensor c = Tensor::Scalar(1.5f);
  GraphDef g;
  g.nodes = {
      Node("c", "Const", {}, {{"value", c}, {"dtype", DType::kFloat32}}),
      Node("v", "VariableV2", {},
           {{"dtype", DType::kFloat32}, {"shape", PartialShape(std::vector<int64_t>{})}}),
      Node("init", "Assign", {"v", "c"}, {}),
      Node("x", "Placeholder", {}, {{"dtype", DType::kFloat32}}),
      Node("y", "Add", {"x", "c"}, {}),
  };
  return g;
}

// One task of a one-task cluster, served on loopback in this process.
struct Task {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  std::filesystem::path dir;
  OpRegistry registry;
  ResourceMgr resources;
  KernelEnv kernel_env;
  std::unique_ptr<CheckpointManager> checkpoints;
  boost::asio::thread_pool pool{1};
  LoopInbox inbox;
  kj::Promise<void> draining = nullptr;
  TaskEnv env;
  std::unique_ptr<TaskServer> server;
  kj::Own<RpcConnection> connection;
  proto::Master::Client master = nullptr;
  proto::Worker::Client worker = nullptr;

  Task() {
    char name[] = "/tmp/tfd-rpc-fuzz-XXXXXX";
    if (mkdtemp(name) == nullptr) abort();
    dir = name;
    auto logger = std::make_shared<spdlog::logger>("fuzz", std::make_shared<spdlog::sinks::null_sink_mt>());
    if (!kernels::RegisterAll(registry).ok()) abort();
    kernel_env.resources = &resources;
    kernel_env.logger = logger;
    kernel_env.task = "/job:worker/replica:0/task:0";
    // Small, so a params struct that asks for much is refused, not served.
    kernel_env.limits.max_tensor_bytes = 1 << 20;
    kernel_env.memory = std::make_shared<MemoryBudget>(64 << 20);
    kernel_env.io_dirs.push_back(dir.string());
    CheckpointManager::Options options;
    options.dir = dir / "checkpoints";
    auto opened = CheckpointManager::Open(options, resources, logger);
    if (!opened.ok()) abort();
    checkpoints = std::move(opened).value();

    draining = inbox.Run().eagerlyEvaluate(nullptr);
    env.task = kernel_env.task;
    env.logger = logger;
    env.registry = &registry;
    env.kernel_env = &kernel_env;
    env.pool = &pool;
    env.loop = &inbox;
    env.checkpoints = checkpoints.get();
    env.step_timeout = std::chrono::milliseconds(1000);
    server = std::make_unique<TaskServer>(env, *io.provider, io.provider->getTimer(), "");
    const unsigned port = server->Listen("127.0.0.1:0").wait(io.waitScope);
    env.address = "127.0.0.1:" + std::to_string(port);
    auto parsed = ClusterSpec::FromJson("{\"worker\": [\"" + env.address + "\"]}");
    if (!parsed.ok()) abort();
    env.cluster = *parsed;

    auto stream = io.provider->getNetwork()
                      .parseAddress(env.address)
                      .then([](kj::Own<kj::NetworkAddress> a) { return a->connect().attach(kj::mv(a)); })
                      .wait(io.waitScope);
    connection = RpcConnection::Client(kj::mv(stream));
    auto login = connection->Bootstrap().castAs<proto::Gate>().loginRequest().send().wait(io.waitScope);
    master = login.getServices().getMaster();
    worker = login.getServices().getWorker();
  }
  ~Task() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

// The capabilities an input's calls go to, made afresh for each input.
struct Targets {
  proto::Session::Client session = nullptr;
  proto::Callable::Client callable = nullptr;
};

Targets MakeTargets(Task& t) {
  Targets out;
  auto create = t.master.createSessionRequest();
  GraphToProto(SeedGraph(), create.initGraph());
  out.session = create.send().getSession();
  auto make = out.session.makeCallableRequest();
  make.initFeeds(1).set(0, "x");
  make.initFetches(1).set(0, "y");
  out.callable = make.send().getCallable();
  return out;
}

capnp::Capability::Client TargetOf(Task& t, Targets& targets, Target which) {
  switch (which) {
    case Target::kMaster: return t.master;
    case Target::kSession: return targets.session;
    case Target::kCallable: return targets.callable;
    case Target::kWorker: return t.worker;
  }
  abort();
}

// One call: an answer, an error or the budget's end (then cancelled).
// The holds a holdSteps answer took are released at the end of the input.
void Call(Task& t, Targets& targets, const Method& m, kj::ArrayPtr<const capnp::word> params,
          std::vector<uint64_t>& holds) {
  auto request = TargetOf(t, targets, m.target).typelessRequest(m.interface_id, m.ordinal, nullptr);
  capnp::ReaderOptions options;
  options.traversalLimitInWords = 1 << 16;
  options.nestingLimit = 32;
  capnp::SegmentArrayMessageReader reader(kj::arrayPtr(&params, 1), options);
  // A malformed struct is refused here, as tfd's connection reader would
  // refuse it; what reads is sent exactly.
  auto copied = kj::runCatchingExceptions([&]() { request.set(reader.getRoot<capnp::AnyPointer>()); });
  if (copied != nullptr) return;
  const bool hold = m.target == Target::kWorker && m.ordinal == 8;
  std::string outcome = "cancelled at the budget";
  auto answered = request.send().then(
      [hold, &holds, &outcome](capnp::Response<capnp::AnyPointer>&& r) {
        outcome = "answered";
        if (!hold) return;
        auto results = r.getAs<proto::Worker::HoldStepsResults>();
        holds.push_back(results.getHoldId());
      },
      [&outcome](kj::Exception&& e) { outcome = e.getDescription().cStr(); });
  answered.exclusiveJoin(t.io.provider->getTimer().afterDelay(kCallBudget)).wait(t.io.waitScope);
  // For whoever writes seeds: which calls a seed's bytes make, and how they end.
  static const bool trace = getenv("RPC_FUZZ_TRACE") != nullptr;
  if (trace) fprintf(stderr, "rpc_fuzz: method %u.%u: %s\n", static_cast<unsigned>(m.target), m.ordinal, outcome.c_str());
}

}  // namespace
}  // namespace tfd

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tfd;
  static const bool listed = (CheckEveryMethodListed(), true);
  (void)listed;
  static Task t;  // one task for every input, as a long-running tfd serves many clients
  Targets targets = MakeTargets(t);
  std::vector<uint64_t> holds;
  size_t at = 0;
  for (int calls = 0; calls < 16 && at + 3 <= size; ++calls) {
    const Method& m = kMethods[data[at] % kNumMethods];
    const size_t n = std::min<size_t>(data[at + 1] | (size_t{data[at + 2]} << 8), size - at - 3);
    at += 3;
    // Aligned, whole words: a segment is made of them.
    std::vector<capnp::word> words(n / sizeof(capnp::word));
    if (!words.empty()) memcpy(words.data(), data + at, words.size() * sizeof(capnp::word));
    at += n;
    Call(t, targets, m, kj::arrayPtr(words.data(), words.size()), holds);
  }
  for (uint64_t id : holds) {
    auto release = t.worker.releaseStepsRequest();
    release.setHoldId(id);
    release.send().ignoreResult().catch_([](kj::Exception&&) {}).wait(t.io.waitScope);
  }
  // Whatever the input did, the task still answers.
  auto status = t.worker.statusRequest().send().ignoreResult().then(
      []() { return true; }, [](kj::Exception&&) { return false; });
  if (!status.exclusiveJoin(t.io.provider->getTimer().afterDelay(5 * kj::SECONDS).then([]() {
                return false;
              }))
           .wait(t.io.waitScope)) {
    fprintf(stderr, "rpc_fuzz: the task stopped answering status after this input\n");
    abort();
  }
  return 0;
}
