#include "daemon/client/training/training_session.h"

#include <cmath>

#include "api/train_signature.h"

namespace tfd::training {

namespace sig = train::signature;

int StepArgs::AddFetch(const std::string& name) {
  for (size_t i = 0; i < fetches_.size(); ++i) {
    if (fetches_[i] == name) return static_cast<int>(i);
  }
  fetches_.push_back(name);
  return static_cast<int>(fetches_.size() - 1);
}

void StepArgs::AddTarget(const std::string& name) {
  for (const std::string& t : targets_) {
    if (t == name) return;
  }
  targets_.push_back(name);
}

Status StepArgs::AddFeed(const std::string& name, Tensor value) {
  for (const std::string& fed : feed_names_) {
    if (fed == name) return errors::InvalidArgument("'", name, "' is fed twice in one step");
  }
  feed_names_.push_back(name);
  feed_values_.push_back(std::move(value));
  return OkStatus();
}

double ScalarValue(const Tensor& t) {
  if (!t.initialized() || t.num_elements() != 1) return NAN;
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[0];
    case DType::kFloat64: return t.data<double>()[0];
    case DType::kInt32: return t.data<int32_t>()[0];
    case DType::kInt64: return static_cast<double>(t.data<int64_t>()[0]);
    default: return NAN;
  }
}

TrainingSession::TrainingSession(Client& client, GraphDef graph, SessionOptions options,
                                 std::vector<SessionHook*> hooks)
    : client_(&client),
      graph_(std::move(graph)),
      options_(std::move(options)),
      hooks_(std::move(hooks)) {}

bool TrainingSession::Has(const char* node) const {
  for (const NodeDef& n : graph_.nodes) {
    if (n.name == node) return true;
  }
  return false;
}

StatusOr<Tensor> TrainingSession::ConstValue(const char* node) const {
  for (const NodeDef& n : graph_.nodes) {
    if (n.name != node) continue;
    auto it = n.attrs.find("value");
    if (n.op != "Const" || it == n.attrs.end() || !std::holds_alternative<Tensor>(it->second)) {
      return errors::InvalidArgument("'", node, "' should be a Const node, not ", n.op);
    }
    return std::get<Tensor>(it->second);
  }
  return errors::NotFound("no node '", node, "'");
}

void TrainingSession::RequestStop(std::string why) {
  if (result_.stopped.empty()) result_.stopped = std::move(why);
}

Status TrainingSession::CallHooks(const std::function<Status(SessionHook&)>& call) {
  for (SessionHook* hook : hooks_) TFD_RETURN_IF_ERROR(call(*hook));
  return OkStatus();
}

StatusOr<SessionResult> TrainingSession::Run() {
  Status trained = Open();
  if (trained.ok()) {
    StatusOr<bool> stepped = true;
    while (stepped.ok() && *stepped) stepped = RunStep();
    trained = stepped.status();
  }
  return Close(std::move(trained));
}

Status TrainingSession::Open() {
  if (!Has(sig::kTrain)) {
    return errors::InvalidArgument("the graph has no '", sig::kTrain,
                                   "' op to run each step (see docs/training.md)");
  }
  result_ = SessionResult();
  steps_began_.reset();
  created_ = false;
  began_ = false;
  started_ = false;
  wait_end_ = WaitEnd::kDone;
  result_.chief = options_.chief.value_or(IsChief(client_->task(), client_->cluster()));
  // A sync chief runs its own step (which pushes, aggregates and lets the
  // replicas go on) instead of the replicas' one, and fetches its global step.
  const bool sync_chief = result_.chief && Has(sig::kChiefStep);
  step_op_ = sync_chief ? sig::kChiefStep : sig::kTrain;
  global_step_ = sync_chief && Has(sig::kChiefGlobalStep) ? sig::kChiefGlobalStep : sig::kGlobalStep;
  if (!Has(global_step_.c_str())) global_step_.clear();
  TFD_RETURN_IF_ERROR(CallHooks([this](SessionHook& h) { return h.Begin(*this); }));
  began_ = true;

  ForgetCallables();
  TFD_RETURN_IF_ERROR(client_->CreateSession(graph_, options_.step_timeout));
  created_ = true;
  TFD_RETURN_IF_ERROR(Start());
  started_ = true;
  return OkStatus();
}

StatusOr<SessionResult> TrainingSession::Close(Status trained) {
  if (started_ && result_.chief && !stopped_waiting()) {
    // Parked sync replicas get the final step, and stop.
    Status released = RunIfPresent(sig::kRelease, "releasing the sync replicas");
    if (trained.ok()) trained = released;
  }
  // Each hook's End sees the first error, its predecessors' included, so
  // that nothing is saved or evaluated after a failed final save. A Begin
  // that failed created no session: no End.
  for (SessionHook* hook : hooks_) {
    if (!began_) break;
    Status ended = hook->End(*this, trained);
    if (trained.ok()) trained = ended;
  }
  if (created_) (void)client_->CloseSession();
  created_ = false;
  began_ = false;
  started_ = false;
  if (!trained.ok()) return trained;
  return result_;
}

StatusOr<Client::CallableHandle> TrainingSession::CallableFor(const StepArgs& args) {
  // The common case, the same names as the step before, without a lookup.
  if (last_callable_ != nullptr && std::get<0>(last_callable_->first) == args.feed_names() &&
      std::get<1>(last_callable_->first) == args.fetches() &&
      std::get<2>(last_callable_->first) == args.targets()) {
    return last_callable_->second;
  }
  CallableKey key{args.feed_names(), args.fetches(), args.targets()};
  auto it = callables_.find(key);
  if (it == callables_.end()) {
    // Prepared once on the master; each step then sends no names at all.
    TFD_ASSIGN_OR_RETURN(Client::CallableHandle made,
                         client_->MakeCallable(args.feed_names(), args.fetches(), args.targets()));
    it = callables_.emplace(std::move(key), made).first;
  }
  last_callable_ = &*it;
  return it->second;
}

void TrainingSession::ForgetCallables() {
  callables_.clear();
  last_callable_ = nullptr;
}

StatusOr<bool> TrainingSession::RunStep() {
  StepArgs args;
  while (true) {
    args.Clear();
    if (!global_step_.empty()) args.AddFetch(global_step_);  // index 0
    args.AddTarget(step_op_);
    TFD_RETURN_IF_ERROR(CallHooks([&](SessionHook& h) { return h.BeforeRun(*this, args); }));
    if (stop_requested()) return false;
    auto callable = CallableFor(args);
    if (!steps_began_) steps_began_ = std::chrono::steady_clock::now();
    StatusOr<Client::RunOutput> ran = callable.ok()
                                          ? client_->RunCallable(*callable, args.feed_values(), {})
                                          : StatusOr<Client::RunOutput>(callable.status());
    if (!ran.ok()) {
      if (ran.status().code() == Code::kOutOfRange) {
        RequestStop("input exhausted");
        return false;
      }
      Status failure =
          ran.status().WithContext("step " + std::to_string(result_.local_steps + 1));
      if (!Recoverable(ran.status())) return failure;
      TFD_RETURN_IF_ERROR(RecoverFrom(std::move(failure)));
      if (stopped_waiting()) return false;  // the recovery was cut short by a stop
      continue;                             // the same step again, on the new session
    }
    ++result_.local_steps;
    TFD_RETURN_IF_ERROR(AfterStep(*ran));
    const StepValues values{ran->fetches};
    TFD_RETURN_IF_ERROR(CallHooks([&](SessionHook& h) { return h.AfterRun(*this, values); }));
    return true;
  }
}

// The step's global step, and what it says about restarts.
Status TrainingSession::AfterStep(const Client::RunOutput& out) {
  if (global_step_.empty()) return OkStatus();
  const auto global = static_cast<int64_t>(ScalarValue(out.fetches[0]));
  Status s;
  // A ps restarted between two steps may fail neither: its master
  // registered the step's graph there again and says so. The global step
  // going back is the sign a tfd too old to say gives.
  if (!out.restarted.empty()) s = WaitForCluster();
  if (s.ok() && (!restored_alone_.empty() || global < result_.global_step)) {
    s = RewindToCheckpoint(global);
  } else if (s.ok()) {
    result_.global_step = global;
  }
  if (Recoverable(s)) s = RecoverFrom(std::move(s));
  return s;
}

}  // namespace tfd::training
