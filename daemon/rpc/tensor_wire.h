// Tensors in RPC messages, without extra copies.
//
// Receiving: a tensor sent as raw content is aliased, not copied: its buffer
// points into the received message, which `keepalive` keeps alive for as long
// as any tensor uses it. The message is a kj object: only alias where every
// user of the tensor stays on the message's thread (clients); tasks copy
// received tensors out on the event loop before kernels see them. Sending: one copy into the message being built.
//
//   auto response = kj::heap(co_await ...);  // the message
//   TFD_ASSIGN_OR_RETURN(Tensor t, TensorFromWire(reader, shared_response));
#pragma once

#include <memory>

#include "common/tensor_proto.h"

namespace tfd {

StatusOr<Tensor> TensorFromWire(proto::Tensor::Reader t, std::shared_ptr<void> keepalive);
// TODO(perf): reference the tensor's buffer with Orphanage::referenceExternalData
// instead of copying, once the buffer's lifetime can be tied to the write.
inline void TensorToWire(const Tensor& t, proto::Tensor::Builder out) { TensorToProto(t, out); }

}  // namespace tfd
