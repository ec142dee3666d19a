#include "common/buffer.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "common/buffer_pool.h"

namespace tfd {

StatusOr<std::shared_ptr<Buffer>> Buffer::Allocate(DType dtype, int64_t n,
                                                   std::shared_ptr<MemoryBudget> budget,
                                                   Fill fill) {
  const size_t elem = DTypeSize(dtype);
  if (n < 0 || elem == 0) {
    return errors::Internal("cannot allocate ", n, " elements of ", DTypeName(dtype));
  }
  if (static_cast<size_t>(n) > kMaxBufferBytes / elem) {
    return errors::InvalidArgument("a tensor of ", n, " ", DTypeName(dtype),
                                   " elements exceeds the limit of ", kMaxBufferBytes,
                                   " bytes");
  }
  const size_t bytes = static_cast<size_t>(n) * elem;
  // Charged before the memory is taken, so that a request over the budget
  // never touches it.
  if (budget != nullptr) TFD_RETURN_IF_ERROR(budget->Charge(bytes));
  if (dtype != DType::kString && bytes >= BufferPool::kMinBytes) {
    auto pooled = HostBufferPool().Get(bytes);
    if (!pooled.ok()) {
      if (budget != nullptr) budget->Release(bytes);
      return pooled.status();
    }
    std::shared_ptr<Buffer> b = *std::move(pooled);
    b->budget_ = std::move(budget);
    b->dtype_ = dtype;
    b->count_ = n;
    // A reused block holds the last tensor's bytes.
    if (fill == Fill::kZeros) std::memset(b->data_, 0, bytes);
    return b;
  }
  // aligned_alloc wants a size that is a multiple of the alignment; never 0.
  const size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  void* p = std::aligned_alloc(kTensorAlignment, rounded == 0 ? kTensorAlignment : rounded);
  if (p == nullptr) {
    if (budget != nullptr) budget->Release(bytes);
    return errors::ResourceExhausted("out of memory allocating ", bytes, " bytes for a ",
                                     DTypeName(dtype), " tensor");
  }
  auto b = std::make_shared<Buffer>(PrivateKey{});
  b->budget_ = std::move(budget);
  b->data_ = p;
  b->size_ = bytes;
  b->owned_ = true;
  b->dtype_ = dtype;
  b->count_ = n;
  if (dtype == DType::kString) {
    auto* s = static_cast<std::string*>(p);
    for (int64_t i = 0; i < n; ++i) new (s + i) std::string();
  } else if (fill == Fill::kZeros) {
    std::memset(p, 0, bytes);
  }
  return b;
}

std::shared_ptr<Buffer> Buffer::Wrap(void* data, size_t size, std::shared_ptr<void> owner) {
  auto b = std::make_shared<Buffer>(PrivateKey{});
  b->data_ = data;
  b->size_ = size;
  b->owner_ = std::move(owner);
  return b;
}

std::shared_ptr<Buffer> Buffer::WrapDevice(void* data, size_t size, DeviceMemory* device,
                                           std::shared_ptr<void> owner) {
  auto b = Wrap(data, size, std::move(owner));
  b->device_ = device;
  return b;
}

Buffer::~Buffer() {
  if (owned_) {
    if (dtype_ == DType::kString) {
      auto* s = static_cast<std::string*>(data_);
      for (int64_t i = 0; i < count_; ++i) s[i].~basic_string();
    }
    std::free(data_);
  }
  // A pooled block goes back with owner_, after this.
  if (budget_ != nullptr) budget_->Release(size_);
}

}  // namespace tfd
