// The data plane between two tasks' planes on one event loop, over each of
// its links: UCX shared memory, and a stream over a loopback TCP
// connection. Tensors arrive bit-exact at sizes around UCX's eager and
// rendezvous switch, the stream's inline limit and the pool's block sizes;
// many pushes in flight all arrive (a full shared-memory FIFO must not stall
// the loop); over shared memory only ticketed pushes are accepted; the
// held-bytes budget holds pushes back and refuses what cannot fit; a stream
// that breaks fails what was in flight, and one whose peer dies inside a
// large tensor gives back the room it was granted. Streams are served plain
// and, as a task's server hands them over, through a ReadAheadStream (whose
// buffered step frames are decoded in place). tests/integration/transfer_test.cc
// does the same between tfd processes.
#include <catch2/catch.hpp>
#include <kj/async-io.h>
#include <kj/async-unix.h>
#include <kj/debug.h>

#include <map>
#include <numeric>

#include <sys/socket.h>

#include "daemon/rpc/read_ahead_stream.h"
#include "daemon/transport/data_plane.h"
#include "daemon/transport/push_header.h"
#include "daemon/transport/stream_frames.h"
#include "daemon/transport/ucx_worker.h"

namespace tfd {
namespace {

using Key = std::pair<int64_t, std::string>;

enum class Kind { kShm, kStream, kReadAhead };
const char* Name(Kind k) {
  switch (k) {
    case Kind::kShm: return "shared memory";
    case Kind::kStream: return "stream";
    case Kind::kReadAhead: return "stream read ahead";
  }
  return "?";
}

// Two tasks' data planes in this process, "a" pushing to "b".
struct Pair {
  explicit Pair(Kind kind, DataPlane::Options b_options = {}) : kind(kind) {
    auto keep = [this](int64_t step, const std::string& key, StatusOr<Tensor> t) {
      received.emplace(Key{step, key}, std::move(t));
    };
    if (kind == Kind::kShm) {
      auto made_a = UcxWorker::Create(io.unixEventPort, io.provider->getTimer(), nullptr);
      auto made_b = UcxWorker::Create(io.unixEventPort, io.provider->getTimer(), nullptr);
      INFO(made_a.status().ToString() << " " << made_b.status().ToString());
      REQUIRE((made_a.ok() && made_b.ok()));
      a_worker = std::move(made_a).value();
      b_worker = std::move(made_b).value();
    }
    a = std::make_unique<DataPlane>(a_worker.get(), io.provider->getTimer(), DataPlane::Options{},
                                    keep, nullptr);
    b = std::make_unique<DataPlane>(b_worker.get(), io.provider->getTimer(), b_options, keep,
                                    nullptr);
    if (kind == Kind::kShm) {
      invitation = b->Invite("a");
      Status connected = a->ConnectShared("b", invitation);
      INFO(connected.ToString());
      REQUIRE(connected.ok());
    } else {
      OpenStream();
    }
  }
  ~Pair() {
    a.reset();
    served = nullptr;
    b.reset();
  }

  // A loopback connection from a to b, as tfd's task server would hand it
  // over: b reads the hello, then serves the stream. `sockets` (if set)
  // sees both ends' descriptors first.
  void OpenStream(std::function<void(int client, int server)> sockets = nullptr) {
    Connection c = Connect();
    if (sockets) sockets(KJ_ASSERT_NONNULL(c.client->getFd()), c.server_fd);
    served = kj::mv(c.served).fork();
    a->ConnectStream("b", kj::mv(c.client), stream::Hello{.task = "a"}, false)
        .wait(io.waitScope);
  }

  // Both ends of a fresh loopback TCP connection: {client, server}.
  std::pair<kj::Own<kj::AsyncIoStream>, kj::Own<kj::AsyncIoStream>> Loopback() {
    auto& network = io.provider->getNetwork();
    auto listener = network.parseAddress("127.0.0.1:0").wait(io.waitScope)->listen();
    auto accepted = listener->accept();
    auto client = network.parseAddress("127.0.0.1", listener->getPort())
                      .wait(io.waitScope)->connect().wait(io.waitScope);
    return {kj::mv(client), accepted.wait(io.waitScope)};
  }

  // A loopback connection to b, which reads its hello and serves it (plain
  // or read ahead, as `kind` says); the other end is the caller's.
  struct Connection {
    kj::Own<kj::AsyncIoStream> client;
    int server_fd;
    kj::Promise<Status> served;  // why b stopped serving it
  };
  Connection Connect() {
    auto [client, server] = Loopback();
    const int server_fd = KJ_ASSERT_NONNULL(server->getFd());
    if (kind == Kind::kReadAhead) server = kj::heap<ReadAheadStream>(kj::mv(server));
    kj::AsyncIoStream& s = *server;
    auto served = stream::ReceiveHello(s).then(
        [this, server = kj::mv(server)](stream::Hello hello) mutable {
          return b->ServeStream(hello.task, kj::mv(server), false);
        });
    return {kj::mv(client), server_fd, kj::mv(served)};
  }

  // Pushes and waits until b has it (or the push failed).
  Status PushAndWait(int64_t step, const std::string& key, const Tensor& t) {
    Status s = Settle(a->Push("b", step, key, t)).wait(io.waitScope);
    if (!s.ok()) return s;
    return WaitFor(Key{step, key});
  }

  Status WaitFor(const Key& key, int rounds = 2000) {
    for (int i = 0; i < rounds && received.count(key) == 0; ++i) {
      io.provider->getTimer().afterDelay(1 * kj::MILLISECONDS).wait(io.waitScope);
    }
    return received.count(key) ? OkStatus() : errors::DeadlineExceeded("never arrived");
  }

  const Kind kind;
  kj::AsyncIoContext io = kj::setupAsyncIo();
  std::unique_ptr<UcxWorker> a_worker, b_worker;
  std::unique_ptr<DataPlane> a, b;
  DataPlane::Invitation invitation;
  kj::Maybe<kj::ForkedPromise<Status>> served;  // b's side of the stream
  std::map<Key, StatusOr<Tensor>> received;
};

kj::Array<capnp::word> EncodePushHeaderForTest(int64_t step, const Tensor& t) {
  return EncodePushHeader("", step, "k", t);
}

Tensor Pattern(int64_t bytes) {
  Tensor t = *Tensor::Allocate(DType::kUInt8, TensorShape({bytes}));
  uint8_t* p = t.data<uint8_t>();
  for (int64_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>((i * 131 + 7) >> 3);
  return t;
}

TEST_CASE("tensors arrive bit-exact at sizes around every threshold, on each link") {
  for (Kind kind : {Kind::kShm, Kind::kStream, Kind::kReadAhead}) {
    INFO(Name(kind));
    Pair pair(kind);
    int64_t step = 1;
    for (int64_t bytes : {int64_t{0}, int64_t{1}, int64_t{4095}, int64_t{8192}, int64_t{8193},
                          int64_t{65535}, int64_t{65536}, int64_t{65537}, int64_t{1} << 20,
                          (int64_t{16} << 20) + 3}) {
      INFO(bytes << " bytes");
      const Tensor sent = Pattern(bytes);
      REQUIRE(pair.PushAndWait(step, "k", sent).ok());
      const auto& got = pair.received.at(Key{step, "k"});
      REQUIRE(got.ok());
      CHECK(TensorsEqual(*got, sent));
      ++step;
    }
    // float32 of another shape, and strings, inline and offered.
    Tensor floats = Tensor::FromVector<float>({1.5f, -2, 3e30f, 0}, TensorShape({2, 2}));
    REQUIRE(pair.PushAndWait(100, "f", floats).ok());
    CHECK(TensorsEqual(*pair.received.at(Key{100, "f"}), floats));
    for (size_t n : {size_t{3}, size_t{70000}, size_t{200000}}) {
      Tensor strings = Tensor::FromVector<std::string>({"", "tfd", std::string(n, 'x')});
      REQUIRE(pair.PushAndWait(101 + n, "s", strings).ok());
      const auto& got_strings = pair.received.at(Key{101 + n, "s"});
      INFO(got_strings.status().ToString());
      REQUIRE(got_strings.ok());
      CHECK(TensorsEqual(*got_strings, strings));
    }
    CHECK(pair.a->LinkKind("b") == (kind == Kind::kShm ? "UCX shared memory" : "stream"));
  }
}

TEST_CASE("a dead value arrives dead on each link, apart from an empty tensor") {
  for (Kind kind : {Kind::kShm, Kind::kStream}) {
    INFO(Name(kind));
    Pair pair(kind);
    REQUIRE(pair.PushAndWait(1, "dead", Tensor()).ok());
    const auto& dead = pair.received.at(Key{1, "dead"});
    REQUIRE(dead.ok());
    CHECK_FALSE(dead->initialized());
    // The wire's stand-in for a dead value (bool [0]) sent as data stays data.
    const Tensor empty = *Tensor::Allocate(DType::kBool, TensorShape({0}));
    REQUIRE(pair.PushAndWait(2, "empty", empty).ok());
    const auto& got = pair.received.at(Key{2, "empty"});
    REQUIRE(got.ok());
    REQUIRE(got->initialized());
    CHECK(TensorsEqual(*got, empty));
  }
}

TEST_CASE("a push header that says dead but carries bytes is refused") {
  auto words = EncodePushHeaderForTest(3, Tensor());
  auto header = DecodePushHeader(words);
  REQUIRE(header.ok());
  CHECK(header->dead);
  CHECK(CheckPayload(*header, 0).ok());
  CHECK(CheckPayload(*header, 1).code() == Code::kInvalidArgument);
  CHECK_FALSE(AllocatePushed(*header)->initialized());
}

TEST_CASE("many pushes in flight at once all arrive") {
  for (Kind kind : {Kind::kShm, Kind::kStream}) {
    DYNAMIC_SECTION(Name(kind)) {
      Pair pair(kind);
      kj::Vector<kj::Promise<void>> pushes;
      for (int i = 0; i < 64; ++i) {
        pushes.add(pair.a->Push("b", 7, "t" + std::to_string(i), Pattern(1000 + i * 40000)));
      }
      kj::joinPromises(pushes.releaseAsArray()).wait(pair.io.waitScope);
      for (int i = 0; i < 64; ++i) {
        REQUIRE(pair.WaitFor(Key{7, "t" + std::to_string(i)}).ok());
        CHECK(TensorsEqual(*pair.received.at(Key{7, "t" + std::to_string(i)}),
                           Pattern(1000 + i * 40000)));
      }
      CHECK(pair.b->stats().pushes_received == 64);
      CHECK(pair.a->traffic().at("b").bytes_sent == pair.b->traffic().at("a").bytes_received);
    }
  }
}

TEST_CASE("pushes over shared memory with a ticket the receiver did not give, or revoked, are refused") {
  Pair pair(Kind::kShm);
  // A forged invitation: the right address, another ticket.
  DataPlane::Invitation forged = pair.invitation;
  forged.ticket.assign(forged.ticket.size(), 'x');
  REQUIRE(pair.a->ConnectShared("b", forged).ok());
  (void)Settle(pair.a->Push("b", 1, "k", Pattern(10))).wait(pair.io.waitScope);
  (void)Settle(pair.a->Push("b", 1, "big", Pattern(4 << 20))).wait(pair.io.waitScope);
  CHECK_FALSE(pair.WaitFor(Key{1, "k"}, 200).ok());
  CHECK(pair.received.empty());
  CHECK(pair.b->stats().pushes_refused == 2);

  // The real ticket works, until it is revoked.
  REQUIRE(pair.a->ConnectShared("b", pair.invitation).ok());
  REQUIRE(pair.PushAndWait(2, "k", Pattern(10)).ok());
  pair.b->Revoke(pair.invitation.ticket);
  (void)Settle(pair.a->Push("b", 3, "k", Pattern(10))).wait(pair.io.waitScope);
  CHECK_FALSE(pair.WaitFor(Key{3, "k"}, 200).ok());
  CHECK(pair.b->stats().pushes_refused == 3);
}

TEST_CASE("a push larger than the receiver's budget fails on both sides with RESOURCE_EXHAUSTED") {
  for (Kind kind : {Kind::kShm, Kind::kStream}) {
    INFO(Name(kind));
    Pair pair(kind, DataPlane::Options{.max_held_bytes = 8 << 20});
    Status s = pair.PushAndWait(1, "huge", Pattern(16 << 20));
    CHECK_FALSE(s.ok());
    REQUIRE(pair.WaitFor(Key{1, "huge"}).ok());
    const auto& got = pair.received.at(Key{1, "huge"});
    CHECK(got.status().code() == Code::kResourceExhausted);
    CHECK(got.status().message().find("tensor 'huge' of step 1") != std::string::npos);
    // Twice in a row, and then the plane goes on working.
    CHECK_FALSE(pair.PushAndWait(2, "huge", Pattern(16 << 20)).ok());
    REQUIRE(pair.PushAndWait(3, "small", Pattern(1 << 20)).ok());
  }
}

TEST_CASE("pushes beyond the held budget wait until received tensors are released") {
  for (Kind kind : {Kind::kShm, Kind::kStream}) {
    INFO(Name(kind));
    Pair pair(kind, DataPlane::Options{.max_held_bytes = 8 << 20,
                                       .hold_timeout = 30 * kj::SECONDS});
    // Two 4 MiB tensors fill the budget while they are alive.
    REQUIRE(pair.PushAndWait(1, "x", Pattern(4 << 20)).ok());
    REQUIRE(pair.PushAndWait(1, "y", Pattern(4 << 20)).ok());
    auto third = pair.a->Push("b", 1, "z", Pattern(4 << 20)).fork();
    CHECK_FALSE(pair.WaitFor(Key{1, "z"}, 100).ok());  // held back
    CHECK(pair.b->stats().held_back >= 1);
    if (kind == Kind::kStream) {
      // Held back, the stream still carries small pushes and step messages.
      REQUIRE(pair.PushAndWait(1, "small", Pattern(100)).ok());
    }
    pair.received.erase(Key{1, "x"});  // the consumer is done with one
    REQUIRE(pair.WaitFor(Key{1, "z"}).ok());
    third.addBranch().wait(pair.io.waitScope);
    CHECK(TensorsEqual(*pair.received.at(Key{1, "z"}), Pattern(4 << 20)));
  }
}

TEST_CASE("a push held back beyond its timeout fails with RESOURCE_EXHAUSTED") {
  for (Kind kind : {Kind::kShm, Kind::kStream}) {
    INFO(Name(kind));
    Pair pair(kind, DataPlane::Options{.max_held_bytes = 4 << 20,
                                       .hold_timeout = 300 * kj::MILLISECONDS});
    REQUIRE(pair.PushAndWait(1, "x", Pattern(4 << 20)).ok());
    auto held = Settle(pair.a->Push("b", 1, "y", Pattern(4 << 20))).eagerlyEvaluate(nullptr);
    REQUIRE(pair.WaitFor(Key{1, "y"}).ok());
    const auto& got = pair.received.at(Key{1, "y"});
    CHECK(got.status().code() == Code::kResourceExhausted);
    CHECK(got.status().message().find("--max-received-bytes") != std::string::npos);
    // The sender's push is over too, not left pending, and says why.
    const Status sender = held.wait(pair.io.waitScope);
    if (kind == Kind::kStream) CHECK(sender.code() == Code::kResourceExhausted);
  }
}

TEST_CASE("received buffers are reused across steps: no new blocks in steady state") {
  for (Kind kind : {Kind::kShm, Kind::kStream}) {
    INFO(Name(kind));
    Pair pair(kind);
    for (int step = 0; step < 3; ++step) {
      REQUIRE(pair.PushAndWait(step, "w", Pattern(8 << 20)).ok());
      pair.received.clear();
    }
    const size_t mapped = pair.b->stats().pool.blocks_mapped;
    for (int step = 3; step < 20; ++step) {
      REQUIRE(pair.PushAndWait(step, "w", Pattern(8 << 20)).ok());
      pair.received.clear();
    }
    CHECK(pair.b->stats().pool.blocks_mapped == mapped);
    CHECK(pair.b->stats().pool.reused >= 17);
  }
}

// Step messages (the step channel's, daemon/transport/step_messages.h) as
// `b` receives them: the sending task, by its ticket, and the message.
struct StepLog {
  struct Entry {
    std::string from;
    uint64_t graph;
    int64_t step;
    StepMessage::Kind kind;
  };
  std::vector<Entry> got;
  std::vector<std::string> texts;  // each message's status text, in order
  std::vector<std::pair<std::string, Status>> gone;

  void Listen(DataPlane& plane) {
    plane.SetStepHandlers(
        [this](const std::string& from, const StepMessage& m) {
          got.push_back({from, m.graph, m.step_id, m.kind});
          texts.push_back(m.status.message());
        },
        [this](const std::string& task, const Status& why) { gone.emplace_back(task, why); });
  }
  bool WaitFor(Pair& pair, size_t n, int rounds = 2000) {
    for (int i = 0; i < rounds && got.size() < n; ++i) {
      pair.io.provider->getTimer().afterDelay(1 * kj::MILLISECONDS).wait(pair.io.waitScope);
    }
    return got.size() >= n;
  }
};

Status SendRun(DataPlane& plane, const std::string& task, uint64_t graph, int64_t step) {
  return plane.SendStepMessage(task, StepMessage::Run(graph, step, 1000, false));
}

TEST_CASE("step messages arrive named by the task the link was opened for") {
  for (Kind kind : {Kind::kShm, Kind::kStream, Kind::kReadAhead}) {
    INFO(Name(kind));
    Pair pair(kind);
    StepLog log;
    log.Listen(*pair.b);
    for (int64_t step = 1; step <= 3; ++step) REQUIRE(SendRun(*pair.a, "b", 77, step).ok());
    REQUIRE(log.WaitFor(pair, 3));
    for (int64_t step = 1; step <= 3; ++step) {
      CHECK(log.got[step - 1].from == "a");  // the task b invited or welcomed
      CHECK(log.got[step - 1].graph == 77);
      CHECK(log.got[step - 1].step == step);
      CHECK(log.got[step - 1].kind == StepMessage::Kind::kRun);
    }
    CHECK(pair.b->stats().step_messages_received == 3);
    CHECK(pair.a->stats().step_messages_sent == 3);
  }
}

TEST_CASE("step messages over shared memory with a forged or revoked ticket are refused") {
  Pair pair(Kind::kShm);
  StepLog log;
  log.Listen(*pair.b);
  DataPlane::Invitation forged = pair.invitation;
  forged.ticket.assign(forged.ticket.size(), 'x');
  REQUIRE(pair.a->ConnectShared("b", forged).ok());
  REQUIRE(SendRun(*pair.a, "b", 77, 4).ok());
  for (int i = 0; i < 2000 && pair.b->stats().step_messages_refused < 1; ++i) {
    pair.io.provider->getTimer().afterDelay(1 * kj::MILLISECONDS).wait(pair.io.waitScope);
  }
  REQUIRE(pair.b->stats().step_messages_refused == 1);
  REQUIRE(pair.a->ConnectShared("b", pair.invitation).ok());
  pair.b->Revoke(pair.invitation.ticket);
  REQUIRE(SendRun(*pair.a, "b", 77, 5).ok());
  CHECK_FALSE(log.WaitFor(pair, 1, 200));
  CHECK(pair.b->stats().step_messages_refused == 2);
  CHECK(pair.b->stats().pushes_refused == 0);
}

TEST_CASE("a step message's sender hears when its link goes, and cannot send after") {
  for (Kind kind : {Kind::kShm, Kind::kStream}) {
    INFO(Name(kind));
    Pair pair(kind);
    StepLog sender;
    sender.Listen(*pair.a);
    pair.a->Disconnect("b");
    REQUIRE(sender.gone.size() == 1);
    CHECK(sender.gone[0].first == "b");
    CHECK(sender.gone[0].second.code() == Code::kUnavailable);
    const Status after = SendRun(*pair.a, "b", 1, 1);
    CHECK(after.code() == Code::kUnavailable);
    CHECK(after.message().find("b") != std::string::npos);
    // Twice: a second disconnect of a task without a link says nothing more.
    pair.a->Disconnect("b");
    CHECK(sender.gone.size() == 1);
    // Connected again, it sends again.
    if (kind == Kind::kShm) {
      REQUIRE(pair.a->ConnectShared("b", pair.invitation).ok());
    } else {
      pair.OpenStream();
    }
    StepLog receiver;
    receiver.Listen(*pair.b);
    REQUIRE(SendRun(*pair.a, "b", 2, 2).ok());
    REQUIRE(receiver.WaitFor(pair, 1));
    CHECK(receiver.got[0].graph == 2);
  }
}

TEST_CASE("a stream the receiver drops fails the pushes in flight, and the sender hears once") {
  Pair pair(Kind::kStream, DataPlane::Options{.max_held_bytes = 4 << 20});
  StepLog sender;
  sender.Listen(*pair.a);
  std::vector<std::string> lost;
  pair.a->SetOnLinkLost([&](const std::string& task) { lost.push_back(task); });
  REQUIRE(pair.PushAndWait(1, "x", Pattern(4 << 20)).ok());  // fills b's budget
  auto held = Settle(pair.a->Push("b", 1, "y", Pattern(4 << 20))).eagerlyEvaluate(nullptr);
  CHECK_FALSE(pair.WaitFor(Key{1, "y"}, 50).ok());
  pair.served = nullptr;  // b stops serving: the connection closes
  const Status failed = held.wait(pair.io.waitScope);
  CHECK(failed.code() == Code::kUnavailable);
  CHECK(failed.message().find("b") != std::string::npos);
  for (int i = 0; i < 2000 && lost.empty(); ++i) {
    pair.io.provider->getTimer().afterDelay(1 * kj::MILLISECONDS).wait(pair.io.waitScope);
  }
  REQUIRE(lost == std::vector<std::string>{"b"});
  REQUIRE(sender.gone.size() == 1);
  CHECK_FALSE(pair.a->Connected("b"));
  CHECK(Settle(pair.a->Push("b", 2, "z", Pattern(10))).wait(pair.io.waitScope).code() ==
        Code::kUnavailable);
}

// A peer that dies inside a large tensor's bytes: the receiver ends that
// stream and gives back the block it granted, so the budget is whole again
// for the next large tensor (64 MiB and an odd 3 bytes, bit-exact).
TEST_CASE("a peer dying inside a large tensor gives back the room it was granted") {
  using stream::FrameHeader;
  using stream::FrameKind;
  constexpr int64_t kBytes = (int64_t{64} << 20) + 3;
  Pair pair(Kind::kStream, DataPlane::Options{.max_held_bytes = BufferPool::BlockSize(kBytes),
                                              .hold_timeout = 5 * kj::SECONDS});
  const Tensor big = Pattern(kBytes);
  auto [client, server] = pair.Loopback();
  kj::AsyncIoStream& s = *server;
  auto ended = stream::ReceiveHello(s).then([&](stream::Hello hello) {
    return pair.b->ServeStream(hello.task, kj::mv(server), false);
  });
  stream::SendHello(*client, stream::Hello{.task = "dying"}).wait(pair.io.waitScope);
  stream::ReceiveWelcome(*client).wait(pair.io.waitScope);
  auto meta = EncodePushHeader("", 7, "big", big);
  const FrameHeader offer{.kind = FrameKind::kOffer,
                          .meta_bytes = static_cast<uint32_t>(meta.asBytes().size()),
                          .bytes = static_cast<uint64_t>(kBytes),
                          .tag = 1};
  stream::WriteFrame(*client, offer, meta, {}).wait(pair.io.waitScope);
  auto grant = stream::ReadFrame(*client, stream::Side::kTask).wait(pair.io.waitScope);
  REQUIRE(grant != nullptr);
  REQUIRE(KJ_ASSERT_NONNULL(grant).header.kind == FrameKind::kGrant);
  REQUIRE(stream::DecodeGrant(KJ_ASSERT_NONNULL(grant).meta)->status.ok());
  CHECK(pair.b->stats().pool.bytes_in_use >= static_cast<size_t>(kBytes));
  // Half the bytes, then the peer is gone.
  const FrameHeader data{.kind = FrameKind::kData, .bytes = static_cast<uint64_t>(kBytes), .tag = 1};
  auto half = kj::arrayPtr(static_cast<const kj::byte*>(big.raw_data()), kBytes / 2);
  stream::WriteFrame(*client, data, nullptr, half).wait(pair.io.waitScope);
  client = nullptr;
  const Status why = ended.wait(pair.io.waitScope);
  CHECK_FALSE(why.ok());
  CHECK(why.message().find("dying") != std::string::npos);
  CHECK(pair.b->stats().pool.bytes_in_use == 0);
  CHECK(pair.received.count(Key{7, "big"}) == 0);
  // The room is whole: a tensor as large arrives over the plane's own stream.
  const Status next = pair.PushAndWait(8, "next", big);
  INFO(next.ToString());
  REQUIRE(next.ok());
  const auto& got = pair.received.at(Key{8, "next"});
  REQUIRE(got.ok());
  CHECK(TensorsEqual(*got, big));
}

// Bytes a task that was welcomed might send that tfd never does: each ends
// its stream with a reason, the receiver's rendezvous gets nothing, and the
// plane serves the next stream.
TEST_CASE("hostile frames on a stream end it with the reason and the plane serves on") {
  using stream::FrameHeader;
  using stream::FrameKind;
  const Tensor t = Pattern(100);
  auto header_words = [&](int64_t step) { return EncodePushHeaderForTest(step, t); };
  struct Case {
    const char* what;
    std::function<kj::Array<kj::byte>()> bytes;
  };
  auto frame = [](FrameHeader h, kj::ArrayPtr<const capnp::word> meta, size_t payload) {
    auto head = stream::EncodeFrameHeader(h);
    auto out = kj::heapArray<kj::byte>(head.size() + meta.asBytes().size() + payload);
    memcpy(out.begin(), head.data(), head.size());
    if (meta.size() > 0) memcpy(out.begin() + head.size(), meta.begin(), meta.asBytes().size());
    memset(out.begin() + head.size() + meta.asBytes().size(), 7, payload);
    return out;
  };
  const std::vector<Case> cases = {
      {"an unknown kind", [&] { return frame({.kind = FrameKind(99)}, nullptr, 0); }},
      {"a welcome from the opener", [&] { return frame({.kind = FrameKind::kWelcome}, nullptr, 0); }},
      {"meta over the limit",
       [&] { return frame({.kind = FrameKind::kPush, .meta_bytes = 1 << 30}, nullptr, 0); }},
      {"a push over the inline limit",
       [&] {
         auto meta = header_words(1);
         return frame({.kind = FrameKind::kPush,
                       .meta_bytes = static_cast<uint32_t>(meta.asBytes().size()),
                       .bytes = uint64_t{1} << 40},
                      meta, 0);
       }},
      {"a payload that does not match its shape",
       [&] {
         auto meta = header_words(1);
         return frame({.kind = FrameKind::kPush,
                       .meta_bytes = static_cast<uint32_t>(meta.asBytes().size()),
                       .bytes = 99},
                      meta, 99);
       }},
      {"data never granted",
       [&] { return frame({.kind = FrameKind::kData, .bytes = 16, .tag = 5}, nullptr, 16); }},
      {"malformed meta",
       [&] {
         auto junk = kj::heapArray<capnp::word>(4);
         memset(junk.asBytes().begin(), 0xff, junk.asBytes().size());
         return frame({.kind = FrameKind::kOffer, .meta_bytes = 32, .bytes = 1 << 20, .tag = 1},
                      junk, 0);
       }},
  };
  for (Kind kind : {Kind::kStream, Kind::kReadAhead}) {
    INFO(Name(kind));
    Pair pair(kind);
    for (const Case& c : cases) {
      INFO(c.what);
      // A raw connection that says hello properly, then misbehaves.
      Pair::Connection raw = pair.Connect();
      stream::SendHello(*raw.client, stream::Hello{.task = "mallory"}).wait(pair.io.waitScope);
      auto bytes = c.bytes();
      raw.client->write(bytes.begin(), bytes.size()).wait(pair.io.waitScope);
      const Status why = raw.served.wait(pair.io.waitScope);
      CHECK_FALSE(why.ok());
      CHECK(why.message().find("mallory") != std::string::npos);
    }
    CHECK(pair.received.empty());
    // The plane's own stream still works.
    REQUIRE(pair.PushAndWait(1, "fine", t).ok());
  }
}

// Frames as a peer's stream carries them, for tests that write bytes.
kj::Array<kj::byte> Frame(stream::FrameHeader h, kj::ArrayPtr<const kj::byte> meta,
                          kj::ArrayPtr<const kj::byte> payload = {}) {
  h.meta_bytes = static_cast<uint32_t>(meta.size());
  auto head = stream::EncodeFrameHeader(h);
  kj::Vector<kj::byte> out;
  out.addAll(head.data(), head.data() + head.size());
  out.addAll(meta);
  out.addAll(payload);
  return out.releaseAsArray();
}
kj::Array<kj::byte> StepFrame(const StepMessage& m) {
  auto words = EncodeStepMessage(m, "");
  REQUIRE(words.ok());
  return Frame({.kind = stream::FrameKind::kStep}, words->asBytes());
}

// Several frames in one read, a frame split across reads anywhere, a step
// frame behind a push whose payload leaves it unaligned, a malformed step
// message between good ones: each step arrives once, whole and in order,
// whether the receiver reads frame by frame or decodes what it read ahead.
TEST_CASE("step frames arrive whole and in order however the bytes are cut") {
  const Tensor odd = Pattern(3);  // a payload of 3 bytes: what follows is unaligned
  auto junk = kj::heapArray<capnp::word>(4);
  memset(junk.asBytes().begin(), 0xff, junk.asBytes().size());
  kj::Vector<kj::byte> bytes;
  bytes.addAll(StepFrame(StepMessage::Run(9, 1, 1000, false)));
  bytes.addAll(Frame({.kind = stream::FrameKind::kPush, .bytes = 3},
                     EncodePushHeaderForTest(5, odd).asBytes(),
                     kj::arrayPtr(odd.data<uint8_t>(), 3)));
  bytes.addAll(StepFrame(StepMessage::Run(9, 2, 1000, false)));
  bytes.addAll(Frame({.kind = stream::FrameKind::kStep}, junk.asBytes()));
  bytes.addAll(StepFrame(StepMessage::Done(9, 3, errors::Aborted(std::string(9000, 'z')))));
  bytes.addAll(StepFrame(StepMessage::Cancel(9, 4)));
  for (Kind kind : {Kind::kStream, Kind::kReadAhead}) {
    Pair pair(kind);
    StepLog log;
    log.Listen(*pair.b);
    // Every cut point near the frame boundaries, and a stride through the
    // long message (each cut is a connection of its own).
    std::vector<size_t> cuts;
    for (size_t at = 0; at <= bytes.size(); ++at) {
      if (at < 200 || at + 100 > bytes.size() || at % 997 == 0) cuts.push_back(at);
    }
    for (size_t cut : cuts) {
      INFO(Name(kind) << ", cut at " << cut << " of " << bytes.size());
      log.got.clear();
      log.texts.clear();
      pair.received.clear();
      const uint64_t refused = pair.b->stats().step_messages_refused;
      Pair::Connection raw = pair.Connect();
      stream::SendHello(*raw.client, stream::Hello{.task = "a"}).wait(pair.io.waitScope);
      raw.client->write(bytes.begin(), cut).wait(pair.io.waitScope);
      pair.io.provider->getTimer().afterDelay(kj::MICROSECONDS * 50).wait(pair.io.waitScope);
      raw.client->write(bytes.begin() + cut, bytes.size() - cut).wait(pair.io.waitScope);
      REQUIRE(log.WaitFor(pair, 4));
      raw.client->shutdownWrite();
      const Status why = raw.served.wait(pair.io.waitScope);
      CHECK(why.ok());
      REQUIRE(log.got.size() == 4);
      for (int64_t i = 0; i < 4; ++i) {
        CHECK(log.got[i].from == "a");
        CHECK(log.got[i].graph == 9);
        CHECK(log.got[i].step == i + 1);
      }
      CHECK(log.got[2].kind == StepMessage::Kind::kDone);
      CHECK(log.texts[2] == std::string(9000, 'z'));
      CHECK(log.got[3].kind == StepMessage::Kind::kCancel);
      CHECK(pair.b->stats().step_messages_refused == refused + 1);
      REQUIRE(pair.received.count(Key{5, "k"}) == 1);
      CHECK(TensorsEqual(*pair.received.at(Key{5, "k"}), odd));
    }
  }
}

TEST_CASE("a stream that ends inside a step frame ends with an error, twice") {
  const auto frame = StepFrame(StepMessage::Run(9, 1, 1000, false));
  for (Kind kind : {Kind::kStream, Kind::kReadAhead}) {
    Pair pair(kind);
    StepLog log;
    log.Listen(*pair.b);
    for (size_t cut : {size_t{3}, stream::kHeaderBytes, frame.size() - 1}) {
      INFO(Name(kind) << ", cut at " << cut);
      Pair::Connection raw = pair.Connect();
      stream::SendHello(*raw.client, stream::Hello{.task = "mallory"}).wait(pair.io.waitScope);
      raw.client->write(frame.begin(), cut).wait(pair.io.waitScope);
      raw.client->shutdownWrite();
      const Status why = raw.served.wait(pair.io.waitScope);
      CHECK_FALSE(why.ok());
      CHECK(why.message().find("mallory") != std::string::npos);
    }
    CHECK(log.got.empty());
    // The plane's own stream still carries steps.
    REQUIRE(SendRun(*pair.a, "b", 1, 1).ok());
    REQUIRE(log.WaitFor(pair, 1));
  }
}

// A sender whose socket fills: a step message the kernel took only in part
// is finished by the write loop, and every message behind it waits its
// turn. Many large messages (3 to 45 kB, 4.8 MB in all; some larger than the send
// buffer, so the kernel takes part of one) sent in one turn of the loop, which
// the receiver cannot read until it ends, through a small send buffer.
TEST_CASE("step messages sent faster than the socket drains arrive whole and in order") {
  constexpr int kMessages = 200;
  for (Kind kind : {Kind::kStream, Kind::kReadAhead}) {
    INFO(Name(kind));
    Pair pair(kind);
    pair.a->Disconnect("b");
    // (The receiver's buffer is left as it is: shrinking it under an open
    // connection makes TCP drop and retransmit, which tests nothing here.)
    pair.OpenStream([](int client, int) {
      const int small = 4096;
      REQUIRE(setsockopt(client, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)) == 0);
    });
    StepLog log;
    log.Listen(*pair.b);
    auto text = [](int i) { return std::to_string(i) + std::string(3000 + 211 * (kMessages - i), 'a' + i % 26); };
    for (int i = 0; i < kMessages; ++i) {
      REQUIRE(pair.a->SendStepMessage("b", StepMessage::Done(3, i, errors::Aborted(text(i)))).ok());
    }
    const bool all = log.WaitFor(pair, kMessages, 20000);
    std::string served = "serving";
    KJ_IF_MAYBE(f, pair.served) {
      auto branch = f->addBranch();
      if (branch.poll(pair.io.waitScope)) served = branch.wait(pair.io.waitScope).ToString();
    }
    INFO(log.got.size() << " arrived, " << log.gone.size() << " links lost, refused "
         << pair.b->stats().step_messages_refused << "; b: " << served);
    REQUIRE(all);
    for (int i = 0; i < kMessages; ++i) {
      INFO("message " << i);
      CHECK(log.got[i].step == i);
      CHECK(log.texts[i] == text(i));
    }
    CHECK(pair.b->stats().step_messages_refused == 0);
  }
}

// What a peer that reaches UCX but is not tfd might send on the step
// message's id: junk, a frame larger than any step message, a header.
TEST_CASE("hostile step messages over shared memory are refused and the plane serves on") {
  Pair pair(Kind::kShm);
  StepLog log;
  log.Listen(*pair.b);
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  params.address = reinterpret_cast<const ucp_address_t*>(pair.invitation.address.data());
  ucp_ep_h ep = nullptr;
  REQUIRE(ucp_ep_create(pair.a_worker->worker(), &params, &ep) == UCS_OK);
  auto send = [&](const std::string& header, const std::string& body, bool eager = false) {
    ucp_request_param_t param{};
    if (eager) {
      param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = UCP_AM_SEND_FLAG_EAGER;
    }
    void* request = ucp_am_send_nbx(ep, 2, header.data(), header.size(), body.data(), body.size(),
                                    &param);
    while (UCS_PTR_IS_PTR(request) && ucp_request_check_status(request) == UCS_INPROGRESS) {
      pair.a_worker->Progress();
      pair.io.provider->getTimer().afterDelay(1 * kj::MILLISECONDS).wait(pair.io.waitScope);
    }
    if (UCS_PTR_IS_PTR(request)) ucp_request_free(request);
  };
  std::string junk(200, '\xff');
  send("", junk);                               // not a message
  send("", std::string(1 << 20, 'x'));          // by rendezvous, as no step message is sent
  send("", std::string(9 << 20, 'x'), true);    // eager, and larger than any step message
  send("", std::string(20 << 10, '\0'));        // zeros: no ticket
  send("hdr", std::string(64, '\0'));           // with a header
  send("", "");                                 // empty
  for (int i = 0; i < 300 && pair.b->stats().step_messages_refused < 6; ++i) {
    pair.io.provider->getTimer().afterDelay(1 * kj::MILLISECONDS).wait(pair.io.waitScope);
  }
  CHECK(pair.b->stats().step_messages_refused == 6);
  CHECK(log.got.empty());
  // The real thing still arrives.
  REQUIRE(SendRun(*pair.a, "b", 9, 9).ok());
  REQUIRE(log.WaitFor(pair, 1));
  CHECK(log.got[0].graph == 9);
  ucp_request_param_t close{};
  close.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  close.flags = UCP_EP_CLOSE_FLAG_FORCE;
  void* closing = ucp_ep_close_nbx(ep, &close);
  while (UCS_PTR_IS_PTR(closing) && ucp_request_check_status(closing) == UCS_INPROGRESS) {
    pair.a_worker->Progress();
  }
  if (UCS_PTR_IS_PTR(closing)) ucp_request_free(closing);
}

// A task answers on the stream its master opened (DataPlane::Reply): the
// answer needs no link of the task's own, and once that stream has ended
// there is no way back but such a link.
TEST_CASE("an answer goes back on the stream its request came on") {
  for (Kind kind : {Kind::kStream, Kind::kReadAhead}) {
    INFO(Name(kind));
    Pair pair(kind);
    StepLog at_a, at_b;
    at_a.Listen(*pair.a);
    at_b.Listen(*pair.b);
    REQUIRE(SendRun(*pair.a, "b", 77, 1).ok());
    REQUIRE(at_b.WaitFor(pair, 1));
    REQUIRE_FALSE(pair.b->Connected("a"));  // b has no link of its own to a
    const std::string long_text(9000, 'z');  // larger than a read-ahead buffer
    REQUIRE(pair.b->Reply("a", StepMessage::Done(77, 1, OkStatus())).ok());
    REQUIRE(pair.b->Reply("a", StepMessage::Done(77, 2, errors::Aborted(long_text))).ok());
    REQUIRE(at_a.WaitFor(pair, 2));
    for (int i = 0; i < 2; ++i) {
      CHECK(at_a.got[i].from == "b");
      CHECK(at_a.got[i].kind == StepMessage::Kind::kDone);
      CHECK(at_a.got[i].graph == 77);
      CHECK(at_a.got[i].step == i + 1);
    }
    CHECK(at_a.texts[1] == long_text);
    CHECK(pair.a->stats().step_messages_received == 2);
    CHECK(pair.b->stats().step_messages_sent == 2);
    // a lets its link go: b's side of the stream ends, and with it the way back.
    pair.a->Disconnect("b");
    CHECK(KJ_ASSERT_NONNULL(pair.served).addBranch().wait(pair.io.waitScope).ok());
    const Status after = pair.b->Reply("a", StepMessage::Done(77, 3, OkStatus()));
    CHECK(after.code() == Code::kUnavailable);
    CHECK(after.message().find("a") != std::string::npos);
  }
}

// A task server that drops a stream without its ending (a connection
// closed on shutdown) takes the way back with it.
TEST_CASE("a stream its server dropped answers nothing more, and its count goes") {
  Pair pair(Kind::kReadAhead);
  REQUIRE(pair.b->RepliesTo("a"));
  CHECK(pair.b->stats().streams_served == 1);
  pair.served = nullptr;
  CHECK_FALSE(pair.b->RepliesTo("a"));
  CHECK(pair.b->stats().streams_served == 0);
  CHECK(pair.b->Reply("a", StepMessage::Done(1, 1, OkStatus())).code() == Code::kUnavailable);
}

TEST_CASE("without a stream from the requester an answer goes on the answering task's link") {
  Pair pair(Kind::kShm);
  StepLog at_a;
  at_a.Listen(*pair.a);
  CHECK(pair.b->Reply("a", StepMessage::Done(5, 1, OkStatus())).code() == Code::kUnavailable);
  REQUIRE(pair.b->ConnectShared("a", pair.a->Invite("b")).ok());
  REQUIRE(pair.b->Reply("a", StepMessage::Done(5, 1, OkStatus())).ok());
  REQUIRE(at_a.WaitFor(pair, 1));
  CHECK(at_a.got[0].from == "b");
  CHECK(at_a.got[0].kind == StepMessage::Kind::kDone);
}

// The opener's side reads what the task sends back: step messages arrive as
// from the task, a malformed one is refused and the link reads on, and a
// frame only an opener sends ends the link (its owner hears once).
TEST_CASE("what a task sends back on a stream: steps arrive, junk is refused, a push ends it") {
  Pair pair(Kind::kStream);
  StepLog at_a;
  at_a.Listen(*pair.a);
  auto [client, server] = pair.Loopback();
  auto linked = pair.a->ConnectStream("c", kj::mv(client), stream::Hello{.task = "a"}, false);
  CHECK(stream::ReceiveHello(*server).wait(pair.io.waitScope).task == "a");
  stream::SendWelcome(*server, pair.b->Welcome()).wait(pair.io.waitScope);
  linked.wait(pair.io.waitScope);
  auto junk = kj::heapArray<capnp::word>(4);
  memset(junk.asBytes().begin(), 0xff, junk.asBytes().size());
  kj::Vector<kj::byte> bytes;
  bytes.addAll(Frame({.kind = stream::FrameKind::kStep}, junk.asBytes()));
  bytes.addAll(StepFrame(StepMessage::Done(4, 1, OkStatus())));
  server->write(bytes.begin(), bytes.size()).wait(pair.io.waitScope);
  REQUIRE(at_a.WaitFor(pair, 1));
  CHECK(at_a.got[0].from == "c");
  CHECK(at_a.got[0].kind == StepMessage::Kind::kDone);
  CHECK(pair.a->stats().step_messages_refused == 1);
  CHECK(pair.a->Connected("c"));
  const Tensor t = Pattern(8);
  auto push = Frame({.kind = stream::FrameKind::kPush, .bytes = 8},
                    EncodePushHeaderForTest(5, t).asBytes(), kj::arrayPtr(t.data<uint8_t>(), 8));
  server->write(push.begin(), push.size()).wait(pair.io.waitScope);
  for (int i = 0; i < 2000 && at_a.gone.empty(); ++i) {
    pair.io.provider->getTimer().afterDelay(1 * kj::MILLISECONDS).wait(pair.io.waitScope);
  }
  REQUIRE(at_a.gone.size() == 1);
  CHECK(at_a.gone[0].first == "c");
  CHECK(at_a.gone[0].second.code() == Code::kUnavailable);
  CHECK(at_a.gone[0].second.message().find("push") != std::string::npos);
  CHECK_FALSE(pair.a->Connected("c"));
  CHECK(at_a.got.size() == 1);
  // a's link to b is untouched.
  REQUIRE(pair.PushAndWait(6, "fine", t).ok());
}

}  // namespace
}  // namespace tfd
