#include "bench/step_compare.h"

#include <chrono>
#include <cstdio>

#include "bench/data_dir.h"
#include "bench/hand_mlp.h"
#include "bench/mnist_files.h"
#include "bench/torch_peer.h"

namespace tfd::bench {
namespace {

constexpr int kWarmup = 50;

}  // namespace

StatusOr<StepFigures> MeasureClassicStep(const KernelBenchSetup& o) {
  DataDir data("tfd-kernel-bench");
  if (data.path().empty()) return errors::Internal("cannot make a directory under /tmp");
  TFD_RETURN_IF_ERROR(WriteMnistSizedFiles(data.path()));
  // One pool thread: the hand-written step and torch use one thread too.
  TFD_ASSIGN_OR_RETURN(auto session, ClassicSession::Create(data.path(), 1));
  HandMlp hand;
  StepFigures f;
  const auto tfd_step = [&]() -> Status {
    TFD_ASSIGN_OR_RETURN(f.tfd_loss, session->Step());
    return OkStatus();
  };
  const auto hand_step = [&]() -> Status {
    f.hand_loss = hand.Step();
    return OkStatus();
  };
  for (int i = 0; i < kWarmup; ++i) {
    TFD_RETURN_IF_ERROR(tfd_step());
    TFD_RETURN_IF_ERROR(hand_step());
  }
  // Torch runs between the rounds, so that all three share the machine's
  // moods; one run takes about 4 s plus torch's start.
  bool torch = o.torch;
  f.torch_note = torch ? "" : "skipped (--torch 0)";
  for (int r = 0; r < static_cast<int>(o.step_rounds); ++r) {
    TFD_RETURN_IF_ERROR(AlternatingTimer::Round(tfd_step, hand_step, o.steps, r, &f.times));
    if (!torch) continue;
    std::fprintf(stderr, "kernel_bench: torch eager, run %d of %ld\n", r + 1, o.step_rounds);
    StatusOr<double> rate = TorchEagerStepsPerSecond(o.peers_dir);
    if (rate.ok()) {
      f.torch_rates.push_back(*rate);
    } else {
      f.torch_note = rate.status().ToString();
      torch = false;
    }
  }
  f.traced = o.traced;
  for (long i = 0; i < o.traced; ++i) {
    const auto start = std::chrono::steady_clock::now();
    TFD_RETURN_IF_ERROR(session->TracedStep(&f.by_op).status());
    f.traced_seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return f;
}

}  // namespace tfd::bench
