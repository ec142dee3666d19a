#include "daemon/client/training/trainer.h"

#include "daemon/client/training/evaluation_hook.h"
#include "daemon/client/training/signal_stop_hook.h"
#include "daemon/client/training/stop_at_step_hook.h"
#include "daemon/client/training/summary_hook.h"

namespace tfd::training {

Trainer::Trainer(Client& client, GraphDef graph, TrainerOptions options)
    : client_(client), graph_(std::move(graph)), options_(std::move(options)) {}

Trainer::~Trainer() = default;

Client& Trainer::client() { return sessions_.empty() ? client_ : sessions_.back()->client(); }

StatusOr<TrainResult> Trainer::Run(const std::function<void(const TrainProgress&)>& on_progress) {
  TFD_ASSIGN_OR_RETURN(const int64_t last_step, LastStep(graph_, options_.max_steps));
  // In the order their AfterRun and End run: the stops first, so that
  // nothing else works for a step that will not run; the final progress
  // report and summaries before the final save; the evaluation last.
  StopAtStepHook stop_at_step(last_step);
  StopRequestHook stop_request(options_.stop_requested);
  ProgressHook progress({options_.progress_every, last_step, on_progress});
  SummaryHook summaries({options_.summary_every_steps, options_.write_summaries});
  CheckpointSaverHook saver({options_.checkpoint_every_steps, options_.checkpoint_every_seconds,
                             options_.save_checkpoint, options_.on_checkpoint_failed,
                             options_.cluster_keeps_checkpoints});
  EvaluationHook evaluation;
  std::vector<SessionHook*> hooks{&stop_at_step};
  if (options_.stop_requested) hooks.push_back(&stop_request);
  hooks.push_back(&progress);
  if (options_.write_summaries) hooks.push_back(&summaries);
  hooks.push_back(&saver);
  if (options_.evaluate) hooks.push_back(&evaluation);

  SessionOptions session_options;
  session_options.step_timeout = options_.step_timeout;
  session_options.chief = options_.chief;
  session_options.init_timeout = options_.init_timeout;
  session_options.max_recoveries = options_.max_recoveries;
  session_options.on_recovery = options_.on_recovery;
  session_options.reconnect = options_.reconnect;
  session_options.stop_requested = options_.stop_requested;
  session_options.restore_checkpoint = options_.restore_checkpoint;
  sessions_.push_back(std::make_unique<TrainingSession>(client(), graph_,
                                                        std::move(session_options),
                                                        std::move(hooks)));
  TFD_ASSIGN_OR_RETURN(SessionResult ran, sessions_.back()->Run());

  TrainResult result;
  result.last = progress.last();
  result.last.local_steps = ran.local_steps;
  result.last.global_step = ran.global_step;
  result.first_loss = progress.first_loss();
  result.stopped = std::move(ran.stopped);
  result.accuracy = evaluation.accuracy();
  result.auc = evaluation.auc();
  result.checkpoints = saver.saved();
  result.checkpoint_failures = saver.failed();
  result.recoveries = ran.recoveries;
  result.restored_steps = std::move(ran.restored_steps);
  result.chief = ran.chief;
  result.initialized = ran.initialized;
  result.initialized_variables = std::move(ran.initialized_variables);
  return result;
}

}  // namespace tfd::training
