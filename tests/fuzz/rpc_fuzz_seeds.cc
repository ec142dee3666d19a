// Writes rpc_fuzz's seeds: inputs that make sensible calls (run the seed
// graph, make and run a callable, read the variable, save and restore a
// checkpoint, finish a pending one, hold and release steps, ...), each call framed as rpc_fuzz
// reads it: [method index][params length, 2 bytes LE][params, one segment].
// The indices are those of kMethods in rpc_fuzz.cc.
//
//   build/tests/fuzz/rpc_fuzz_seeds tests/fuzz/corpus/rpc_fuzz
#include <capnp/message.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "common/graph_io.h"
#include "schemas/rpc.capnp.h"

namespace tfd {
namespace {

using Bytes = std::string;

// One call: `fill` builds the params struct `Params`.
template <typename Params>
Bytes Call(uint8_t method, const std::function<void(typename Params::Builder)>& fill) {
  capnp::MallocMessageBuilder message(4096);  // one segment, as rpc_fuzz reads
  fill(message.initRoot<Params>());
  auto segments = message.getSegmentsForOutput();
  if (segments.size() != 1) throw std::runtime_error("params span more than one segment");
  const auto bytes = segments[0].asBytes();
  Bytes out;
  out.push_back(static_cast<char>(method));
  out.push_back(static_cast<char>(bytes.size() & 0xff));
  out.push_back(static_cast<char>(bytes.size() >> 8));
  out.append(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
  return out;
}

template <typename Params>
Bytes Empty(uint8_t method) {
  return Call<Params>(method, [](typename Params::Builder) {});
}

void FloatScalar(proto::Tensor::Builder t, float v) {
  t.setDtype(proto::DType::FLOAT32);
  t.initFloatVal(1).set(0, v);
}

Bytes RunY(float x) {
  return Call<proto::Session::RunParams>(7, [x](auto p) {
    auto feed = p.initFeeds(1)[0];
    feed.setName("x");
    FloatScalar(feed.initTensor(), x);
    p.initFetches(1).set(0, "y");
  });
}

Bytes RunInit() {
  return Call<proto::Session::RunParams>(7, [](auto p) { p.initTargets(1).set(0, "init"); });
}

}  // namespace
}  // namespace tfd

int main(int argc, char** argv) {
  using namespace tfd;
  if (argc != 2) {
    fprintf(stderr, "usage: rpc_fuzz_seeds DIR\n");
    return 2;
  }
  std::vector<std::pair<std::string, Bytes>> seeds;
  seeds.emplace_back("run", RunY(2.0f));
  seeds.emplace_back("callable", Call<proto::Callable::RunParams>(10, [](auto p) {
                       FloatScalar(p.initFeeds(1)[0], 3.0f);
                     }));
  seeds.emplace_back("init_read",
                     RunInit() + Call<proto::Worker::ReadVariableParams>(
                                     15, [](auto p) { p.setName("v"); }));
  seeds.emplace_back("status_list", Empty<proto::Worker::StatusParams>(13) +
                                        Empty<proto::Worker::ListVariablesParams>(14));
  seeds.emplace_back(
      "checkpoints",
      RunInit() +
          Call<proto::Master::SaveCheckpointParams>(3, [](auto p) {
            p.setStep(1);
            p.setHasStep(true);
            p.setTimeoutMs(1000);
          }) +
          Call<proto::Master::ListCheckpointsParams>(5, [](auto p) { p.setTimeoutMs(1000); }) +
          Call<proto::Master::RestoreCheckpointParams>(4, [](auto p) {
            p.setStep(-1);
            p.setTimeoutMs(1000);
          }) +
          Call<proto::Worker::SaveCheckpointParams>(16, [](auto p) { p.setStep(2); }) +
          Call<proto::Worker::RestoreCheckpointParams>(17, [](auto p) { p.setStep(2); }) +
          Call<proto::Worker::ListCheckpointsParams>(18, [](auto p) { p.setVerify(true); }));
  // A two-phase save on the worker: pending, then each way it can finish.
  seeds.emplace_back(
      "pending_checkpoint",
      RunInit() +
          Call<proto::Worker::SaveCheckpointParams>(16, [](auto p) {
            p.setStep(3);
            p.setPending(true);
          }) +
          Call<proto::Worker::FinishCheckpointParams>(21, [](auto p) {
            p.setStep(3);
            p.setAction(proto::CheckpointAction::COMMIT);
          }) +
          Call<proto::Worker::FinishCheckpointParams>(21, [](auto p) {
            p.setStep(3);
            p.setAction(proto::CheckpointAction::REVERT);
          }) +
          Call<proto::Worker::FinishCheckpointParams>(21, [](auto p) {
            p.setStep(3);
            p.setAction(proto::CheckpointAction::DISCARD);
          }));
  seeds.emplace_back("extend", Call<proto::Session::ExtendParams>(6, [](auto p) {
                                 GraphDef g;
                                 g.nodes = {NodeDef{"z", "Mul", {"y", "c"}, "", {}}};
                                 GraphToProto(g, p.initGraph());
                               }) + Call<proto::Session::RunParams>(7, [](auto p) {
                                 auto feed = p.initFeeds(1)[0];
                                 feed.setName("x");
                                 FloatScalar(feed.initTensor(), 1.0f);
                                 p.initFetches(1).set(0, "z");
                               }));
  seeds.emplace_back("make_callable", Call<proto::Session::MakeCallableParams>(9, [](auto p) {
                       p.initFeeds(1).set(0, "x");
                       p.initFetches(1).set(0, "y");
                       p.initTargets(1).set(0, "init");
                     }));
  seeds.emplace_back("hold",
                     Call<proto::Worker::HoldStepsParams>(19, [](auto p) {
                       p.setDrainMs(10);
                       p.setHoldMs(1000);
                     }) + RunY(1.0f) +
                         Call<proto::Worker::ReleaseStepsParams>(20, [](auto p) { p.setHoldId(1); }));
  seeds.emplace_back("abort", Call<proto::Worker::AbortStepParams>(12, [](auto p) {
                       p.setStepId(1);
                       p.setCode("CANCELLED");
                       p.setMessage("seed");
                     }));
  seeds.emplace_back(
      "master", Call<proto::Master::CreateSessionParams>(0, [](auto p) {
                  GraphDef g;
                  g.nodes = {NodeDef{"k", "Const", {}, "",
                                     {{"value", Tensor::Scalar(2.0f)}, {"dtype", DType::kFloat32}}}};
                  GraphToProto(g, p.initGraph());
                }) + Call<proto::Master::WaitClusterParams>(1, [](auto p) { p.setTimeoutMs(100); }) +
                    Call<proto::Master::WaitInitializedParams>(2, [](auto p) {
                      p.initNames(1).set(0, "v");
                      p.setTimeoutMs(50);
                    }) +
                    Call<proto::Master::ReportUninitializedParams>(22, [](auto p) {
                      auto names = p.initNames(2);
                      names.set(0, "v");
                      names.set(1, "never_made");
                      p.setTimeoutMs(50);
                    }));
  seeds.emplace_back("register", Call<proto::Worker::RegisterGraphParams>(11, [](auto p) {
                       GraphDef g;
                       g.nodes = {NodeDef{"k", "Const", {}, "",
                                          {{"value", Tensor::Scalar(2.0f)},
                                           {"dtype", DType::kFloat32}}}};
                       GraphToProto(g, p.initGraph());
                     }));
  seeds.emplace_back("close", Empty<proto::Session::CloseParams>(8) + RunY(4.0f));
  for (const auto& [name, bytes] : seeds) {
    std::ofstream(std::string(argv[1]) + "/" + name, std::ios::binary) << bytes;
  }
  return 0;
}
