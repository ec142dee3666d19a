#include "daemon/transport/data_plane.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <chrono>
#include <cstring>
#include <limits>
#include <random>
#include <set>

#include "common/tensor_proto.h"
#include "daemon/rpc/kj_status.h"
#include "schemas/transport.capnp.h"

namespace tfd {
namespace {

// The active-message ids of a pushed tensor and of a step message.
constexpr unsigned kPushMessage = 1;
constexpr unsigned kStepMessage = 2;
// A step message is well under a kilobyte, or a traced partition's nodes
// (about 150 bytes each).
constexpr size_t kMaxStepMessageBytes = 8 << 20;
constexpr size_t kTicketBytes = 16;
// A header is a few hundred bytes; anything near this is not one of ours.
constexpr size_t kMaxHeaderBytes = 64 << 10;
// How often held-back pushes look for room again.
constexpr kj::Duration kRetryEvery = 5 * kj::MILLISECONDS;
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

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// `bytes` copied into words, so a Cap'n Proto reader may read it whatever
// its alignment.
kj::Array<capnp::word> Aligned(const void* bytes, size_t size) {
  auto words = kj::heapArray<capnp::word>((size + sizeof(capnp::word) - 1) / sizeof(capnp::word));
  if (size > 0) std::memcpy(words.begin(), bytes, size);
  return words;
}

// A tensor sent as a serialized proto::Tensor (strings); `words` must be
// word-aligned.
StatusOr<Tensor> FromMessage(const void* words, size_t length) {
  StatusOr<Tensor> tensor = errors::Internal("unset");
  KJ_IF_MAYBE(e, kj::runCatchingExceptions([&]() {
    auto array = kj::arrayPtr(static_cast<const capnp::word*>(words), length / sizeof(capnp::word));
    // Decoding reads the elements twice (checked, then copied); the limit
    // only has to stop amplification beyond that.
    capnp::ReaderOptions limits;
    limits.traversalLimitInWords = array.size() * 4 + 64;
    capnp::FlatArrayMessageReader reader(array, limits);
    tensor = TensorFromProto(reader.getRoot<proto::Tensor>());
  })) {
    return errors::InvalidArgument("a malformed tensor message: ", e->getDescription().cStr());
  }
  return tensor;
}

kj::ArrayPtr<const capnp::byte> AsBytes(const std::string& s) {
  return kj::arrayPtr(reinterpret_cast<const capnp::byte*>(s.data()), s.size());
}

}  // namespace

struct DataPlane::Peer {
  DataPlane* plane = nullptr;
  std::string task;
  std::string ticket;  // the peer's, carried by every push to it
  ucp_ep_h ep = nullptr;
  bool watched = true;  // UCX reports the peer's failure (another host)
  std::string error;    // set once the endpoint failed
  std::set<SendOp*> sending;  // pushes UCX has not finished
};

// A push on its way out. Owns what UCX reads until the send completes.
struct DataPlane::SendOp {
  DataPlane* plane = nullptr;
  Peer* peer = nullptr;  // null once Disconnect failed the push
  kj::Own<kj::PromiseFulfiller<void>> done;
  kj::Array<capnp::word> header;
  Tensor tensor;                    // raw encoding: the bytes sent
  kj::Array<capnp::word> message;   // string tensors: their serialized form
  std::string task;
  size_t bytes = 0;
  kj::Maybe<UcxWorker::Activity> active;  // while UCX has it
};

// A rendezvous push whose bytes are still with the sender.
struct DataPlane::Incoming {
  int64_t step_id = 0;
  std::string key;
  std::string task;  // who pushed it
  std::string peer;  // the same, with where it connected from, for messages
  DType dtype = DType::kInvalid;
  TensorShape shape;
  void* descriptor = nullptr;  // UCX's, until ucp_am_recv_data_nbx takes it
  size_t length = 0;
  std::shared_ptr<Buffer> buffer;
  bool message = false;  // the buffer holds a serialized tensor (strings), not its bytes
  kj::TimePoint arrived = kj::origin<kj::TimePoint>();
};

DataPlane::DataPlane(UcxWorker& ucx, kj::Timer& timer, Options options, Deliver deliver,
                     std::shared_ptr<spdlog::logger> logger)
    : ucx_(ucx),
      timer_(timer),
      options_(options),
      deliver_(std::move(deliver)),
      logger_(std::move(logger)),
      errors_(logger_, "the data plane"),
      tasks_(errors_),
      pool_(BufferPool::Options{.max_cached_bytes = options.max_cached_bytes}) {
  ucp_am_handler_param_t handler{};
  handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                       UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  handler.id = kPushMessage;
  handler.cb = &DataPlane::OnMessage;
  handler.arg = this;
  handler.flags = UCP_AM_FLAG_WHOLE_MSG;
  ucs_status_t s = ucp_worker_set_am_recv_handler(ucx_.worker(), &handler);
  if (s != UCS_OK && logger_) {
    logger_->error("cannot receive pushed tensors: {}", UcxStatusString(s));
  }
  handler.id = kStepMessage;
  handler.cb = &DataPlane::OnStepMessageArrived;
  s = ucp_worker_set_am_recv_handler(ucx_.worker(), &handler);
  if (s != UCS_OK && logger_) {
    logger_->error("cannot receive step messages: {}", UcxStatusString(s));
  }
}

DataPlane::~DataPlane() {
  ucp_am_handler_param_t handler{};
  handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
  handler.cb = nullptr;
  for (unsigned id : {kPushMessage, kStepMessage}) {
    handler.id = id;
    (void)ucp_worker_set_am_recv_handler(ucx_.worker(), &handler);
  }
  for (auto& in : held_back_) ucp_am_data_release(ucx_.worker(), in->descriptor);
  held_back_.clear();
  for (auto& [task, peer] : peers_) {
    // Pushes that outlive this plane must not reach back into it.
    for (SendOp* op : peer->sending) op->peer = nullptr;
    peer->sending.clear();
    // An unwatched endpoint goes with the worker (forcing it could fault a
    // live peer, flushing it could wait forever on a dead one).
    if (peer->ep != nullptr && peer->watched) {
      ucp_request_param_t param{};
      param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = UCP_EP_CLOSE_FLAG_FORCE;
      void* request = ucp_ep_close_nbx(peer->ep, &param);
      if (UCS_PTR_IS_PTR(request)) {
        while (ucp_request_check_status(request) == UCS_INPROGRESS) ucp_worker_progress(ucx_.worker());
        ucp_request_free(request);
      }
    }
  }
}

DataPlane::Invitation DataPlane::Invite(const std::string& task, const std::string& where) {
  std::string ticket = NewTicket();
  tickets_[ticket] = Invited{task, where.empty() ? task : task + " (" + where + ")"};
  return Invitation{ucx_.address(), std::move(ticket), ucx_.host()};
}

void DataPlane::Revoke(const std::string& ticket) { tickets_.erase(ticket); }

Status DataPlane::Connect(const std::string& task, const Invitation& invitation) {
  if (invitation.address.empty() || invitation.ticket.size() != kTicketBytes) {
    return errors::InvalidArgument("the data-plane invitation from ", task, " is malformed");
  }
  if (options_.same_host_only && invitation.host != ucx_.host()) {
    const Status refused = errors::FailedPrecondition(
        "no data plane to ", task, ": it runs on another host, and with TLS on tensors are not "
        "sent between hosts in clear text (UCX does not encrypt; docs/operations.md, \"TLS\")");
    if (logger_) logger_->error("{}", refused.ToString());
    return refused;
  }
  Disconnect(task);
  auto peer = kj::heap<Peer>();
  peer->plane = this;
  peer->task = task;
  peer->ticket = invitation.ticket;
  // A neighbour is watched by the control plane, so that UCX may use shared
  // memory (see Connect in the header).
  peer->watched =
      !ucx_.may_share_memory() || invitation.host.empty() || invitation.host != ucx_.host();
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t*>(invitation.address.data());
  // A peer that dies fails our pushes to it, instead of leaving them pending.
  params.err_mode = peer->watched ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
  params.err_handler.cb = &DataPlane::OnEndpointError;
  params.err_handler.arg = peer.get();
  const ucs_status_t s = ucp_ep_create(ucx_.worker(), &params, &peer->ep);
  if (s != UCS_OK) {
    return errors::Unavailable("no data-plane endpoint to ", task, ": ", UcxStatusString(s));
  }
  if (logger_) {
    // Which transports carry it: UCX prints its lanes.
    char* text = nullptr;
    size_t size = 0;
    if (FILE* f = open_memstream(&text, &size)) {
      ucp_ep_print_info(peer->ep, f);
      std::fclose(f);
      std::string lanes;
      for (const char* p = text; p != nullptr && *p != '\0';) {
        const char* end = std::strchr(p, '\n');
        std::string line(p, end ? end - p : std::strlen(p));
        if (line.find("lane[") != std::string::npos) {
          lanes += (lanes.empty() ? "" : "; ") + line.substr(line.find("lane["));
        }
        p = end ? end + 1 : nullptr;
      }
      std::free(text);
      logger_->info("data plane to {} over UCX ({}, transports {}): {}", task,
                    peer->watched ? "watched by UCX" : "this host, watched by the control plane",
                    ucx_.transports(),
                    lanes.empty() ? std::string("lanes unknown") : lanes);
    }
  }
  peers_[task] = kj::mv(peer);
  ucx_.Progress();
  return OkStatus();
}

void DataPlane::Disconnect(const std::string& task) {
  auto it = peers_.find(task);
  if (it == peers_.end()) return;
  kj::Own<Peer> peer = kj::mv(it->second);
  peers_.erase(it);
  for (SendOp* op : peer->sending) {
    op->peer = nullptr;
    if (!peer->watched) ++stats_.pushes_abandoned;
    op->done->reject(KjFromStatus(errors::Unavailable(
        "pushing ", op->bytes, " bytes to ", peer->task, ": the connection to it went")));
  }
  peer->sending.clear();
  PeerGone(task, errors::Unavailable("the connection to ", task, " went"));
  if (peer->ep == nullptr) return;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = peer->watched ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  ucp_ep_h ep = peer->ep;
  peer->ep = nullptr;
  // The Peer stays alive until the close is issued: UCX may still report
  // the endpoint's failure to it until then.
  ucx_.RunAfterProgress([this, ep, param, peer = kj::mv(peer)]() mutable {
    void* request = ucp_ep_close_nbx(ep, &param);
    if (UCS_PTR_IS_PTR(request)) {
      // Let it finish in the background; freeing marks it for release.
      ucp_request_free(request);
    }
    peer = nullptr;
    ucx_.Progress();
  });
}

bool DataPlane::Connected(const std::string& task) const {
  auto it = peers_.find(task);
  return it != peers_.end() && it->second->ep != nullptr && it->second->error.empty();
}

void DataPlane::OnEndpointError(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* peer = static_cast<Peer*>(arg);
  peer->error = UcxStatusString(status);
  DataPlane* plane = peer->plane;
  if (plane->logger_) plane->logger_->warn("data plane to {} failed: {}", peer->task, peer->error);
  plane->ucx_.RunAfterProgress(
      [plane, task = peer->task, why = errors::Unavailable("the data plane to ", peer->task,
                                                           " failed: ", peer->error)] {
        plane->PeerGone(task, why);
      });
}

void DataPlane::PeerGone(const std::string& task, const Status& why) {
  if (on_peer_gone_) on_peer_gone_(task, why);
}

void DataPlane::SetStepHandlers(OnStepMessage on_message, OnPeerGone on_gone) {
  on_step_message_ = std::move(on_message);
  on_peer_gone_ = std::move(on_gone);
}

Status DataPlane::SendStepMessage(const std::string& task,
                                  const std::function<void(proto::StepMessage::Builder)>& fill) {
  auto it = peers_.find(task);
  if (it == peers_.end() || it->second->ep == nullptr) {
    return errors::Unavailable("no data-plane endpoint to ", task);
  }
  Peer& peer = *it->second;
  if (!peer.error.empty()) {
    return errors::Unavailable("the data plane to ", task, " failed: ", peer.error);
  }
  capnp::MallocMessageBuilder builder(64);
  auto message = builder.initRoot<proto::StepMessage>();
  fill(message);
  message.setTicket(AsBytes(peer.ticket));
  // Owned until UCX is done with it: by the callback when the send is queued.
  struct Sending {
    kj::Array<capnp::word> words;
    UcxWorker::Activity active;
  };
  auto sending = std::make_unique<Sending>(
      Sending{capnp::messageToFlatArray(builder), UcxWorker::Activity(ucx_)});
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                       UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_FLAGS;
  param.datatype = ucp_dt_make_contig(1);
  param.flags = UCP_AM_SEND_FLAG_EAGER;
  param.user_data = sending.get();
  param.cb.send = [](void* request, ucs_status_t, void* user_data) {
    // A failed send is the endpoint failing, which PeerGone reports.
    std::unique_ptr<Sending> done(static_cast<Sending*>(user_data));
    ucp_request_free(request);
  };
  const auto bytes = sending->words.asBytes();
  ucs_status_ptr_t request =
      ucp_am_send_nbx(peer.ep, kStepMessage, nullptr, 0, bytes.begin(), bytes.size(), &param);
  if (UCS_PTR_IS_ERR(request)) {
    return errors::Unavailable("sending a step message to ", task, " failed: ",
                               UcxStatusString(UCS_PTR_STATUS(request)));
  }
  ++stats_.step_messages_sent;
  if (request != nullptr) (void)sending.release();  // the callback owns it now
  ucx_.Progress();
  return OkStatus();
}

ucs_status_t DataPlane::OnStepMessageArrived(void* arg, const void*, size_t header_length,
                                             void* data, size_t length,
                                             const ucp_am_recv_param_t* param) {
  auto* plane = static_cast<DataPlane*>(arg);
  if (header_length != 0) {
    plane->Refuse("it came with a header", true);
    return (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0 ? UCS_ERR_REJECTED : UCS_OK;
  }
  return plane->ReceiveStepMessage(data, length, param);
}

ucs_status_t DataPlane::ReceiveStepMessage(const void* data, size_t length,
                                           const ucp_am_recv_param_t* param) {
  // Ours are small and sent eagerly: anything else is refused unread.
  const bool rendezvous = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
  if (rendezvous || length > kMaxStepMessageBytes || length == 0) {
    Refuse(errors::StrCat(length, " bytes", rendezvous ? " by rendezvous" : "",
                          "; a step message is 1 to ", kMaxStepMessageBytes,
                          " bytes, sent eagerly"),
           true);
    return rendezvous ? UCS_ERR_REJECTED : UCS_OK;
  }
  // Read once UCX's progress has returned: the handler may start work that
  // posts to UCX. The bytes are copied now; UCX reuses them after this.
  ucx_.RunAfterProgress([this, words = Aligned(data, length)]() mutable {
    std::string from;
    KJ_IF_MAYBE(e, kj::runCatchingExceptions([&]() {
      capnp::ReaderOptions limits;
      limits.traversalLimitInWords = words.size();
      limits.nestingLimit = 4;
      capnp::FlatArrayMessageReader reader(words, limits);
      auto message = reader.getRoot<proto::StepMessage>();
      auto ticket = message.getTicket();
      auto who = tickets_.find(
          std::string(reinterpret_cast<const char*>(ticket.begin()), ticket.size()));
      if (who == tickets_.end()) {
        Refuse("a ticket this task did not give out", true);
        return;
      }
      from = who->second.label;
      ++stats_.step_messages_received;
      if (on_step_message_) on_step_message_(who->second.task, message);
    })) {
      Refuse(std::string("malformed") + (from.empty() ? "" : " from " + from) + ": " +
                 e->getDescription().cStr(),
             true);
    }
  });
  return UCS_OK;
}

kj::Promise<void> DataPlane::Push(const std::string& task, int64_t step_id,
                                  const std::string& key, const Tensor& tensor) {
  auto it = peers_.find(task);
  if (it == peers_.end() || it->second->ep == nullptr) {
    return KjFromStatus(errors::Unavailable("no data-plane endpoint to ", task));
  }
  Peer& peer = *it->second;
  if (!peer.error.empty()) {
    return KjFromStatus(errors::Unavailable("the data plane to ", task, " failed: ", peer.error));
  }
  auto op = std::make_unique<SendOp>();
  op->plane = this;
  op->peer = &peer;
  op->task = task;
  capnp::MallocMessageBuilder header;
  auto push = header.initRoot<proto::TensorPush>();
  push.setTicket(AsBytes(peer.ticket));
  push.setStepId(step_id);
  push.setKey(key);
  push.setDtype(DTypeToProto(tensor.dtype()));
  auto shape = push.initShape(tensor.rank());
  for (int i = 0; i < tensor.rank(); ++i) shape.set(i, tensor.dim(i));
  push.setSentMicros(NowMicros());
  const void* data = nullptr;
  if (tensor.dtype() == DType::kString) {
    push.setEncoding(proto::TensorPush::Encoding::TENSOR_MESSAGE);
    capnp::MallocMessageBuilder message;
    TensorToProto(tensor, message.initRoot<proto::Tensor>());
    op->message = capnp::messageToFlatArray(message);
    data = op->message.begin();
    op->bytes = op->message.asBytes().size();
  } else {
    push.setEncoding(proto::TensorPush::Encoding::RAW);
    op->tensor = tensor;  // sent from its own buffer, kept alive until sent
    data = tensor.raw_data();
    op->bytes = tensor.total_bytes();
  }
  op->header = capnp::messageToFlatArray(header);

  auto paf = kj::newPromiseAndFulfiller<void>();
  op->done = kj::mv(paf.fulfiller);
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE;
  param.datatype = ucp_dt_make_contig(1);
  param.user_data = op.get();
  param.cb.send = [](void* request, ucs_status_t status, void* user_data) {
    std::unique_ptr<SendOp> op(static_cast<SendOp*>(user_data));
    DataPlane* plane = op->plane;
    if (op->peer == nullptr) {
      // Disconnect failed it already; UCX is done with the buffer now.
    } else if (op->peer->sending.erase(op.get()), status == UCS_OK) {
      ++plane->stats_.pushes_sent;
      plane->stats_.bytes_sent += op->bytes;
      plane->traffic_[op->task].bytes_sent += op->bytes;
      op->done->fulfill();
    } else {
      op->done->reject(KjFromStatus(errors::Unavailable(
          "pushing ", op->bytes, " bytes to ", op->task, " failed: ", UcxStatusString(status))));
    }
    ucp_request_free(request);
  };
  const auto bytes = op->header.asBytes();
  SendOp* raw = op.get();
  ucs_status_ptr_t request = ucp_am_send_nbx(peer.ep, kPushMessage, bytes.begin(), bytes.size(),
                                             data, raw->bytes, &param);
  if (request == nullptr) {  // done at once; the callback does not run
    ++stats_.pushes_sent;
    stats_.bytes_sent += raw->bytes;
    traffic_[task].bytes_sent += raw->bytes;
    return kj::READY_NOW;
  }
  if (UCS_PTR_IS_ERR(request)) {
    return KjFromStatus(errors::Unavailable("pushing to ", task, " failed: ",
                                            UcxStatusString(UCS_PTR_STATUS(request))));
  }
  peer.sending.insert(raw);
  raw->active = UcxWorker::Activity(ucx_);
  (void)op.release();  // the callback owns it now
  ucx_.Progress();
  return kj::mv(paf.promise);
}

ucs_status_t DataPlane::OnMessage(void* arg, const void* header, size_t header_length, void* data,
                                  size_t length, const ucp_am_recv_param_t* param) {
  return static_cast<DataPlane*>(arg)->Receive(header, header_length, data, length, param);
}

void DataPlane::Refuse(const std::string& why, bool step_message) {
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

ucs_status_t DataPlane::Receive(const void* header, size_t header_length, void* data,
                                size_t length, const ucp_am_recv_param_t* param) {
  const bool rendezvous = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
  if (header_length == 0 || header_length > kMaxHeaderBytes) {
    Refuse("a header of " + std::to_string(header_length) + " bytes");
    return rendezvous ? UCS_ERR_REJECTED : UCS_OK;
  }
  auto words = Aligned(header, header_length);
  auto in = kj::heap<Incoming>();
  proto::TensorPush::Encoding encoding = proto::TensorPush::Encoding::RAW;
  Status parsed;
  std::string peer;
  KJ_IF_MAYBE(e, kj::runCatchingExceptions([&]() {
    capnp::ReaderOptions limits;
    limits.traversalLimitInWords = words.size();
    limits.nestingLimit = 8;
    capnp::FlatArrayMessageReader reader(words, limits);
    auto push = reader.getRoot<proto::TensorPush>();
    auto ticket = push.getTicket();
    auto who = tickets_.find(std::string(reinterpret_cast<const char*>(ticket.begin()),
                                         ticket.size()));
    if (who == tickets_.end()) {
      parsed = errors::Unauthenticated("a push with a ticket this task did not give out");
      return;
    }
    peer = who->second.label;
    in->task = who->second.task;
    in->step_id = push.getStepId();
    in->key = push.getKey();
    in->peer = peer;
    encoding = push.getEncoding();
    auto dtype = DTypeFromProto(push.getDtype());
    if (!dtype.ok()) {
      parsed = dtype.status();
      return;
    }
    in->dtype = *dtype;
    std::vector<int64_t> dims;
    for (int64_t d : push.getShape()) dims.push_back(d);
    auto shape = TensorShape::Make(std::move(dims));
    if (!shape.ok()) {
      parsed = shape.status();
      return;
    }
    in->shape = std::move(shape).value();
  })) {
    parsed = errors::InvalidArgument("a malformed header: ", e->getDescription().cStr());
  }
  if (!parsed.ok()) {
    Refuse(parsed.message() + (peer.empty() ? "" : " from " + peer));
    return rendezvous ? UCS_ERR_REJECTED : UCS_OK;
  }
  const std::string what = "tensor '" + in->key + "' of step " + std::to_string(in->step_id) +
                           " from " + peer;
  in->length = length;
  const bool raw = encoding == proto::TensorPush::Encoding::RAW;
  if (raw) {
    // The shape must account for exactly the bytes that come with it.
    const int64_t n = in->shape.num_elements();
    const size_t size = DTypeSize(in->dtype);
    if (in->dtype == DType::kString || n < 0 || size == 0 ||
        static_cast<uint64_t>(n) > std::numeric_limits<uint64_t>::max() / size ||
        static_cast<uint64_t>(n) * size != length) {
      Refuse(errors::StrCat(what, ": ", length, " bytes for ", DTypeName(in->dtype),
                            in->shape.ToString()));
      return rendezvous ? UCS_ERR_REJECTED : UCS_OK;
    }
  }
  if (length > options_.max_held_bytes) {
    const Status too_big = errors::ResourceExhausted(
        what, " is ", length, " bytes, more than the ", options_.max_held_bytes,
        " this task may hold of received tensors (--max-received-bytes)");
    Refuse(too_big.message());
    ucx_.RunAfterProgress([this, step = in->step_id, key = in->key, too_big] {
      deliver_(step, key, too_big);
    });
    return rendezvous ? UCS_ERR_NO_MEMORY : UCS_OK;
  }

  if (!rendezvous) {
    // Eager: the bytes are here already, and small; copy them out.
    StatusOr<Tensor> tensor = errors::Internal("unset");
    if (raw) {
      tensor = Tensor::Allocate(in->dtype, in->shape);
      if (tensor.ok() && length > 0) std::memcpy(tensor->raw_data(), data, length);
    } else {
      tensor = FromMessage(Aligned(data, length).begin(), length);
    }
    ++stats_.pushes_received;
    stats_.bytes_received += length;
    traffic_[in->task].bytes_received += length;
    ucx_.RunAfterProgress([this, step = in->step_id, key = in->key, t = std::move(tensor)]() mutable {
      deliver_(step, key, std::move(t));
    });
    return UCS_OK;
  }
  in->message = !raw;
  in->descriptor = data;
  in->arrived = timer_.now();
  if (pool_.stats().bytes_in_use + BufferPool::BlockSize(length) > options_.max_held_bytes) {
    ++stats_.held_back;
    held_back_.add(kj::mv(in));
    if (!retrying_) {
      retrying_ = true;
      tasks_.add(timer_.afterDelay(kRetryEvery).then([this] { RetryHeldBack(); }));
    }
    return UCS_INPROGRESS;
  }
  // Receives start once UCX's progress has returned (not from its callback).
  ucx_.RunAfterProgress([this, in = kj::mv(in)]() mutable { StartReceive(kj::mv(in)); });
  return UCS_INPROGRESS;
}

void DataPlane::RetryHeldBack() {
  retrying_ = false;
  kj::Vector<kj::Own<Incoming>> still;
  const kj::TimePoint now = timer_.now();
  for (auto& in : held_back_) {
    if (pool_.stats().bytes_in_use + BufferPool::BlockSize(in->length) <= options_.max_held_bytes) {
      StartReceive(kj::mv(in));
    } else if (now - in->arrived >= options_.hold_timeout) {
      const Status full = errors::ResourceExhausted(
          "tensor '", in->key, "' of step ", in->step_id, " from ", in->peer, " (", in->length,
          " bytes) waited ", options_.hold_timeout / kj::SECONDS, " s for room: this task holds ",
          pool_.stats().bytes_in_use, " bytes of received tensors, at most ",
          options_.max_held_bytes, " (--max-received-bytes)");
      Refuse(full.message());
      ucp_am_data_release(ucx_.worker(), in->descriptor);
      deliver_(in->step_id, in->key, full);
    } else {
      still.add(kj::mv(in));
    }
  }
  held_back_ = kj::mv(still);
  if (!held_back_.empty()) {
    retrying_ = true;
    tasks_.add(timer_.afterDelay(kRetryEvery).then([this] { RetryHeldBack(); }));
  }
  ucx_.Progress();
}

void DataPlane::StartReceive(kj::Own<Incoming> in) {
  auto buffer = pool_.Get(in->length);
  if (!buffer.ok()) {
    Refuse(buffer.status().message());
    ucp_am_data_release(ucx_.worker(), in->descriptor);
    deliver_(in->step_id, in->key, buffer.status());
    return;
  }
  in->buffer = std::move(buffer).value();
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE;
  param.datatype = ucp_dt_make_contig(1);
  struct Receiving {
    DataPlane* plane;
    kj::Own<Incoming> in;
    UcxWorker::Activity active;
  };
  auto receiving =
      std::make_unique<Receiving>(Receiving{this, kj::mv(in), UcxWorker::Activity(ucx_)});
  param.user_data = receiving.get();
  param.cb.recv_am = [](void* request, ucs_status_t status, size_t, void* user_data) {
    std::unique_ptr<Receiving> r(static_cast<Receiving*>(user_data));
    r->plane->Finish(kj::mv(r->in), status);
    ucp_request_free(request);
  };
  Incoming& ref = *receiving->in;
  ucs_status_ptr_t request = ucp_am_recv_data_nbx(ucx_.worker(), ref.descriptor,
                                                  ref.buffer->data(), ref.length, &param);
  if (request == nullptr) {
    Finish(kj::mv(receiving->in), UCS_OK);
    return;
  }
  if (UCS_PTR_IS_ERR(request)) {
    Finish(kj::mv(receiving->in), UCS_PTR_STATUS(request));
    return;
  }
  (void)receiving.release();  // the callback owns it now
}

void DataPlane::Finish(kj::Own<Incoming> in, ucs_status_t status) {
  StatusOr<Tensor> tensor = errors::Internal("unset");
  if (status == UCS_OK) {
    ++stats_.pushes_received;
    stats_.bytes_received += in->length;
    traffic_[in->task].bytes_received += in->length;
    tensor = in->message ? FromMessage(in->buffer->data(), in->length)
                         : Tensor::FromBuffer(in->dtype, in->shape, in->buffer);
  } else {
    tensor = errors::Unavailable("receiving tensor '", in->key, "' of step ", in->step_id,
                                 " from ", in->peer, " failed: ", UcxStatusString(status));
  }
  ucx_.RunAfterProgress([this, step = in->step_id, key = in->key, t = std::move(tensor)]() mutable {
    deliver_(step, key, std::move(t));
  });
}

DataPlane::Stats DataPlane::stats() const {
  Stats s = stats_;
  s.pool = pool_.stats();
  return s;
}

}  // namespace tfd
