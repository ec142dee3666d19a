// ForwardingStream: a kj::AsyncIoStream that passes every call to the stream
// it owns, for adapters that change one thing about a connection's bytes
// (how they are read, what may be read before login) and nothing else.
//
//   class Counting final : public ForwardingStream {
//     using ForwardingStream::ForwardingStream;
//     kj::Promise<size_t> tryRead(void* b, size_t min, size_t max) override { ... inner() ... }
//   };
//
// Thread-safety: that of the stream beneath.
#pragma once

#include <kj/async-io.h>

namespace tfd {

class ForwardingStream : public kj::AsyncIoStream {
 public:
  explicit ForwardingStream(kj::Own<kj::AsyncIoStream> inner) : inner_(kj::mv(inner)) {}

  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override {
    return inner_->tryRead(buffer, min_bytes, max_bytes);
  }
  kj::Promise<void> write(const void* buffer, size_t size) override {
    return inner_->write(buffer, size);
  }
  kj::Promise<void> write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override {
    return inner_->write(pieces);
  }
  kj::Promise<void> whenWriteDisconnected() override { return inner_->whenWriteDisconnected(); }
  void shutdownWrite() override { inner_->shutdownWrite(); }
  void abortRead() override { inner_->abortRead(); }
  void getsockopt(int level, int option, void* value, kj::uint* length) override {
    inner_->getsockopt(level, option, value, length);
  }
  void setsockopt(int level, int option, const void* value, kj::uint length) override {
    inner_->setsockopt(level, option, value, length);
  }
  void getsockname(struct sockaddr* addr, kj::uint* length) override {
    inner_->getsockname(addr, length);
  }
  void getpeername(struct sockaddr* addr, kj::uint* length) override {
    inner_->getpeername(addr, length);
  }
  // For the socket's options and addresses; reading it directly would skip
  // whatever an adapter holds back.
  kj::Maybe<int> getFd() const override { return inner_->getFd(); }

 protected:
  kj::AsyncIoStream& inner() { return *inner_; }

 private:
  kj::Own<kj::AsyncIoStream> inner_;
};

}  // namespace tfd
