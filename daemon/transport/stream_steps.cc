#include "daemon/transport/stream_steps.h"

#include <cstdint>
#include <cstring>

namespace tfd {
namespace {

// The step message in `bytes` of meta at `meta`, wherever it lies.
StatusOr<ReceivedStep> DecodeAt(const kj::byte* meta, size_t bytes) {
  const size_t words = bytes / sizeof(capnp::word);
  if (reinterpret_cast<uintptr_t>(meta) % alignof(capnp::word) == 0) {
    return DecodeStepMessage(kj::arrayPtr(reinterpret_cast<const capnp::word*>(meta), words));
  }
  // Behind a push whose payload was no whole number of words.
  auto copy = kj::heapArray<capnp::word>(words);
  memcpy(copy.begin(), meta, bytes);
  return DecodeStepMessage(copy);
}

}  // namespace

std::optional<StatusOr<ReceivedStep>> TakeBufferedStep(ReadAheadStream& in, stream::Side from) {
  const kj::ArrayPtr<const kj::byte> bytes = in.buffered();
  if (bytes.size() < stream::kHeaderBytes) return std::nullopt;
  auto header = stream::DecodeFrameHeader(bytes.slice(0, stream::kHeaderBytes), from);
  if (!header.ok() || header->kind != stream::FrameKind::kStep) return std::nullopt;
  const size_t size = stream::kHeaderBytes + header->meta_bytes;
  if (bytes.size() < size) return std::nullopt;
  // Decoded straight into its result: a placeholder status would format a
  // message (an ostringstream) for every step that arrives.
  std::optional<StatusOr<ReceivedStep>> taken(
      std::in_place, DecodeAt(bytes.begin() + stream::kHeaderBytes, header->meta_bytes));
  // Taken before the caller hands it on: the message was copied out of the buffer.
  in.Skip(size);
  return taken;
}

void HandOnStep(PlaneSink& sink, const std::string& from, StatusOr<ReceivedStep> received) {
  if (received.ok()) {
    sink.StepReceived(from, received->message);
  } else {
    sink.Refused(received.status().message() + " from " + from, true);
  }
}

Status PostStepFrame(FrameWriter& writer, const StepMessage& message) {
  if (!writer.failure().ok()) return writer.failure();
  auto meta = EncodeStepMessage(message, "");
  if (!meta.ok()) return meta.status();
  const stream::FrameHeader header{.kind = stream::FrameKind::kStep,
                                   .meta_bytes = static_cast<uint32_t>(meta->asBytes().size())};
  writer.Post(header, std::move(meta).value());
  return OkStatus();
}

}  // namespace tfd
