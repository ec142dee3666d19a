#include "daemon/client/training/summary_hook.h"

#include "daemon/client/training/progress_hook.h"
#include "daemon/client/training/training_session.h"

namespace tfd::training {
namespace {

constexpr std::string_view kSummaryPrefix = "summaries/";
constexpr std::string_view kHistogramPrefix = "histogram_summaries/";

}  // namespace

Status SummaryHook::Begin(TrainingSession& session) {
  for (const NodeDef& n : session.graph().nodes) {
    if (n.name.rfind(kSummaryPrefix, 0) == 0) nodes_.push_back(n.name);
    if (n.name.rfind(kHistogramPrefix, 0) == 0) histogram_nodes_.push_back(n.name);
  }
  at_.assign(nodes_.size(), -1);
  histogram_at_.assign(histogram_nodes_.size(), -1);
  values_.assign(nodes_.size(), std::nullopt);
  return OkStatus();
}

Status SummaryHook::BeforeRun(TrainingSession& session, StepArgs& args) {
  if (!started_) {
    started_ = true;
    written_global_ = session.global_step();
  }
  for (size_t i = 0; i < nodes_.size(); ++i) at_[i] = args.AddFetch(nodes_[i]);
  const bool fetch = WriteFollows(session.local_steps() + 1);
  for (size_t i = 0; i < histogram_nodes_.size(); ++i) {
    histogram_at_[i] = fetch ? args.AddFetch(histogram_nodes_[i]) : -1;
  }
  return OkStatus();
}

Status SummaryHook::AfterRun(TrainingSession& session, const StepValues& values) {
  if (session.local_steps() == 1) written_at_ = session.steps_began().value_or(Clock::now());
  for (size_t i = 0; i < nodes_.size(); ++i) values_[i] = SummaryScalar(values.fetches[at_[i]]);
  for (size_t i = 0; i < histogram_nodes_.size(); ++i) {
    if (histogram_at_[i] < 0) continue;
    histograms_.emplace_back(histogram_nodes_[i].substr(kHistogramPrefix.size()),
                             values.fetches[histogram_at_[i]]);
  }
  if (WriteFollows(session.local_steps())) return Write(session, Clock::now());
  return OkStatus();
}

Status SummaryHook::End(TrainingSession& session, const Status& status) {
  if (!status.ok() || !started_) return OkStatus();
  return Write(session, Clock::now());
}

Status SummaryHook::Write(TrainingSession& session, Clock::time_point now) {
  const int64_t steps = session.local_steps(), global = session.global_step();
  if (!options_.write || steps == written_steps_) return OkStatus();
  summary::Summary summaries;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (values_[i]) {
      summaries.scalars.emplace_back(nodes_[i].substr(kSummaryPrefix.size()), *values_[i]);
    }
  }
  const double interval = std::chrono::duration<double>(now - written_at_).count();
  const int64_t moved =
      global >= 0 && written_global_ >= 0 ? global - written_global_ : steps - written_steps_;
  if (interval > 0) summaries.scalars.emplace_back("global_step/sec", moved / interval);
  for (auto& [tag, tensor] : std::exchange(histograms_, {})) {
    auto histogram = summary::HistogramOf(tensor);
    if (!histogram.ok()) {
      return histogram.status().WithContext("the histogram summary '" + tag + "'");
    }
    summaries.histograms.emplace_back(tag, std::move(histogram).value());
  }
  written_steps_ = steps;
  written_global_ = global;
  written_at_ = now;
  return options_.write(global >= 0 ? global : steps, summaries).WithContext("writing summaries");
}

}  // namespace tfd::training
