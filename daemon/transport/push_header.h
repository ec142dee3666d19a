// PushHeader: what travels with one pushed tensor on either link of the
// data plane (UCX's active-message header over shared memory, the meta part
// of a frame on a stream): the step, the rendezvous key, the dtype and shape,
// how the payload holds the elements, and (over shared memory) the ticket.
//
// Decoding never trusts the sender: a header is parsed within fixed reader
// limits, and CheckPayload says whether the bytes that come with it are
// exactly what the dtype and shape need, before anything is allocated.
// These are pure functions, so the fuzz targets drive them directly.
//
//   auto words = EncodePushHeader({.step_id = 7, .key = k, ...}, tensor);
//   ... on the receiver:
//   TFD_ASSIGN_OR_RETURN(PushHeader h, DecodePushHeader(words));
//   TFD_RETURN_IF_ERROR(CheckPayload(h, length));
//
// Thread-safety: pure functions.
#pragma once

#include <capnp/common.h>
#include <kj/array.h>

#include <cstdint>
#include <string>

#include "common/status.h"
#include "common/tensor.h"

namespace tfd {

struct PushHeader {
  std::string ticket;  // empty on a stream
  int64_t step_id = 0;
  std::string key;
  DType dtype = DType::kInvalid;
  TensorShape shape;
  // The payload is the elements' raw little-endian bytes; otherwise (string
  // tensors) a serialized proto::Tensor.
  bool raw = true;
  int64_t sent_micros = 0;
  bool dead = false;  // a dead value: no payload; delivered as an uninitialized Tensor
};

// A header longer than this is not one of ours: refused unread.
inline constexpr size_t kMaxPushHeaderBytes = 64 << 10;

// The header for `tensor` (its dtype and shape) as whole words. `ticket`
// may be empty. An uninitialized tensor is a dead value (common/rendezvous.h).
kj::Array<capnp::word> EncodePushHeader(const std::string& ticket, int64_t step_id,
                                        const std::string& key, const Tensor& tensor);

// INVALID_ARGUMENT for a malformed header, an unknown dtype, a bad shape, or
// one longer than kMaxPushHeaderBytes. `words` must be word-aligned.
StatusOr<PushHeader> DecodePushHeader(kj::ArrayPtr<const capnp::word> words);

// The tensor a raw payload of `h` is read into: uninitialized for a dead
// value, else allocated for its dtype and shape.
StatusOr<Tensor> AllocatePushed(const PushHeader& h);

// OK when `length` payload bytes can be what `header` describes: exactly
// the elements' bytes for a raw payload of a numeric dtype; for a
// serialized tensor, whole words. INVALID_ARGUMENT naming the tensor
// otherwise.
Status CheckPayload(const PushHeader& header, uint64_t length);

// The payload of a string tensor, serialized; Decode reverses it within
// `max_bytes` (the receiver's limit on one tensor).
kj::Array<capnp::word> EncodeTensorMessage(const Tensor& tensor);
StatusOr<Tensor> DecodeTensorMessage(kj::ArrayPtr<const capnp::word> words, uint64_t max_bytes);

// `bytes` copied into words, so a Cap'n Proto reader may read them whatever
// their alignment was.
kj::Array<capnp::word> AlignedWords(const void* bytes, size_t size);

}  // namespace tfd
