#include "daemon/transport/data_plane.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "daemon/transport/stream_link.h"
#include "daemon/transport/stream_receiver.h"
#include "daemon/transport/ucx_link.h"
#include "daemon/transport/ucx_receiver.h"
#include "daemon/transport/ucx_worker.h"

namespace tfd {
namespace {

constexpr size_t kTicketBytes = 16;
// Refusals logged before they are only counted (a flood of junk must not
// fill the log).
constexpr uint64_t kMaxRefusalsLogged = 20;

std::string NewTicket() {
  std::random_device random;
  std::string ticket(kTicketBytes, '\0');
  for (size_t i = 0; i < kTicketBytes; i += 4) {
    const uint32_t r = random();
    std::memcpy(ticket.data() + i, &r, 4);
  }
  return ticket;
}

}  // namespace

DataPlane::DataPlane(UcxWorker* ucx, kj::Timer& timer, Options options, Deliver deliver,
                     std::shared_ptr<spdlog::logger> logger)
    : ucx_(ucx),
      timer_(timer),
      options_(options),
      deliver_(std::move(deliver)),
      logger_(std::move(logger)),
      room_(timer, ReceiveRoom::Options{.max_held_bytes = options.max_held_bytes,
                                        .hold_timeout = options.hold_timeout,
                                        .max_cached_bytes = options.max_cached_bytes}),
      errors_(logger_, "the data plane"),
      deferred_(errors_) {
  options_.eager_bytes = std::min(options_.eager_bytes, stream::kMaxEagerBytes);
  if (ucx_ != nullptr) {
    ucx_receiver_ = std::make_unique<UcxReceiver>(
        *ucx_, timer_, room_, sink(),
        [this](const std::string& ticket) -> std::optional<std::string> {
          auto it = tickets_.find(ticket);
          if (it == tickets_.end()) return std::nullopt;
          return it->second.task;
        });
  }
}

DataPlane::~DataPlane() {
  // Links first: pushes that outlive the plane must not reach back into it.
  links_.clear();
  ucx_receiver_.reset();
}

DataPlane::Invitation DataPlane::Invite(const std::string& task, const std::string& where) {
  std::string ticket = NewTicket();
  tickets_[ticket] = Invited{task, where.empty() ? task : task + " (" + where + ")"};
  if (ucx_ == nullptr) return Invitation{"", std::move(ticket), ""};
  return Invitation{ucx_->address(), std::move(ticket), ucx_->host()};
}

void DataPlane::Revoke(const std::string& ticket) { tickets_.erase(ticket); }

bool DataPlane::SharesMemory(const Invitation& invitation) const {
  return ucx_ != nullptr && !invitation.address.empty() && !invitation.host.empty() &&
         invitation.host == ucx_->host();
}

Status DataPlane::ConnectShared(const std::string& task, const Invitation& invitation) {
  if (!SharesMemory(invitation)) {
    return errors::InvalidArgument("the data-plane invitation from ", task,
                                   " is not one for shared memory with this task");
  }
  if (invitation.ticket.size() != kTicketBytes) {
    return errors::InvalidArgument("the data-plane invitation from ", task, " is malformed");
  }
  TFD_ASSIGN_OR_RETURN(auto link, UcxLink::Connect(*ucx_, sink(), task, invitation.address,
                                                   invitation.ticket, logger_));
  SetLink(task, std::move(link));
  return OkStatus();
}

kj::Promise<void> DataPlane::ConnectStream(const std::string& task,
                                           kj::Own<kj::AsyncIoStream> stream,
                                           const stream::Hello& hello, bool tls) {
  kj::AsyncIoStream& s = *stream;
  return stream::SendHello(s, hello)
      .then([&s]() { return stream::ReceiveWelcome(s); })
      .then([this, task, tls, stream = kj::mv(stream)](stream::Welcome welcome) mutable {
        if (logger_) {
          logger_->info("data plane to {} over a stream{}; tensors over {} bytes wait for room",
                        task, tls ? " (TLS)" : "", welcome.eager_bytes);
        }
        SetLink(task, std::make_unique<StreamLink>(sink(), task, kj::mv(stream), welcome, tls));
      });
}

stream::Welcome DataPlane::Welcome() const {
  return stream::Welcome{.status = OkStatus(), .eager_bytes = options_.eager_bytes};
}

kj::Promise<Status> DataPlane::ServeStream(const std::string& task,
                                           kj::Own<kj::AsyncIoStream> stream, bool tls) {
  kj::AsyncIoStream& s = *stream;
  const kj::Maybe<int> socket = tls ? nullptr : s.getFd();
  auto receiver =
      kj::heap<StreamReceiver>(room_, sink(), task, kj::mv(stream), socket, options_.eager_bytes);
  StreamReceiver* r = receiver.get();
  ++stats_.streams_served;
  // Whether the stream ended or its server dropped it: Reply must not find
  // a receiver that is gone.
  auto unserved = kj::defer([this, task, r]() {
    --stats_.streams_served;
    auto it = served_.find(task);
    if (it != served_.end() && it->second == r) served_.erase(it);
  });
  return stream::SendWelcome(s, Welcome())
      .then([this, task, r]() {
        served_[task] = r;
        return r->Run();
      })
      .catch_([](kj::Exception&& e) { return StatusFromKj(e); })
      .attach(kj::mv(receiver), kj::mv(unserved));
}

void DataPlane::SetLink(const std::string& task, std::unique_ptr<Link> link) {
  Disconnect(task);
  links_[task] = std::move(link);
}

Link* DataPlane::Find(const std::string& task) const {
  auto it = links_.find(task);
  return it == links_.end() ? nullptr : it->second.get();
}

void DataPlane::Disconnect(const std::string& task) {
  auto it = links_.find(task);
  if (it == links_.end()) return;
  std::unique_ptr<Link> link = std::move(it->second);
  links_.erase(it);
  const Status gone = errors::Unavailable("the connection to ", task, " went");
  link->Close(gone);
  PeerGone(task, gone);
}

bool DataPlane::Connected(const std::string& task) const {
  const Link* link = Find(task);
  return link != nullptr && link->failure().ok();
}

std::string DataPlane::LinkKind(const std::string& task) const {
  const Link* link = Find(task);
  return link == nullptr ? "" : link->kind();
}

std::string DataPlane::transports() const {
  return ucx_ != nullptr ? "shared memory (UCX) and streams" : "streams";
}

kj::Promise<void> DataPlane::Push(const std::string& task, int64_t step_id,
                                  const std::string& key, const Tensor& tensor) {
  Link* link = Find(task);
  if (link == nullptr) return KjFromStatus(errors::Unavailable("no data-plane link to ", task));
  return link->Push(step_id, key, tensor);
}

void DataPlane::SetStepHandlers(OnStepMessage on_message, OnPeerGone on_gone) {
  on_step_message_ = std::move(on_message);
  on_peer_gone_ = std::move(on_gone);
}

void DataPlane::SetOnLinkLost(std::function<void(const std::string& task)> on_lost) {
  on_link_lost_ = std::move(on_lost);
}

Status DataPlane::SendStepMessage(const std::string& task, const StepMessage& message) {
  Link* link = Find(task);
  if (link == nullptr) return errors::Unavailable("no data-plane link to ", task);
  return link->SendStepMessage(message);
}

Status DataPlane::Reply(const std::string& task, const StepMessage& message) {
  if (auto it = served_.find(task); it != served_.end()) {
    const Status sent = it->second->SendStepMessage(message);
    if (sent.code() != Code::kUnavailable) return sent;
  }
  return SendStepMessage(task, message);
}

void DataPlane::PeerGone(const std::string& task, const Status& why) {
  if (on_peer_gone_) on_peer_gone_(task, why);
}

void DataPlane::Sent(const std::string& task, uint64_t bytes) {
  ++stats_.pushes_sent;
  stats_.bytes_sent += bytes;
  traffic_[task].bytes_sent += bytes;
}

void DataPlane::StepMessageSent() { ++stats_.step_messages_sent; }

void DataPlane::Abandoned(uint64_t pushes) { stats_.pushes_abandoned += pushes; }

void DataPlane::Received(const std::string& task, int64_t step_id, const std::string& key,
                         StatusOr<Tensor> tensor, uint64_t bytes) {
  if (tensor.ok()) {
    ++stats_.pushes_received;
    stats_.bytes_received += bytes;
    traffic_[task].bytes_received += bytes;
  }
  deliver_(step_id, key, std::move(tensor));
}

void DataPlane::StepReceived(const std::string& task, const StepMessage& message) {
  ++stats_.step_messages_received;
  if (on_step_message_) on_step_message_(task, message);
}

void DataPlane::Refused(const std::string& why, bool step_message) {
  ++(step_message ? stats_.step_messages_refused : stats_.pushes_refused);
  if (!logger_) return;
  const char* what = step_message ? "a step message" : "a pushed tensor";
  if (refusals_logged_ < kMaxRefusalsLogged) {
    logger_->warn("refused {}: {}", what, why);
  } else if (refusals_logged_ == kMaxRefusalsLogged) {
    logger_->warn("refused {}: {} (further refusals are only counted)", what, why);
  }
  ++refusals_logged_;
}

void DataPlane::LinkFailed(const std::string& task, const Status& why) {
  if (logger_) logger_->warn("data plane to {} failed: {}", task, why.message());
  // Not from inside the link's own callbacks: dropping it there would
  // destroy the promise that is running.
  deferred_.add(kj::evalLater([this, task, why]() {
    auto it = links_.find(task);
    if (it == links_.end() || it->second->failure().ok()) return;  // replaced meanwhile
    links_.erase(it);
    PeerGone(task, why);
    if (on_link_lost_) on_link_lost_(task);
  }));
}

DataPlane::Stats DataPlane::stats() const {
  Stats s = stats_;
  s.pool = room_.pool_stats();
  s.held_back = room_.held_back();
  return s;
}

}  // namespace tfd
