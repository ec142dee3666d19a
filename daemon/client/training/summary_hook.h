// SummaryHook: every scalar summaries/TAG node of the graph, written as TAG
// with "global_step/sec" (the rate since the previous write) every `every`
// of this worker's steps and after the last one, as TF's SummarySaverHook
// and StepCounterHook do; and every histogram_summaries/TAG node (a numeric
// tensor of any shape), fetched only by the steps a write follows and
// written as TAG's histogram (common/summary_proto.h). The step written is the global
// step when the graph has one, else this worker's. A write's error (a NaN
// in a histogram's values, as TF1's) ends the training.
//
//   SummaryHook summaries({.every_steps = 100, .write = [&](int64_t step, auto& summaries) {
//     return events->Write(step, summaries);
//   }});
//
// Thread-safety: the session's thread.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/summary_proto.h"
#include "daemon/client/training/session_hook.h"

namespace tfd::training {

struct SummaryOptions {
  int64_t every_steps = 100;  // save_summaries_steps
  std::function<Status(int64_t step, const summary::Summary& summaries)> write;
};

class SummaryHook : public SessionHook {
 public:
  explicit SummaryHook(SummaryOptions options) : options_(std::move(options)) {}

  Status Begin(TrainingSession& session) override;
  Status BeforeRun(TrainingSession& session, StepArgs& args) override;
  Status AfterRun(TrainingSession& session, const StepValues& values) override;
  Status End(TrainingSession& session, const Status& status) override;

 private:
  using Clock = std::chrono::steady_clock;
  Status Write(TrainingSession& session, Clock::time_point now);
  // Whether a write follows the step about to run (the one after it is
  // this worker's `local_steps`).
  bool WriteFollows(int64_t local_steps) const {
    return options_.every_steps > 0 && local_steps % options_.every_steps == 0;
  }

  const SummaryOptions options_;
  std::vector<std::string> nodes_;                 // summaries/TAG
  std::vector<int> at_;                            // each one's index in the step's fetches
  std::vector<std::optional<double>> values_;      // the last step's; nullopt: not a scalar
  std::vector<std::string> histogram_nodes_;       // histogram_summaries/TAG
  std::vector<int> histogram_at_;                  // -1 when this step does not fetch them
  std::vector<std::pair<std::string, Tensor>> histograms_;  // fetched since the last write
  bool started_ = false;
  // Where the previous write left off, for global_step/sec.
  int64_t written_steps_ = 0, written_global_ = -1;
  Clock::time_point written_at_;
};

}  // namespace tfd::training
