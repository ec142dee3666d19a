#include "daemon/rpc/read_ahead_stream.h"

#include <algorithm>
#include <cstring>

#include <kj/debug.h>

namespace tfd {

ReadAheadStream::ReadAheadStream(kj::Own<kj::AsyncIoStream> inner, size_t buffer_bytes)
    : ForwardingStream(kj::mv(inner)), buffer_(kj::heapArray<kj::byte>(buffer_bytes)) {}

size_t ReadAheadStream::TakeBuffered(kj::byte* out, size_t max) {
  const size_t n = std::min(max, end_ - begin_);
  if (n > 0) memcpy(out, buffer_.begin() + begin_, n);
  begin_ += n;
  if (begin_ == end_) begin_ = end_ = 0;
  return n;
}

void ReadAheadStream::Skip(size_t n) {
  KJ_REQUIRE(n <= end_ - begin_, "skipping more than is buffered", n, end_ - begin_);
  begin_ += n;
  if (begin_ == end_) begin_ = end_ = 0;
}

kj::Promise<size_t> ReadAheadStream::tryRead(void* buffer, size_t min_bytes, size_t max_bytes) {
  auto* out = static_cast<kj::byte*>(buffer);
  const size_t got = TakeBuffered(out, max_bytes);
  if (got >= min_bytes) return got;
  out += got;
  const size_t need = min_bytes - got;
  const size_t room = max_bytes - got;
  if (room >= buffer_.size()) {
    return inner().tryRead(out, need, room).then([got](size_t n) { return got + n; });
  }
  // The buffer is empty here (TakeBuffered emptied it to get this far).
  return inner().tryRead(buffer_.begin(), need, buffer_.size())
      .then([this, out, room, got](size_t n) {
        end_ = n;
        // Fewer than `need` only at the end of the stream, as for tryRead.
        return got + TakeBuffered(out, room);
      });
}

kj::Promise<kj::ArrayPtr<const kj::byte>> ReadAheadStream::Peek(size_t n) {
  n = std::min(n, buffer_.size());
  const size_t have = end_ - begin_;
  if (have >= n) return buffer_.slice(begin_, begin_ + n).asConst();
  // Room after what is buffered: move it to the front.
  if (begin_ > 0) {
    memmove(buffer_.begin(), buffer_.begin() + begin_, have);
    begin_ = 0;
    end_ = have;
  }
  return inner().tryRead(buffer_.begin() + end_, n - have, buffer_.size() - end_)
      .then([this, n](size_t got) -> kj::Promise<kj::ArrayPtr<const kj::byte>> {
        end_ += got;
        if (got == 0 || end_ - begin_ >= n) {
          return buffer_.slice(begin_, begin_ + std::min(n, end_ - begin_)).asConst();
        }
        return Peek(n);
      });
}

}  // namespace tfd
