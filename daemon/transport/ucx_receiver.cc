#include "daemon/transport/ucx_receiver.h"

#include <cstring>

#include "daemon/rpc/kj_status.h"
#include "daemon/transport/push_header.h"
#include "daemon/transport/step_messages.h"
#include "daemon/transport/ucx_messages.h"

namespace tfd {
namespace {

std::string What(const PushHeader& h, const std::string& task) {
  return "tensor '" + h.key + "' of step " + std::to_string(h.step_id) + " from " + task;
}

}  // namespace

// A push whose header was accepted; for a rendezvous, its bytes are still
// with the sender.
struct UcxReceiver::Incoming {
  PushHeader header;
  std::string task;  // who pushed it
  void* descriptor = nullptr;  // UCX's, until ucp_am_recv_data_nbx takes it
  size_t length = 0;
  std::shared_ptr<Buffer> buffer;
};

UcxReceiver::UcxReceiver(UcxWorker& ucx, kj::Timer& timer, ReceiveRoom& room, PlaneSink& sink,
                         TicketOwner owner)
    : ucx_(ucx),
      timer_(timer),
      room_(room),
      sink_(sink),
      owner_(std::move(owner)),
      errors_(nullptr, "a shared-memory receive"),
      waiting_(errors_) {
  ucp_am_handler_param_t handler{};
  handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                       UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  handler.arg = this;
  handler.flags = UCP_AM_FLAG_WHOLE_MSG;
  handler.id = kUcxPushMessage;
  handler.cb = &UcxReceiver::OnPush;
  ucs_status_t s = ucp_worker_set_am_recv_handler(ucx_.worker(), &handler);
  if (s != UCS_OK) sink_.Refused("cannot receive pushed tensors: " + UcxStatusString(s), false);
  handler.id = kUcxStepMessage;
  handler.cb = &UcxReceiver::OnStep;
  s = ucp_worker_set_am_recv_handler(ucx_.worker(), &handler);
  if (s != UCS_OK) sink_.Refused("cannot receive step messages: " + UcxStatusString(s), true);
}

UcxReceiver::~UcxReceiver() {
  ucp_am_handler_param_t handler{};
  handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
  handler.cb = nullptr;
  for (unsigned id : {kUcxPushMessage, kUcxStepMessage}) {
    handler.id = id;
    (void)ucp_worker_set_am_recv_handler(ucx_.worker(), &handler);
  }
}

ucs_status_t UcxReceiver::OnPush(void* arg, const void* header, size_t header_length, void* data,
                                 size_t length, const ucp_am_recv_param_t* param) {
  const bool rendezvous = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
  return static_cast<UcxReceiver*>(arg)->ReceivePush(header, header_length, data, length,
                                                     rendezvous);
}

ucs_status_t UcxReceiver::OnStep(void* arg, const void*, size_t header_length, void* data,
                                 size_t length, const ucp_am_recv_param_t* param) {
  auto* self = static_cast<UcxReceiver*>(arg);
  const bool rendezvous = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
  if (header_length != 0) {
    self->sink_.Refused("it came with a header", true);
    return rendezvous ? UCS_ERR_REJECTED : UCS_OK;
  }
  return self->ReceiveStep(data, length, rendezvous);
}

ucs_status_t UcxReceiver::ReceiveStep(const void* data, size_t length, bool rendezvous) {
  // Ours are small and sent eagerly: anything else is refused unread.
  if (rendezvous || length > kMaxStepMessageBytes || length == 0) {
    sink_.Refused(errors::StrCat(length, " bytes", rendezvous ? " by rendezvous" : "",
                                 "; a step message is 1 to ", kMaxStepMessageBytes,
                                 " bytes, sent eagerly"),
                  true);
    return rendezvous ? UCS_ERR_REJECTED : UCS_OK;
  }
  // Read once UCX's progress has returned: the handler may start work that
  // posts to UCX. The bytes are copied now; UCX reuses them after this.
  ucx_.RunAfterProgress([this, words = AlignedWords(data, length)]() mutable {
    auto received = DecodeStepMessage(words);
    if (!received.ok()) {
      sink_.Refused(received.status().message(), true);
      return;
    }
    auto owner = owner_(received->ticket);
    if (!owner) {
      sink_.Refused("a ticket this task did not give out", true);
      return;
    }
    sink_.StepReceived(*owner, received->message);
  });
  return UCS_OK;
}

ucs_status_t UcxReceiver::ReceivePush(const void* header, size_t header_length, void* data,
                                      size_t length, bool rendezvous) {
  if (header_length == 0 || header_length > kMaxPushHeaderBytes) {
    sink_.Refused("a header of " + std::to_string(header_length) + " bytes", false);
    return rendezvous ? UCS_ERR_REJECTED : UCS_OK;
  }
  auto decoded = DecodePushHeader(AlignedWords(header, header_length));
  if (!decoded.ok()) {
    sink_.Refused(decoded.status().message(), false);
    return rendezvous ? UCS_ERR_REJECTED : UCS_OK;
  }
  auto owner = owner_(decoded->ticket);
  if (!owner) {
    sink_.Refused("a push with a ticket this task did not give out", false);
    return rendezvous ? UCS_ERR_REJECTED : UCS_OK;
  }
  auto in = kj::heap<Incoming>();
  in->header = std::move(decoded).value();
  in->task = *owner;
  in->length = length;
  if (Status ok = CheckPayload(in->header, length); !ok.ok()) {
    sink_.Refused(ok.message() + " from " + in->task, false);
    return rendezvous ? UCS_ERR_REJECTED : UCS_OK;
  }
  if (length > room_.options().max_held_bytes) {
    // Refused at once, so that the sender's push fails too.
    const Status too_big = room_.TakeNow(length, What(in->header, in->task)).status();
    sink_.Refused(too_big.message(), false);
    ucx_.RunAfterProgress([this, task = in->task, step = in->header.step_id,
                           key = in->header.key, too_big] {
      sink_.Received(task, step, key, too_big, 0);
    });
    return rendezvous ? UCS_ERR_NO_MEMORY : UCS_OK;
  }
  if (!rendezvous) {
    // Eager: the bytes are here already, and small; copy them out.
    ReceiveEager(*in, data);
    return UCS_OK;
  }
  in->descriptor = data;
  const std::string what = What(in->header, in->task);
  // Waits for room (back-pressure) off UCX's progress engine.
  ucx_.RunAfterProgress([this, in = kj::mv(in), what]() mutable {
    auto room = room_.Reserve(in->length, what)
                    .then([](std::shared_ptr<Buffer> b) -> StatusOr<std::shared_ptr<Buffer>> { return b; },
                          [](kj::Exception&& e) -> StatusOr<std::shared_ptr<Buffer>> {
                            return StatusFromKj(e);
                          });
    waiting_.add(room.then([this, in = kj::mv(in)](StatusOr<std::shared_ptr<Buffer>> buffer) mutable {
      if (buffer.ok()) {
        StartReceive(kj::mv(in), std::move(buffer).value());
        return;
      }
      sink_.Refused(buffer.status().message(), false);
      ucp_am_data_release(ucx_.worker(), in->descriptor);
      sink_.Received(in->task, in->header.step_id, in->header.key, buffer.status(), 0);
    }));
  });
  return UCS_INPROGRESS;
}

void UcxReceiver::ReceiveEager(const Incoming& in, const void* data) {
  StatusOr<Tensor> tensor = Status(Code::kInternal, "unset");  // no formatting per tensor
  if (in.header.raw) {
    tensor = AllocatePushed(in.header);
    if (tensor.ok() && in.length > 0) std::memcpy(tensor->raw_data(), data, in.length);
  } else {
    tensor = DecodeTensorMessage(AlignedWords(data, in.length), room_.options().max_held_bytes);
  }
  ucx_.RunAfterProgress([this, task = in.task, step = in.header.step_id, key = in.header.key,
                         bytes = in.length, t = std::move(tensor)]() mutable {
    sink_.Received(task, step, key, std::move(t), bytes);
  });
}

void UcxReceiver::StartReceive(kj::Own<Incoming> in, std::shared_ptr<Buffer> buffer) {
  in->buffer = std::move(buffer);
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE;
  param.datatype = ucp_dt_make_contig(1);
  struct Receiving {
    UcxReceiver* receiver;
    kj::Own<Incoming> in;
    UcxWorker::Activity active;
  };
  auto receiving =
      std::make_unique<Receiving>(Receiving{this, kj::mv(in), UcxWorker::Activity(ucx_)});
  param.user_data = receiving.get();
  param.cb.recv_am = [](void* request, ucs_status_t status, size_t, void* user_data) {
    std::unique_ptr<Receiving> r(static_cast<Receiving*>(user_data));
    r->receiver->Finish(kj::mv(r->in), status);
    ucp_request_free(request);
  };
  Incoming& ref = *receiving->in;
  ucs_status_ptr_t request = ucp_am_recv_data_nbx(ucx_.worker(), ref.descriptor,
                                                  ref.buffer->data(), ref.length, &param);
  if (request == nullptr) {
    Finish(kj::mv(receiving->in), UCS_OK);
  } else if (UCS_PTR_IS_ERR(request)) {
    Finish(kj::mv(receiving->in), UCS_PTR_STATUS(request));
  } else {
    (void)receiving.release();  // the callback owns it now
  }
  ucx_.Progress();
}

void UcxReceiver::Finish(kj::Own<Incoming> in, ucs_status_t status) {
  StatusOr<Tensor> tensor = Status(Code::kInternal, "unset");  // no formatting per tensor
  uint64_t bytes = 0;
  if (status == UCS_OK) {
    bytes = in->length;
    tensor = in->header.dead ? StatusOr<Tensor>(Tensor())
             : in->header.raw
                 ? Tensor::FromBuffer(in->header.dtype, in->header.shape, in->buffer)
                 : DecodeTensorMessage(
                       kj::arrayPtr(static_cast<const capnp::word*>(in->buffer->data()),
                                    in->length / sizeof(capnp::word)),
                       room_.options().max_held_bytes);
  } else {
    tensor = errors::Unavailable("receiving ", What(in->header, in->task),
                                 " failed: ", UcxStatusString(status));
  }
  ucx_.RunAfterProgress([this, task = in->task, step = in->header.step_id, key = in->header.key,
                         bytes, t = std::move(tensor)]() mutable {
    sink_.Received(task, step, key, std::move(t), bytes);
  });
}

}  // namespace tfd
