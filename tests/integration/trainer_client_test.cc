// The Trainer (cli/trainer.h) in this process, driving a real cluster
// through a Client whose master is a proxy that counts the calls it passes
// on: what the chief asks of the cluster while it recovers.
#include <catch2/catch.hpp>

#include <capnp/capability.h>
#include <capnp/schema.h>

#include "cli/trainer.h"
#include "daemon/rpc/connection.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::LocalCluster;
using testing::Node;

// Passes every call on to `target`, counting Master.waitCluster's.
class CountingMaster final : public capnp::Capability::Server {
 public:
  CountingMaster(capnp::Capability::Client target, int& wait_cluster_calls)
      : target_(kj::mv(target)), calls_(wait_cluster_calls) {}

  DispatchCallResult dispatchCall(
      uint64_t interface_id, uint16_t method_id,
      capnp::CallContext<capnp::AnyPointer, capnp::AnyPointer> context) override {
    static const uint16_t kWaitCluster =
        capnp::Schema::from<proto::Master>().getMethodByName("waitCluster").getOrdinal();
    if (interface_id == capnp::typeId<proto::Master>() && method_id == kWaitCluster) ++calls_;
    auto params = context.getParams();
    auto request = target_.typelessRequest(interface_id, method_id, params.targetSize());
    request.set(params);
    context.releaseParams();
    return {context.tailCall(kj::mv(request)), false};
  }

 private:
  capnp::Capability::Client target_;
  int& calls_;
};

// A client of `job`:`task` whose master calls go through a CountingMaster.
std::unique_ptr<Client> CountingClient(LocalCluster& cluster, const std::string& job, int task,
                                       int& wait_cluster_calls) {
  auto& io = cluster.io();
  auto stream = io.provider->getNetwork()
                    .parseAddress(cluster.Address(job, task))
                    .then([](kj::Own<kj::NetworkAddress> a) { return a->connect().attach(kj::mv(a)); })
                    .wait(io.waitScope);
  auto connection = RpcConnection::Client(kj::mv(stream));
  auto login = connection->Bootstrap().castAs<proto::Gate>().loginRequest().send().wait(
      io.waitScope);
  auto services = login.getServices();
  auto cluster_spec = ClusterSpec::FromJson(services.getCluster());
  REQUIRE(cluster_spec.ok());
  proto::Master::Client master =
      capnp::Capability::Client(kj::heap<CountingMaster>(services.getMaster(), wait_cluster_calls))
          .castAs<proto::Master>();
  return std::make_unique<Client>(io, kj::mv(connection), kj::mv(master), services.getWorker(),
                                  services.getTask(), std::move(cluster_spec).value());
}

// global_step on the ps, moved by 1 each step (train/global_step after it).
GraphDef StepGraph() {
  auto int64_const = [](std::string name, int64_t v) {
    return Node(std::move(name), "Const", {}, "/job:ps",
                {{"value", Tensor::Scalar<int64_t>(v)}, {"dtype", DType::kInt64}});
  };
  GraphDef g;
  g.nodes = {Node("global_step", "VariableV2", {}, "/job:ps",
                  {{"dtype", DType::kInt64}, {"shape", PartialShape(std::vector<int64_t>{})}}),
             int64_const("zero", 0),
             int64_const("one", 1),
             Node("init_step", "Assign", {"global_step", "zero"}, "/job:ps"),
             Node("init", "NoOp", {"^init_step"}, ""),
             Node("inc", "AssignAdd", {"global_step", "one"}, "/job:ps"),
             Node("train/global_step", "Identity", {"inc"}, "/job:ps"),
             Node("train", "NoOp", {"^inc"}, "")};
  return g;
}

// A recovery waits for every task before its new session; the chief's
// preparation after it must not wait again (each wait is a round of
// status calls to every task, and a cluster that is not whole makes each
// one last its timeout).
TEST_CASE("the chief's recovery waits for the cluster once") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  int wait_cluster_calls = 0;
  auto client = CountingClient(cluster, "worker", 0, wait_cluster_calls);

  cli::TrainerOptions options;
  options.chief = true;
  options.max_steps = 10;
  options.init_timeout = 30s;
  // A step waits for a task that is down until its deadline (the task may
  // be restarting): the step after the kill fails after this.
  options.step_timeout = 2s;
  options.progress_every = 0ms;  // every step: the ps is killed after the third
  int waits_before_recovery = -1;
  Status restarted = errors::Internal("no recovery");
  options.on_recovery = [&](const Status&, int) {
    waits_before_recovery = wait_cluster_calls;
    restarted = cluster.Start("ps", 0);
  };
  cli::Trainer trainer(*client, StepGraph(), options);
  bool killed = false;
  auto result = trainer.Run([&](const cli::TrainProgress& p) {
    if (!killed && p.local_steps == 3) {
      killed = true;
      cluster.Kill("ps", 0);
    }
  });
  INFO(result.status().ToString() << "; restarting the ps: " << restarted.ToString());
  REQUIRE(result.ok());
  CHECK(restarted.ok());
  CHECK(result->recoveries == 1);
  CHECK(result->last.global_step == 10);
  CHECK(waits_before_recovery == 1);  // the chief's, before its first step
  CHECK(wait_cluster_calls == 2);     // and the recovery's
}

}  // namespace
}  // namespace tfd
