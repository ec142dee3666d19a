#include "kernels/collective/ring_all_reduce.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "common/mutex.h"

namespace tfd::kernels {
namespace {

// A run's shared state: the transfers in flight hold it alive.
class Ring : public std::enable_shared_from_this<Ring> {
 public:
  Ring(Rendezvous& rendezvous, RingParams params, Tensor input, Tensor output,
       std::function<void(const Status&)> done);
  void Start(CancellationManager& step_cancellation);

 private:
  struct Segment {
    int64_t begin, end;
    int64_t size() const { return end - begin; }
  };
  int n() const { return params_.group_size(); }
  int Left() const { return (params_.rank + n() - 1) % n(); }
  int Right() const { return (params_.rank + 1) % n(); }
  Segment SegmentOf(int pipe, int segment) const;
  std::string Edge(const std::string& what) const;
  std::string PipeKey(int from, int pipe, int round) const;

  void Announce();
  void Arrived(int from, StatusOr<Tensor> notice);
  // Sends `carry` on and waits for the round's receive; past the last
  // round, starts the pipe pipes_in_flight further on.
  void StartRound(int pipe, int round, Tensor carry);
  // The round's receive is over: checks it, then forwards it (all-gather)
  // or merges it and starts the next round (params_.schedule or this
  // thread, by size).
  void Received(int pipe, int round, StatusOr<Tensor> received);
  void Reduce(int pipe, int round, Tensor received);
  void Gather(int pipe, int round, Tensor received);
  // Runs `work` here when it touches at most inline_bytes, else on
  // params_.schedule.
  void RunSized(size_t bytes, std::function<void()> work);
  int SegmentIndex(int round) const;
  void OpDone(const Status& s);
  void Finish();
  // `cause` with the run named, and the members never heard from.
  Status Describe(const Status& cause) EXCLUDES(mu_);

  Rendezvous& rendezvous_;
  const RingParams params_;
  const Tensor input_, output_;  // flat views
  const int64_t step_id_;
  const int pipes_;
  std::function<void(const Status&)> done_;
  CancellationManager cancellation_;  // this run's waits; the step's cancels it
  CancellationManager* step_cancellation_ = nullptr;
  std::optional<CancellationManager::Token> step_token_;

  Mutex mu_;
  int pending_ GUARDED_BY(mu_) = 0;
  Status first_error_ GUARDED_BY(mu_);
  std::vector<bool> arrived_ GUARDED_BY(mu_);
};

Tensor Flat(const Tensor& t) {
  auto flat = t.Reshaped(TensorShape({t.num_elements()}));
  return flat.ok() ? *flat : t;
}

int PipesFor(const RingParams& p, const Tensor& t) {
  const size_t per_pipe = std::max<size_t>(1, p.chunk_bytes) * p.group_size();
  return static_cast<int>(std::max<size_t>(1, (t.total_bytes() + per_pipe - 1) / per_pipe));
}

int Window(const RingParams& p) { return std::max(1, p.pipes_in_flight); }

Ring::Ring(Rendezvous& rendezvous, RingParams params, Tensor input, Tensor output,
           std::function<void(const Status&)> done)
    : rendezvous_(rendezvous),
      params_(std::move(params)),
      input_(Flat(input)),
      output_(Flat(output)),
      step_id_(RingAllReduce::StepId(params_.group_key, params_.instance_key,
                                     params_.invocation)),
      pipes_(PipesFor(params_, input)),
      done_(std::move(done)),
      arrived_(params_.group_size(), false) {
  arrived_[params_.rank] = true;
}

Ring::Segment Ring::SegmentOf(int pipe, int segment) const {
  const int64_t total = input_.num_elements();
  const int64_t pb = total * pipe / pipes_, pe = total * (pipe + 1) / pipes_;
  return Segment{pb + (pe - pb) * segment / n(), pb + (pe - pb) * (segment + 1) / n()};
}

std::string Ring::Edge(const std::string& what) const {
  return "collective:" + std::to_string(params_.group_key) + ":" +
         std::to_string(params_.instance_key) + ":" + std::to_string(params_.invocation) + ":" +
         what;
}

std::string Ring::PipeKey(int from, int pipe, int round) const {
  return Rendezvous::MakeKey(params_.devices[from], params_.devices[(from + 1) % n()],
                             Edge("p" + std::to_string(pipe) + "r" + std::to_string(round)));
}

void Ring::Start(CancellationManager& step_cancellation) {
  auto self = shared_from_this();
  step_token_ = step_cancellation.Register([self](const Status& why) {
    self->cancellation_.Cancel(why.ok() ? errors::Cancelled("step cancelled") : why);
  });
  if (!step_token_) {
    const Status why = step_cancellation.reason();
    done_(Describe(why.ok() ? errors::Cancelled("step cancelled") : why));
    return;
  }
  step_cancellation_ = &step_cancellation;
  {
    MutexLock lock(mu_);
    pending_ = 1;  // held until every transfer has started
  }
  Announce();
  for (int p = 0; p < std::min(pipes_, Window(params_)); ++p) {
    const Segment own = SegmentOf(p, params_.rank);
    StartRound(p, 0, input_.Slice(own.begin, own.end));
  }
  OpDone(OkStatus());
}

void Ring::Announce() {
  // [dtype, elements]: members that disagree fail instead of mixing bytes.
  const Tensor notice = Tensor::FromVector<int64_t>(
      {static_cast<int64_t>(input_.dtype()), input_.num_elements()});
  auto self = shared_from_this();
  for (int peer = 0; peer < n(); ++peer) {
    if (peer == params_.rank) continue;
    {
      MutexLock lock(mu_);
      pending_ += 2;
    }
    const std::string to = Rendezvous::MakeKey(params_.devices[params_.rank],
                                               params_.devices[peer], Edge("arrive"));
    rendezvous_.SendAsync(step_id_, to, notice, cancellation_,
                          [self](const Status& s) { self->OpDone(s); });
    const std::string from = Rendezvous::MakeKey(params_.devices[peer],
                                                 params_.devices[params_.rank], Edge("arrive"));
    rendezvous_.RecvAsync(step_id_, from, cancellation_, [self, peer](StatusOr<Tensor> t) {
      self->Arrived(peer, std::move(t));
    });
  }
}

void Ring::Arrived(int from, StatusOr<Tensor> notice) {
  if (!notice.ok()) return OpDone(notice.status());
  const Tensor& t = *notice;
  if (t.dtype() != DType::kInt64 || t.num_elements() != 2 ||
      t.data<int64_t>()[0] != static_cast<int64_t>(input_.dtype()) ||
      t.data<int64_t>()[1] != input_.num_elements()) {
    return OpDone(errors::InvalidArgument(
        "task ", params_.devices[from], " reduces another dtype or size than this member's ",
        input_.Describe(), " (", t.DebugString(), " as [dtype, elements])"));
  }
  {
    MutexLock lock(mu_);
    arrived_[from] = true;
  }
  OpDone(OkStatus());
}

void Ring::StartRound(int pipe, int round, Tensor carry) {
  if (round == 2 * (n() - 1)) {  // this pipe is done: the next one may start
    const int next = pipe + Window(params_);
    if (next >= pipes_) return;
    const Segment own = SegmentOf(next, params_.rank);
    return StartRound(next, 0, input_.Slice(own.begin, own.end));
  }
  {
    MutexLock lock(mu_);
    pending_ += 2;
  }
  auto self = shared_from_this();
  rendezvous_.SendAsync(step_id_, PipeKey(params_.rank, pipe, round), carry, cancellation_,
                        [self](const Status& s) { self->OpDone(s); });
  rendezvous_.RecvAsync(step_id_, PipeKey(Left(), pipe, round), cancellation_,
                        [self, pipe, round](StatusOr<Tensor> t) {
                          self->Received(pipe, round, std::move(t));
                        });
}

int Ring::SegmentIndex(int round) const {
  const int rank = params_.rank;
  return round >= n() - 1 ? (rank - (round - (n() - 1)) + 2 * n()) % n()
                          : (rank - round - 1 + 2 * n()) % n();
}

void Ring::Received(int pipe, int round, StatusOr<Tensor> received) {
  if (!received.ok()) return OpDone(received.status());
  const Segment seg = SegmentOf(pipe, SegmentIndex(round));
  if (received->dtype() != input_.dtype() || received->num_elements() != seg.size()) {
    return OpDone(errors::InvalidArgument("task ", params_.devices[Left()], " sent ",
                                          received->Describe(), " where ", seg.size(),
                                          " elements of ", DTypeName(input_.dtype()),
                                          " were expected"));
  }
  if (round >= n() - 1) return Gather(pipe, round, std::move(received).value());
  RunSized(received->total_bytes(), [self = shared_from_this(), pipe, round,
                                     t = std::move(received).value()]() mutable {
    self->Reduce(pipe, round, std::move(t));
  });
}

void Ring::RunSized(size_t bytes, std::function<void()> work) {
  if (!params_.schedule || bytes <= params_.inline_bytes) return work();
  params_.schedule(std::move(work));
}

void Ring::Reduce(int pipe, int round, Tensor received) {
  const Segment seg = SegmentOf(pipe, SegmentIndex(round));
  const char* mine =
      static_cast<const char*>(input_.raw_data()) + seg.begin * DTypeSize(input_.dtype());
  // The partial sum goes into the received buffer when no one else holds
  // it, else into the output's own place for the segment: that place is
  // written again only by the segment's final value in the all-gather,
  // which cannot come back before the next member has merged (read) what
  // is sent from it now. The last reduce round completes this member's
  // segment straight into the output, never written again.
  Tensor sum = round < n() - 2 && received.buffer_unshared()
                   ? received
                   : output_.Slice(seg.begin, seg.end);
  Merge(input_.dtype(), params_.merge, sum.raw_data(), received.raw_data(), mine, seg.size());
  if (round == n() - 2) Finalize(input_.dtype(), params_.final_op, sum.raw_data(), seg.size(), n());
  // The next round is counted before this one ends, so the run cannot
  // finish in between.
  StartRound(pipe, round + 1, std::move(sum));
  OpDone(OkStatus());
}

void Ring::Gather(int pipe, int round, Tensor received) {
  // Forwarded first, so the next member's wait does not include the copy;
  // both only read the received buffer.
  StartRound(pipe, round + 1, received);
  const Segment seg = SegmentOf(pipe, SegmentIndex(round));
  RunSized(received.total_bytes(), [self = shared_from_this(), seg, t = std::move(received)] {
    const size_t elem = DTypeSize(self->input_.dtype());
    if (seg.size() > 0) {
      std::memcpy(static_cast<char*>(self->output_.raw_data()) + seg.begin * elem, t.raw_data(),
                  seg.size() * elem);
    }
    self->OpDone(OkStatus());
  });
}

void Ring::OpDone(const Status& s) {
  bool cancel = false, finish = false;
  {
    MutexLock lock(mu_);
    if (!s.ok() && first_error_.ok()) {
      first_error_ = s;
      cancel = true;
    }
    finish = --pending_ == 0;
  }
  // The other waits end with the cancellation, each calling OpDone.
  if (cancel) cancellation_.Cancel(s);
  if (finish) Finish();
}

void Ring::Finish() {
  if (step_cancellation_ != nullptr) step_cancellation_->Deregister(*step_token_);
  Status result;
  {
    MutexLock lock(mu_);
    result = first_error_;
  }
  auto done = std::move(done_);
  done(result.ok() ? result : Describe(result));
}

Status Ring::Describe(const Status& cause) {
  std::string missing;
  MutexLock lock(mu_);
  for (int t = 0; t < n(); ++t) {
    if (!arrived_[t]) missing += (missing.empty() ? "" : ", ") + params_.devices[t];
  }
  std::string what = "CollectiveReduce '" + params_.node + "' (group_key " +
                     std::to_string(params_.group_key) + ", instance_key " +
                     std::to_string(params_.instance_key) + ", invocation " +
                     std::to_string(params_.invocation) + ", rank " +
                     std::to_string(params_.rank) + " of " + std::to_string(n()) + ")";
  if (!missing.empty()) what += " never heard from " + missing;
  return Status(cause.code(), what + ": " + cause.message()).WithDetails(cause.details());
}

}  // namespace

void RingAllReduce::Run(Rendezvous& rendezvous, CancellationManager& step_cancellation,
                        RingParams params, Tensor input, Tensor output,
                        std::function<void(const Status&)> done) {
  auto ring = std::make_shared<Ring>(rendezvous, std::move(params), std::move(input),
                                     std::move(output), std::move(done));
  ring->Start(step_cancellation);
}

int64_t RingAllReduce::StepId(int64_t group_key, int64_t instance_key, int64_t invocation) {
  // splitmix64 over the three: distinct invocations get distinct ids but
  // for a 2^-63 chance, and the keys name the three besides.
  auto mix = [](uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  const uint64_t h = mix(mix(mix(static_cast<uint64_t>(group_key)) ^
                             static_cast<uint64_t>(instance_key)) ^
                         static_cast<uint64_t>(invocation));
  return -1 - static_cast<int64_t>(h >> 1);
}

}  // namespace tfd::kernels
