#include "daemon/transport/push_header.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <chrono>
#include <cstring>
#include <limits>

#include "common/tensor_proto.h"
#include "schemas/transport.capnp.h"

namespace tfd {
namespace {

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

kj::ArrayPtr<const capnp::byte> AsBytes(const std::string& s) {
  return kj::arrayPtr(reinterpret_cast<const capnp::byte*>(s.data()), s.size());
}

}  // namespace

kj::Array<capnp::word> AlignedWords(const void* bytes, size_t size) {
  auto words = kj::heapArray<capnp::word>((size + sizeof(capnp::word) - 1) / sizeof(capnp::word));
  if (size > 0) std::memcpy(words.begin(), bytes, size);
  return words;
}

kj::Array<capnp::word> EncodePushHeader(const std::string& ticket, int64_t step_id,
                                        const std::string& key, const Tensor& tensor) {
  capnp::MallocMessageBuilder message(64);
  auto push = message.initRoot<proto::TensorPush>();
  if (!ticket.empty()) push.setTicket(AsBytes(ticket));
  push.setStepId(step_id);
  push.setKey(key);
  if (!tensor.initialized()) {
    push.setDead(true);
    push.setDtype(DTypeToProto(DType::kBool));
    push.initShape(1).set(0, 0);
    push.setSentMicros(NowMicros());
    return capnp::messageToFlatArray(message);
  }
  push.setDtype(DTypeToProto(tensor.dtype()));
  auto shape = push.initShape(tensor.rank());
  for (int i = 0; i < tensor.rank(); ++i) shape.set(i, tensor.dim(i));
  push.setSentMicros(NowMicros());
  push.setEncoding(tensor.dtype() == DType::kString
                       ? proto::TensorPush::Encoding::TENSOR_MESSAGE
                       : proto::TensorPush::Encoding::RAW);
  return capnp::messageToFlatArray(message);
}

StatusOr<PushHeader> DecodePushHeader(kj::ArrayPtr<const capnp::word> words) {
  if (words.size() * sizeof(capnp::word) > kMaxPushHeaderBytes) {
    return errors::InvalidArgument("a push header of ", words.size() * sizeof(capnp::word),
                                   " bytes, more than ", kMaxPushHeaderBytes);
  }
  PushHeader h;
  Status parsed;
  KJ_IF_MAYBE(e, kj::runCatchingExceptions([&]() {
    capnp::ReaderOptions limits;
    limits.traversalLimitInWords = words.size();
    limits.nestingLimit = 8;
    capnp::FlatArrayMessageReader reader(words, limits);
    auto push = reader.getRoot<proto::TensorPush>();
    auto ticket = push.getTicket();
    h.ticket.assign(reinterpret_cast<const char*>(ticket.begin()), ticket.size());
    h.step_id = push.getStepId();
    h.key = push.getKey();
    h.raw = push.getEncoding() == proto::TensorPush::Encoding::RAW;
    h.sent_micros = push.getSentMicros();
    h.dead = push.getDead();
    auto dtype = DTypeFromProto(push.getDtype());
    if (!dtype.ok()) {
      parsed = dtype.status();
      return;
    }
    h.dtype = *dtype;
    std::vector<int64_t> dims;
    for (int64_t d : push.getShape()) dims.push_back(d);
    auto shape = TensorShape::Make(std::move(dims));
    if (!shape.ok()) {
      parsed = shape.status();
      return;
    }
    h.shape = std::move(shape).value();
  })) {
    return errors::InvalidArgument("a malformed push header: ", e->getDescription().cStr());
  }
  if (!parsed.ok()) return parsed;
  return h;
}

StatusOr<Tensor> AllocatePushed(const PushHeader& h) {
  if (h.dead) return Tensor();
  return Tensor::Allocate(h.dtype, h.shape);
}

Status CheckPayload(const PushHeader& h, uint64_t length) {
  const std::string what = "tensor '" + h.key + "' of step " + std::to_string(h.step_id);
  if (h.dead && (length != 0 || !h.raw)) {
    return errors::InvalidArgument(what, ": a dead value with ", length, " bytes of payload");
  }
  if (!h.raw) {
    if (length % sizeof(capnp::word) != 0) {
      return errors::InvalidArgument(what, ": a serialized tensor of ", length,
                                     " bytes, not whole words");
    }
    return OkStatus();
  }
  const int64_t n = h.shape.num_elements();
  const uint64_t size = DTypeSize(h.dtype);
  if (h.dtype == DType::kString || n < 0 || size == 0 ||
      static_cast<uint64_t>(n) > std::numeric_limits<uint64_t>::max() / size ||
      static_cast<uint64_t>(n) * size != length) {
    return errors::InvalidArgument(what, ": ", length, " bytes for ", DTypeName(h.dtype),
                                   h.shape.ToString());
  }
  return OkStatus();
}

kj::Array<capnp::word> EncodeTensorMessage(const Tensor& tensor) {
  capnp::MallocMessageBuilder message;
  TensorToProto(tensor, message.initRoot<proto::Tensor>());
  return capnp::messageToFlatArray(message);
}

StatusOr<Tensor> DecodeTensorMessage(kj::ArrayPtr<const capnp::word> words, uint64_t max_bytes) {
  StatusOr<Tensor> tensor = Status(Code::kInternal, "unset");  // no formatting per tensor
  KJ_IF_MAYBE(e, kj::runCatchingExceptions([&]() {
    // Decoding reads the elements twice (checked, then copied); the limit
    // only has to stop amplification beyond that.
    capnp::ReaderOptions limits;
    limits.traversalLimitInWords = words.size() * 4 + 64;
    capnp::FlatArrayMessageReader reader(words, limits);
    tensor = TensorFromProto(reader.getRoot<proto::Tensor>(), max_bytes);
  })) {
    return errors::InvalidArgument("a malformed tensor message: ", e->getDescription().cStr());
  }
  return tensor;
}

}  // namespace tfd
