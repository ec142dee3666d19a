#include "daemon/transport/stream_frames.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <cstring>

#include "daemon/rpc/kj_status.h"
#include "daemon/transport/step_messages.h"
#include "schemas/transport.capnp.h"

namespace tfd::stream {
namespace {

void PutLe32(kj::byte* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<kj::byte>(v >> (8 * i));
}
void PutLe64(kj::byte* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<kj::byte>(v >> (8 * i));
}
uint32_t GetLe32(const kj::byte* in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(in[i]) << (8 * i);
  return v;
}
uint64_t GetLe64(const kj::byte* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(in[i]) << (8 * i);
  return v;
}

// Who may send each kind, and the most meta it may carry.
struct KindRule {
  bool from_opener;
  bool from_task;
  size_t max_meta;
  bool inline_payload;  // push and data carry `bytes` after the meta
};
KindRule RuleOf(FrameKind kind) {
  switch (kind) {
    case FrameKind::kHello: return {true, false, kMaxHelloBytes, false};
    case FrameKind::kWelcome: return {false, true, kMaxHelloBytes, false};
    case FrameKind::kPush: return {true, false, kMaxMetaBytes, true};
    case FrameKind::kOffer: return {true, false, kMaxMetaBytes, false};
    case FrameKind::kGrant: return {false, true, kMaxMetaBytes, false};
    case FrameKind::kData: return {true, false, 0, true};
    case FrameKind::kStep: return {true, true, kMaxStepMessageBytes, false};
  }
  return {false, false, 0, false};
}

kj::ArrayPtr<const capnp::byte> AsBytes(const std::string& s) {
  return kj::arrayPtr(reinterpret_cast<const capnp::byte*>(s.data()), s.size());
}

// Parses `words` as a message of T within fixed limits and hands its root
// to `read`; INVALID_ARGUMENT naming `what` if it is malformed.
template <typename T, typename F>
Status ParseMessage(kj::ArrayPtr<const capnp::word> words, const char* what, F&& read) {
  KJ_IF_MAYBE(e, kj::runCatchingExceptions([&]() {
    capnp::ReaderOptions limits;
    limits.traversalLimitInWords = words.size();
    limits.nestingLimit = 4;
    capnp::FlatArrayMessageReader reader(words, limits);
    read(reader.getRoot<T>());
  })) {
    return errors::InvalidArgument("a malformed stream ", what, ": ", e->getDescription().cStr());
  }
  return OkStatus();
}

Status StatusOf(std::string_view code, std::string message) {
  const Code c = CodeFromName(code).value_or(Code::kInternal);
  return c == Code::kOk ? OkStatus() : Status(c, std::move(message));
}

}  // namespace

std::string_view FrameKindName(FrameKind kind) {
  const auto i = static_cast<size_t>(kind);
  return i >= 1 && i <= kFrameKindNames.size() ? kFrameKindNames[i - 1] : "unknown";
}

std::array<kj::byte, kHeaderBytes> EncodeFrameHeader(const FrameHeader& h) {
  std::array<kj::byte, kHeaderBytes> out{};
  PutLe32(out.data(), static_cast<uint32_t>(h.kind));
  PutLe32(out.data() + 4, h.meta_bytes);
  PutLe64(out.data() + 8, h.bytes);
  PutLe64(out.data() + 16, h.tag);
  return out;
}

StatusOr<FrameHeader> DecodeFrameHeader(kj::ArrayPtr<const kj::byte> bytes, Side from) {
  if (bytes.size() != kHeaderBytes) {
    return errors::InvalidArgument("a stream frame header of ", bytes.size(), " bytes, not ",
                                   kHeaderBytes);
  }
  FrameHeader h;
  const uint32_t kind = GetLe32(bytes.begin());
  if (kind < 1 || kind > kFrameKindNames.size()) {
    return errors::InvalidArgument("a stream frame of unknown kind ", kind);
  }
  h.kind = static_cast<FrameKind>(kind);
  h.meta_bytes = GetLe32(bytes.begin() + 4);
  h.bytes = GetLe64(bytes.begin() + 8);
  h.tag = GetLe64(bytes.begin() + 16);
  const KindRule rule = RuleOf(h.kind);
  const std::string_view name = FrameKindName(h.kind);
  if (!(from == Side::kOpener ? rule.from_opener : rule.from_task)) {
    return errors::InvalidArgument("a ", name, " frame from the ",
                                   from == Side::kOpener ? "opener" : "task",
                                   " of a stream, which never sends one");
  }
  if (h.meta_bytes % sizeof(capnp::word) != 0 || h.meta_bytes > rule.max_meta) {
    return errors::InvalidArgument("a ", name, " frame with ", h.meta_bytes,
                                   " bytes of meta; at most ", rule.max_meta, ", whole words");
  }
  if (!rule.inline_payload && h.kind != FrameKind::kOffer && h.bytes != 0) {
    return errors::InvalidArgument("a ", name, " frame announcing ", h.bytes,
                                   " bytes of payload; it carries none");
  }
  if (h.kind == FrameKind::kPush && h.bytes > kMaxEagerBytes) {
    return errors::InvalidArgument("a push frame of ", h.bytes, " bytes; larger than ",
                                   kMaxEagerBytes, " must be offered");
  }
  return h;
}

kj::Promise<kj::Maybe<Frame>> ReadFrame(kj::AsyncInputStream& in, Side from) {
  auto header = kj::heapArray<kj::byte>(kHeaderBytes);
  auto read = in.tryRead(header.begin(), kHeaderBytes, kHeaderBytes);
  return read.then([&in, from, header = kj::mv(header)](
                       size_t n) mutable -> kj::Promise<kj::Maybe<Frame>> {
    if (n == 0) return kj::Maybe<Frame>(nullptr);
    if (n < kHeaderBytes) {
      return KjFromStatus(errors::Unavailable("the stream ended inside a frame header"));
    }
    auto decoded = DecodeFrameHeader(header, from);
    if (!decoded.ok()) return KjFromStatus(decoded.status());
    Frame frame{*decoded, kj::heapArray<capnp::word>(decoded->meta_bytes / sizeof(capnp::word))};
    if (frame.meta.size() == 0) return kj::Maybe<Frame>(kj::mv(frame));
    auto bytes = frame.meta.asBytes();
    return in.read(bytes.begin(), bytes.size()).then([frame = kj::mv(frame)]() mutable {
      return kj::Maybe<Frame>(kj::mv(frame));
    });
  });
}

kj::Promise<void> WriteFrame(kj::AsyncOutputStream& out, const FrameHeader& header,
                             kj::ArrayPtr<const capnp::word> meta,
                             kj::ArrayPtr<const kj::byte> payload) {
  auto head = kj::heap(EncodeFrameHeader(header));
  auto pieces = kj::heapArray<kj::ArrayPtr<const kj::byte>>(3);
  size_t n = 0;
  pieces[n++] = kj::arrayPtr(head->data(), head->size());
  if (meta.size() > 0) pieces[n++] = meta.asBytes();
  if (payload.size() > 0) pieces[n++] = payload;
  auto parts = pieces.slice(0, n);
  return out.write(parts).attach(kj::mv(head), kj::mv(pieces));
}

kj::Array<capnp::word> EncodeHello(const Hello& hello) {
  capnp::MallocMessageBuilder message(64);
  auto h = message.initRoot<proto::StreamHello>();
  h.setVersion(hello.version);
  h.setToken(AsBytes(hello.token));
  h.setTask(hello.task);
  return capnp::messageToFlatArray(message);
}

StatusOr<Hello> DecodeHello(kj::ArrayPtr<const capnp::word> words) {
  Hello hello;
  TFD_RETURN_IF_ERROR(ParseMessage<proto::StreamHello>(words, "hello", [&](auto h) {
    hello.version = h.getVersion();
    auto token = h.getToken();
    hello.token.assign(reinterpret_cast<const char*>(token.begin()), token.size());
    hello.task = h.getTask();
  }));
  return hello;
}

kj::Array<capnp::word> EncodeWelcome(const Welcome& welcome) {
  capnp::MallocMessageBuilder message(64);
  auto w = message.initRoot<proto::StreamWelcome>();
  w.setCode(std::string(CodeName(welcome.status.code())));
  w.setMessage(welcome.status.message());
  w.setVersion(welcome.version);
  w.setEagerBytes(welcome.eager_bytes);
  return capnp::messageToFlatArray(message);
}

StatusOr<Welcome> DecodeWelcome(kj::ArrayPtr<const capnp::word> words) {
  Welcome welcome;
  TFD_RETURN_IF_ERROR(ParseMessage<proto::StreamWelcome>(words, "welcome", [&](auto w) {
    welcome.status = StatusOf(w.getCode().cStr(), w.getMessage());
    welcome.version = w.getVersion();
    welcome.eager_bytes = w.getEagerBytes();
  }));
  if (welcome.status.ok() && welcome.eager_bytes > kMaxEagerBytes) {
    return errors::InvalidArgument("a welcome allowing ", welcome.eager_bytes,
                                   " bytes inline, more than ", kMaxEagerBytes);
  }
  return welcome;
}

kj::Array<capnp::word> EncodeGrant(const Status& status) {
  capnp::MallocMessageBuilder message(64);
  auto g = message.initRoot<proto::StreamGrant>();
  g.setCode(std::string(CodeName(status.code())));
  g.setMessage(status.message());
  return capnp::messageToFlatArray(message);
}

StatusOr<Grant> DecodeGrant(kj::ArrayPtr<const capnp::word> words) {
  Grant granted;
  TFD_RETURN_IF_ERROR(ParseMessage<proto::StreamGrant>(words, "grant", [&](auto g) {
    granted.status = StatusOf(g.getCode().cStr(), g.getMessage());
  }));
  return granted;
}

kj::Promise<void> SendHello(kj::AsyncOutputStream& out, const Hello& hello) {
  auto meta = EncodeHello(hello);
  const FrameHeader header{.kind = FrameKind::kHello,
                           .meta_bytes = static_cast<uint32_t>(meta.asBytes().size())};
  return out.write(kMagic.data(), kMagic.size())
      .then([&out, header, meta = kj::mv(meta)]() mutable {
        auto written = WriteFrame(out, header, meta, {});
        return written.attach(kj::mv(meta));
      });
}

kj::Promise<Hello> ReceiveHello(kj::AsyncInputStream& in) {
  auto magic = kj::heapArray<kj::byte>(kMagic.size());
  auto read = in.tryRead(magic.begin(), magic.size(), magic.size());
  return read.then([&in, magic = kj::mv(magic)](size_t n) -> kj::Promise<Frame> {
    if (n != kMagic.size() || std::memcmp(magic.begin(), kMagic.data(), kMagic.size()) != 0) {
      return KjFromStatus(errors::InvalidArgument("not a data-plane stream (no stream magic)"));
    }
    return ReadFrame(in, Side::kOpener).then([](kj::Maybe<Frame> f) -> Frame {
      KJ_IF_MAYBE(frame, f) { return kj::mv(*frame); }
      kj::throwFatalException(KjFromStatus(errors::Unavailable("the stream ended before its hello")));
    });
  }).then([](Frame frame) -> Hello {
    if (frame.header.kind != FrameKind::kHello) {
      ThrowIfError(errors::InvalidArgument("a stream began with a ",
                                           FrameKindName(frame.header.kind),
                                           " frame, not a hello"));
    }
    auto hello = DecodeHello(frame.meta);
    ThrowIfError(hello.status());
    return std::move(hello).value();
  });
}

kj::Promise<void> SendWelcome(kj::AsyncOutputStream& out, const Welcome& welcome) {
  auto meta = EncodeWelcome(welcome);
  const FrameHeader header{.kind = FrameKind::kWelcome,
                           .meta_bytes = static_cast<uint32_t>(meta.asBytes().size())};
  auto written = WriteFrame(out, header, meta, {});
  return written.attach(kj::mv(meta));
}

kj::Promise<Welcome> ReceiveWelcome(kj::AsyncInputStream& in) {
  return ReadFrame(in, Side::kTask).then([](kj::Maybe<Frame> f) -> Welcome {
    if (f == nullptr) {
      ThrowIfError(errors::Unavailable("the task closed the stream instead of welcoming it"));
    }
    Frame& frame = KJ_ASSERT_NONNULL(f);
    if (frame.header.kind != FrameKind::kWelcome) {
      ThrowIfError(errors::InvalidArgument("the task answered a stream's hello with a ",
                                           FrameKindName(frame.header.kind), " frame"));
    }
    auto welcome = DecodeWelcome(frame.meta);
    ThrowIfError(welcome.status());
    ThrowIfError(welcome->status);
    return std::move(welcome).value();
  });
}

}  // namespace tfd::stream
