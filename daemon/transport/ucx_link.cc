#include "daemon/transport/ucx_link.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "common/mutex.h"
#include "daemon/rpc/kj_status.h"
#include "daemon/transport/push_header.h"
#include "daemon/transport/ucx_messages.h"

namespace tfd {

// A push on its way out. Owns what UCX reads until the send completes.
struct UcxLink::SendOp {
  UcxLink* link = nullptr;  // null once Close failed the push
  kj::Own<kj::PromiseFulfiller<void>> done;
  kj::Array<capnp::word> header;
  Tensor tensor;                   // raw encoding: the bytes sent
  kj::Array<capnp::word> message;  // string tensors: their serialized form
  size_t bytes = 0;
  kj::Maybe<UcxWorker::Activity> active;  // while UCX has it
};

namespace {

// The links UCX may still report an endpoint's failure to, by id: UCX keeps
// the handler's argument after the link is gone (an endpoint closing in the
// background), so the argument is an id looked up here, never a pointer.
class LiveLinks {
 public:
  uint64_t Add(UcxLink* link) {
    MutexLock lock(mu_);
    links_[++last_] = link;
    return last_;
  }
  void Remove(uint64_t id) {
    MutexLock lock(mu_);
    links_.erase(id);
  }
  UcxLink* Find(uint64_t id) {
    MutexLock lock(mu_);
    auto it = links_.find(id);
    return it == links_.end() ? nullptr : it->second;
  }

 private:
  Mutex mu_;
  uint64_t last_ GUARDED_BY(mu_) = 0;
  std::unordered_map<uint64_t, UcxLink*> links_ GUARDED_BY(mu_);
};

LiveLinks& Live() {
  static LiveLinks live;
  return live;
}

}  // namespace

UcxLink::UcxLink(UcxWorker& ucx, PlaneSink& sink, std::string task, std::string ticket)
    : ucx_(ucx),
      sink_(sink),
      task_(std::move(task)),
      ticket_(std::move(ticket)),
      id_(Live().Add(this)) {}

void UcxLink::OnEndpointError(void* arg, ucp_ep_h, ucs_status_t status) {
  // On the worker's thread, inside its progress: the sink defers what it does.
  UcxLink* link = Live().Find(reinterpret_cast<uintptr_t>(arg));
  if (link == nullptr) return;
  link->ep_failed_ = true;
  if (!link->failure_.ok()) return;
  link->failure_ = errors::Unavailable("the shared-memory link to ", link->task_,
                                       " failed: ", UcxStatusString(status));
  link->sink_.LinkFailed(link->task_, link->failure_);
}

StatusOr<std::unique_ptr<UcxLink>> UcxLink::Connect(UcxWorker& ucx, PlaneSink& sink,
                                                    std::string task, const std::string& address,
                                                    std::string ticket,
                                                    std::shared_ptr<spdlog::logger> logger) {
  auto link = std::make_unique<UcxLink>(ucx, sink, std::move(task), std::move(ticket));
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t*>(address.data());
  // A neighbour that dies fails this link's transfers, and the peer's
  // endpoint back to this task (UCX gives it the same mode), instead of
  // aborting the process (see the header).
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = &UcxLink::OnEndpointError;
  params.err_handler.arg = reinterpret_cast<void*>(static_cast<uintptr_t>(link->id_));
  const ucs_status_t s = ucp_ep_create(ucx.worker(), &params, &link->ep_);
  if (s != UCS_OK) {
    return errors::Unavailable("no shared-memory endpoint to ", link->task_, ": ",
                               UcxStatusString(s));
  }
  if (logger) link->LogLanes(logger);
  ucx.Progress();
  return link;
}

void UcxLink::LogLanes(const std::shared_ptr<spdlog::logger>& logger) const {
  // Which transports carry it: UCX prints its lanes.
  char* text = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&text, &size);
  if (f == nullptr) return;
  ucp_ep_print_info(ep_, f);
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
  logger->info("data plane to {} over UCX shared memory (this host): {}",
               task_, lanes.empty() ? std::string("lanes unknown") : lanes);
}

UcxLink::~UcxLink() {
  Live().Remove(id_);
  Close(errors::Unavailable("the data plane to ", task_, " closed"));
}

Status UcxLink::failure() const {
  if (ep_ == nullptr && failure_.ok()) return errors::Unavailable("the link to ", task_, " closed");
  return failure_;
}

void UcxLink::Close(const Status& why) {
  if (!sending_.empty()) sink_.Abandoned(sending_.size());
  for (SendOp* op : sending_) {
    op->link = nullptr;
    op->done->reject(KjFromStatus(
        Status(why.code(), errors::StrCat("pushing ", op->bytes, " bytes to ", task_, ": ",
                                          why.message()))));
  }
  sending_.clear();
  if (failure_.ok()) failure_ = why;
  if (ep_ == nullptr) return;
  ucp_ep_h ep = ep_;
  ep_ = nullptr;
  // A live peer's endpoint is flushed in the background; a failed one can
  // only be forced closed.
  ucx_.RunAfterProgress([&ucx = ucx_, ep, force = ep_failed_]() {
    ucp_request_param_t param{};
    if (force) {
      param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    }
    void* request = ucp_ep_close_nbx(ep, &param);
    if (UCS_PTR_IS_PTR(request)) ucp_request_free(request);  // released when done
    ucx.Progress();
  });
}

Status UcxLink::SendStepMessage(const FillStep& fill) {
  if (Status f = failure(); !f.ok()) return f;
  capnp::MallocMessageBuilder builder(64);
  auto message = builder.initRoot<proto::StepMessage>();
  fill(message);
  message.setTicket(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(ticket_.data()),
                                 ticket_.size()));
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
    std::unique_ptr<Sending> done(static_cast<Sending*>(user_data));
    ucp_request_free(request);
  };
  const auto bytes = sending->words.asBytes();
  ucs_status_ptr_t request =
      ucp_am_send_nbx(ep_, kUcxStepMessage, nullptr, 0, bytes.begin(), bytes.size(), &param);
  if (UCS_PTR_IS_ERR(request)) {
    return errors::Unavailable("sending a step message to ", task_, " failed: ",
                               UcxStatusString(UCS_PTR_STATUS(request)));
  }
  sink_.StepMessageSent();
  if (request != nullptr) (void)sending.release();  // the callback owns it now
  ucx_.Progress();
  return OkStatus();
}

kj::Promise<void> UcxLink::Push(int64_t step_id, const std::string& key, const Tensor& tensor) {
  if (Status f = failure(); !f.ok()) return KjFromStatus(f);
  auto op = std::make_unique<SendOp>();
  op->link = this;
  op->header = EncodePushHeader(ticket_, step_id, key, tensor);
  const void* data = nullptr;
  if (tensor.dtype() == DType::kString) {
    op->message = EncodeTensorMessage(tensor);
    data = op->message.begin();
    op->bytes = op->message.asBytes().size();
  } else {
    op->tensor = tensor;  // sent from its own buffer, kept alive until sent
    data = tensor.raw_data();
    op->bytes = tensor.total_bytes();
  }
  auto paf = kj::newPromiseAndFulfiller<void>();
  op->done = kj::mv(paf.fulfiller);
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE;
  param.datatype = ucp_dt_make_contig(1);
  param.user_data = op.get();
  param.cb.send = [](void* request, ucs_status_t status, void* user_data) {
    std::unique_ptr<SendOp> op(static_cast<SendOp*>(user_data));
    UcxLink* link = op->link;
    if (link == nullptr) {
      // Close failed it already; UCX is done with the buffer now.
    } else if (link->sending_.erase(op.get()), status == UCS_OK) {
      link->sink_.Sent(link->task_, op->bytes);
      op->done->fulfill();
    } else {
      op->done->reject(KjFromStatus(errors::Unavailable(
          "pushing ", op->bytes, " bytes to ", link->task_, " failed: ", UcxStatusString(status))));
    }
    ucp_request_free(request);
  };
  const auto header = op->header.asBytes();
  SendOp* raw = op.get();
  ucs_status_ptr_t request = ucp_am_send_nbx(ep_, kUcxPushMessage, header.begin(), header.size(),
                                             data, raw->bytes, &param);
  if (request == nullptr) {  // done at once; the callback does not run
    sink_.Sent(task_, raw->bytes);
    return kj::READY_NOW;
  }
  if (UCS_PTR_IS_ERR(request)) {
    return KjFromStatus(errors::Unavailable("pushing to ", task_, " failed: ",
                                            UcxStatusString(UCS_PTR_STATUS(request))));
  }
  sending_.insert(raw);
  raw->active = UcxWorker::Activity(ucx_);
  (void)op.release();  // the callback owns it now
  ucx_.Progress();
  return kj::mv(paf.promise);
}

}  // namespace tfd
