// DeviceMemory: memory the host cannot address (a GPU's), as the tensor
// layer sees it.
//
// A Buffer allocated by a DeviceMemory remembers it (Buffer::device()); host
// code must never read or write such a buffer's bytes, only move them with
// the copies below. Tensor::ToHost, DeepCopy, DebugString and TensorsEqual
// use them, so that a device tensor reaching host code by accident (a
// checkpoint of a GPU variable, a trace) is copied rather than dereferenced.
// The one implementation is the CUDA device in kernels/gpu/; `common` knows
// only this interface.
//
// Thread-safety: implementations are safe to call from any thread.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "common/status.h"

namespace tfd {

class Buffer;

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;

  // "GPU:0": the device part of a device name, for errors and traces.
  virtual const std::string& name() const = 0;
  // `bytes` of device memory, zero-filled in the device's order of work.
  // RESOURCE_EXHAUSTED naming the device and the size when it has no room.
  virtual StatusOr<std::shared_ptr<Buffer>> Allocate(size_t bytes) = 0;
  // Copies in the device's order of work; the host copies return once the
  // host side may be reused (ToHost: once `dst` holds the bytes).
  virtual Status CopyToHost(void* dst, const void* src, size_t bytes) = 0;
  virtual Status CopyFromHost(void* dst, const void* src, size_t bytes) = 0;
  virtual Status CopyOnDevice(void* dst, const void* src, size_t bytes) = 0;
};

}  // namespace tfd
