#include "daemon/rpc/pre_login_stream.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace tfd {
namespace {

// Cap'n Proto's own reader refuses 512 segments or more.
constexpr uint64_t kMaxSegments = 511;

uint32_t LittleEndian32(const kj::byte* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

}  // namespace

PreLoginStream::PreLoginStream(kj::Own<kj::AsyncIoStream> inner, Limits limits,
                               kj::Own<FrameLedger> ledger)
    : ForwardingStream(kj::mv(inner)), limits_(limits), ledger_(kj::mv(ledger)) {}

kj::Maybe<const PreLoginStream::Refusal&> PreLoginStream::refusal() const {
  KJ_IF_MAYBE(r, refusal_) { return *r; }
  return nullptr;
}

void PreLoginStream::Refuse(const char* kind, std::string why) {
  if (refusal_ == nullptr) refusal_ = Refusal{kind, why};
  kj::throwFatalException(
      kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::heapString(why)));
}

kj::Promise<size_t> PreLoginStream::tryRead(void* buffer, size_t min_bytes, size_t max_bytes) {
  return inner()
      .tryRead(buffer, min_bytes, max_bytes)
      .then([this, buffer](size_t n) -> kj::Promise<size_t> {
        // Judged when the bytes arrive: a read started before the login ran
        // may bring the first message after it.
        Inspect(static_cast<const kj::byte*>(buffer), n);
        if (complete_headers_.empty()) return n;
        // Cap'n Proto allocates a frame once it has its header: the bytes
        // that complete one go up only once the frame is charged.
        std::vector<uint64_t> frames = std::move(complete_headers_);
        complete_headers_.clear();
        return Charge(std::move(frames), 0).then([n]() { return n; });
      });
}

kj::Promise<void> PreLoginStream::Charge(std::vector<uint64_t> frames, size_t i) {
  if (i == frames.size()) return kj::READY_NOW;
  const uint64_t bytes = frames[i];
  return ledger_->Reserve(bytes).then(
      [this, frames = std::move(frames), i]() mutable { return Charge(std::move(frames), i + 1); },
      [this](kj::Exception&& e) -> kj::Promise<void> {
        Refuse("memory budget", e.getDescription().cStr());
      });
}

void PreLoginStream::Inspect(const kj::byte* bytes, size_t n) {
  size_t i = 0;
  while (i < n) {
    switch (state_) {
      case State::kFirstWord: {
        const size_t take = std::min<size_t>(8 - word_fill_, n - i);
        memcpy(word_ + word_fill_, bytes + i, take);
        word_fill_ += take;
        i += take;
        if (word_fill_ < 8) return;
        word_fill_ = 0;
        segments_ = uint64_t{LittleEndian32(word_)} + 1;
        if (segments_ > kMaxSegments) {
          Refuse(lifted_ ? "frame limit" : "pre-login limit",
                 fmt::format("{}sent a frame declaring {} segments (Cap'n Proto allows {})",
                             lifted_ ? "" : "before logging in, ", segments_, kMaxSegments));
        }
        body_words_ = LittleEndian32(word_ + 4);
        sizes_seen_ = 1;
        // The other sizes, padded to a whole word: segments_ & ~1 entries.
        sizes_left_ = segments_ & ~uint64_t{1};
        header_bytes_ = 8 + 4 * sizes_left_;
        CheckBudget();
        state_ = sizes_left_ > 0 ? State::kSizes : State::kBody;
        body_left_ = body_words_ * 8;
        if (state_ == State::kBody) HeaderComplete();
        break;
      }
      case State::kSizes: {
        const size_t take = std::min<size_t>(4 - word_fill_, n - i);
        memcpy(word_ + word_fill_, bytes + i, take);
        word_fill_ += take;
        i += take;
        if (word_fill_ < 4) return;
        word_fill_ = 0;
        --sizes_left_;
        if (sizes_seen_ < segments_) {  // else it is the padding
          body_words_ += LittleEndian32(word_);
          ++sizes_seen_;
          CheckBudget();
        }
        if (sizes_left_ == 0) {
          state_ = State::kBody;
          body_left_ = body_words_ * 8;
          HeaderComplete();
        }
        break;
      }
      case State::kBody: {
        const uint64_t take = std::min<uint64_t>(body_left_, n - i);
        i += take;
        body_left_ -= take;
        break;
      }
    }
    if (state_ == State::kBody && body_left_ == 0) {
      consumed_ += header_bytes_ + body_words_ * 8;
      state_ = State::kFirstWord;
    }
  }
}

void PreLoginStream::CheckBudget() {
  const uint64_t frame = header_bytes_ + body_words_ * 8;
  if (lifted_) {
    if (limits_.max_frame_bytes > 0 && frame > limits_.max_frame_bytes) {
      Refuse("frame limit",
             fmt::format("sent a frame of {} bytes; the most one message may take is {} bytes "
                         "(--max-message-bytes)", frame, limits_.max_frame_bytes));
    }
    return;
  }
  if (consumed_ + frame > limits_.pre_login_bytes) {
    Refuse("pre-login limit",
           fmt::format("before logging in, sent a frame of {} bytes{}; the pre-login limit is "
                       "{} bytes", frame,
                       consumed_ > 0 ? fmt::format(" after {} bytes", consumed_) : "",
                       limits_.pre_login_bytes));
  }
}

void PreLoginStream::HeaderComplete() {
  if (ledger_.get() != nullptr) complete_headers_.push_back(header_bytes_ + body_words_ * 8);
}

}  // namespace tfd
