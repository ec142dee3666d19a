// The data plane between two UCX workers on one event loop: tensors arrive
// bit-exact at sizes around UCX's eager/rendezvous switch and the pool's
// block sizes, with UCX's own choice of transport (shared memory: both are
// on one host), shared memory forced, and TCP forced; many pushes in flight
// (a full shared-memory FIFO must not stall the loop); only ticketed pushes
// are accepted; the held-bytes budget holds pushes back and refuses what
// cannot fit. tests/integration/transfer_test.cc does the same between tfd
// processes.
#include <catch2/catch.hpp>
#include <kj/async-io.h>
#include <kj/async-unix.h>

#include <map>
#include <numeric>

#include "daemon/transport/data_plane.h"

namespace tfd {
namespace {

using Key = std::pair<int64_t, std::string>;

// Two tasks' data planes in this process, "a" pushing to "b".
struct Pair {
  explicit Pair(const std::string& transports, DataPlane::Options b_options = {}) {
    auto made_a = UcxWorker::Create(io.unixEventPort, io.provider->getTimer(), {.transports = transports}, nullptr);
    auto made_b = UcxWorker::Create(io.unixEventPort, io.provider->getTimer(), {.transports = transports}, nullptr);
    INFO(made_a.status().ToString() << " " << made_b.status().ToString());
    REQUIRE((made_a.ok() && made_b.ok()));
    a_worker = std::move(made_a).value();
    b_worker = std::move(made_b).value();
    auto keep = [this](int64_t step, const std::string& key, StatusOr<Tensor> t) {
      received.emplace(Key{step, key}, std::move(t));
    };
    a = std::make_unique<DataPlane>(*a_worker, io.provider->getTimer(), DataPlane::Options{},
                                    keep, nullptr);
    b = std::make_unique<DataPlane>(*b_worker, io.provider->getTimer(), b_options, keep,
                                    nullptr);
    invitation = b->Invite("a");
    Status connected = a->Connect("b", invitation);
    INFO(connected.ToString());
    REQUIRE(connected.ok());
  }
  ~Pair() {
    a.reset();
    b.reset();
  }

  // Pushes and waits until b has it (or the push failed).
  Status PushAndWait(int64_t step, const std::string& key, const Tensor& t) {
    auto pushed = a->Push("b", step, key, t).then([]() { return OkStatus(); },
                                                   [](kj::Exception&& e) { return StatusFromKj(e); });
    Status s = pushed.wait(io.waitScope);
    if (!s.ok()) return s;
    return WaitFor(Key{step, key});
  }

  Status WaitFor(const Key& key, int rounds = 2000) {
    for (int i = 0; i < rounds && received.count(key) == 0; ++i) {
      io.provider->getTimer().afterDelay(1 * kj::MILLISECONDS).wait(io.waitScope);
    }
    return received.count(key) ? OkStatus() : errors::DeadlineExceeded("never arrived");
  }

  kj::AsyncIoContext io = kj::setupAsyncIo();
  std::unique_ptr<UcxWorker> a_worker, b_worker;
  std::unique_ptr<DataPlane> a, b;
  DataPlane::Invitation invitation;
  std::map<Key, StatusOr<Tensor>> received;
};

Tensor Pattern(int64_t bytes) {
  Tensor t = *Tensor::Allocate(DType::kUInt8, TensorShape({bytes}));
  uint8_t* p = t.data<uint8_t>();
  for (int64_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>((i * 131 + 7) >> 3);
  return t;
}

TEST_CASE("tensors arrive bit-exact at sizes around every threshold, on each transport") {
  for (const std::string transports : {"", "sm", "tcp"}) {
    INFO("UCX_TLS '" << transports << "'");
    Pair pair(transports);
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
    // float32 of another shape, and strings.
    Tensor floats = Tensor::FromVector<float>({1.5f, -2, 3e30f, 0}, TensorShape({2, 2}));
    REQUIRE(pair.PushAndWait(100, "f", floats).ok());
    CHECK(TensorsEqual(*pair.received.at(Key{100, "f"}), floats));
    Tensor strings = Tensor::FromVector<std::string>({"", "tfd", std::string(70000, 'x')});
    REQUIRE(pair.PushAndWait(101, "s", strings).ok());
    const auto& got_strings = pair.received.at(Key{101, "s"});
    INFO(got_strings.status().ToString());
    REQUIRE(got_strings.ok());
    CHECK(TensorsEqual(*got_strings, strings));
  }
}

TEST_CASE("many pushes in flight at once all arrive") {
  for (const std::string transports : {"", "tcp"}) {
    DYNAMIC_SECTION("UCX_TLS '" << transports << "'") {
      Pair pair(transports);
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
    }
  }
}

TEST_CASE("pushes with a ticket the receiver did not give, or revoked, are refused") {
  Pair pair("");
  // A forged invitation: the right address, another ticket.
  DataPlane::Invitation forged = pair.invitation;
  forged.ticket.assign(forged.ticket.size(), 'x');
  REQUIRE(pair.a->Connect("b", forged).ok());
  (void)pair.a->Push("b", 1, "k", Pattern(10)).then([] {}, [](kj::Exception&&) {})
      .wait(pair.io.waitScope);
  (void)pair.a->Push("b", 1, "big", Pattern(4 << 20)).then([] {}, [](kj::Exception&&) {})
      .wait(pair.io.waitScope);
  CHECK_FALSE(pair.WaitFor(Key{1, "k"}, 200).ok());
  CHECK(pair.received.empty());
  CHECK(pair.b->stats().pushes_refused == 2);

  // The real ticket works, until it is revoked.
  REQUIRE(pair.a->Connect("b", pair.invitation).ok());
  REQUIRE(pair.PushAndWait(2, "k", Pattern(10)).ok());
  pair.b->Revoke(pair.invitation.ticket);
  (void)pair.a->Push("b", 3, "k", Pattern(10)).then([] {}, [](kj::Exception&&) {})
      .wait(pair.io.waitScope);
  CHECK_FALSE(pair.WaitFor(Key{3, "k"}, 200).ok());
  CHECK(pair.b->stats().pushes_refused == 3);
}

TEST_CASE("a push larger than the receiver's budget fails on both sides with RESOURCE_EXHAUSTED") {
  Pair pair("", DataPlane::Options{.max_held_bytes = 8 << 20});
  Status s = pair.PushAndWait(1, "huge", Pattern(16 << 20));
  CHECK_FALSE(s.ok());
  REQUIRE(pair.WaitFor(Key{1, "huge"}).ok());
  const auto& got = pair.received.at(Key{1, "huge"});
  CHECK(got.status().code() == Code::kResourceExhausted);
  CHECK(got.status().message().find("tensor 'huge' of step 1") != std::string::npos);
  // And the plane goes on working.
  REQUIRE(pair.PushAndWait(2, "small", Pattern(1 << 20)).ok());
}

TEST_CASE("pushes beyond the held budget wait until received tensors are released") {
  Pair pair("", DataPlane::Options{.max_held_bytes = 8 << 20,
                                   .hold_timeout = 30 * kj::SECONDS});
  // Two 4 MiB tensors fill the budget while they are alive.
  REQUIRE(pair.PushAndWait(1, "x", Pattern(4 << 20)).ok());
  REQUIRE(pair.PushAndWait(1, "y", Pattern(4 << 20)).ok());
  auto third = pair.a->Push("b", 1, "z", Pattern(4 << 20)).fork();
  CHECK_FALSE(pair.WaitFor(Key{1, "z"}, 100).ok());  // held back
  CHECK(pair.b->stats().held_back >= 1);
  pair.received.erase(Key{1, "x"});  // the consumer is done with one
  REQUIRE(pair.WaitFor(Key{1, "z"}).ok());
  third.addBranch().wait(pair.io.waitScope);
  CHECK(TensorsEqual(*pair.received.at(Key{1, "z"}), Pattern(4 << 20)));
}

TEST_CASE("a push held back beyond its timeout fails with RESOURCE_EXHAUSTED") {
  Pair pair("", DataPlane::Options{.max_held_bytes = 4 << 20,
                                   .hold_timeout = 300 * kj::MILLISECONDS});
  REQUIRE(pair.PushAndWait(1, "x", Pattern(4 << 20)).ok());
  auto held = pair.a->Push("b", 1, "y", Pattern(4 << 20))
                  .then([] {}, [](kj::Exception&&) {})
                  .eagerlyEvaluate(nullptr);
  REQUIRE(pair.WaitFor(Key{1, "y"}).ok());
  const auto& got = pair.received.at(Key{1, "y"});
  CHECK(got.status().code() == Code::kResourceExhausted);
  CHECK(got.status().message().find("--max-received-bytes") != std::string::npos);
  held.wait(pair.io.waitScope);  // the sender's push is over too, not left pending
}

TEST_CASE("received buffers are reused across steps: no new blocks in steady state") {
  Pair pair("");
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

// With TLS on the control plane (DataPlane::Options::same_host_only), a
// peer on another host gets no endpoint: UCX would carry its tensors in
// clear text. One on this host still does.
TEST_CASE("under same_host_only, a peer on another host is refused an endpoint") {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  auto made_a = UcxWorker::Create(io.unixEventPort, io.provider->getTimer(), {}, nullptr);
  auto made_b = UcxWorker::Create(io.unixEventPort, io.provider->getTimer(), {}, nullptr);
  REQUIRE((made_a.ok() && made_b.ok()));
  auto drop = [](int64_t, const std::string&, StatusOr<Tensor>) {};
  DataPlane a(**made_a, io.provider->getTimer(), DataPlane::Options{.same_host_only = true}, drop,
              nullptr);
  DataPlane b(**made_b, io.provider->getTimer(), DataPlane::Options{}, drop, nullptr);
  DataPlane::Invitation elsewhere = b.Invite("a");
  elsewhere.host = "another-host.example";
  const Status refused = a.Connect("/job:ps/replica:0/task:1", elsewhere);
  CHECK(refused.code() == Code::kFailedPrecondition);
  CHECK(refused.message().find("/job:ps/replica:0/task:1") != std::string::npos);
  CHECK(refused.message().find("another host") != std::string::npos);
  CHECK(refused.message().find("clear text") != std::string::npos);
  // Refused twice in a row, then a same-host invitation connects.
  CHECK(a.Connect("/job:ps/replica:0/task:1", elsewhere).code() == Code::kFailedPrecondition);
  CHECK(a.Connect("/job:ps/replica:0/task:1", b.Invite("a")).ok());
}

// Step messages (the step channel's, daemon/distributed/step_channel.h) as
// `b` receives them: the sending task, by its ticket, and the message.
struct StepLog {
  struct Entry {
    std::string from;
    uint64_t graph;
    int64_t step;
    proto::StepMessage::Which which;
  };
  std::vector<Entry> got;
  std::vector<std::pair<std::string, Status>> gone;

  void Listen(DataPlane& plane) {
    plane.SetStepHandlers(
        [this](const std::string& from, proto::StepMessage::Reader m) {
          got.push_back({from, m.getGraph(), m.getStepId(), m.which()});
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
  return plane.SendStepMessage(task, [&](proto::StepMessage::Builder m) {
    m.setGraph(graph);
    m.setStepId(step);
    m.initRun().setTimeoutMs(1000);
  });
}

TEST_CASE("step messages arrive named by their ticket's task; forged or revoked tickets are refused") {
  for (const std::string transports : {"", "tcp"}) {
    INFO("UCX_TLS '" << transports << "'");
    Pair pair(transports);
    StepLog log;
    log.Listen(*pair.b);
    for (int64_t step = 1; step <= 3; ++step) REQUIRE(SendRun(*pair.a, "b", 77, step).ok());
    REQUIRE(log.WaitFor(pair, 3));
    for (int64_t step = 1; step <= 3; ++step) {
      CHECK(log.got[step - 1].from == "a");  // the task b invited, not what a calls itself
      CHECK(log.got[step - 1].graph == 77);
      CHECK(log.got[step - 1].step == step);
      CHECK(log.got[step - 1].which == proto::StepMessage::RUN);
    }
    CHECK(pair.b->stats().step_messages_received == 3);
    CHECK(pair.a->stats().step_messages_sent == 3);

    // A forged ticket, then a revoked one: refused, counted, not handed on.
    DataPlane::Invitation forged = pair.invitation;
    forged.ticket.assign(forged.ticket.size(), 'x');
    REQUIRE(pair.a->Connect("b", forged).ok());
    REQUIRE(SendRun(*pair.a, "b", 77, 4).ok());
    // Closing the endpoint (by force where UCX watches it) could drop what
    // it has not sent yet.
    for (int i = 0; i < 2000 && pair.b->stats().step_messages_refused < 1; ++i) {
      pair.io.provider->getTimer().afterDelay(1 * kj::MILLISECONDS).wait(pair.io.waitScope);
    }
    REQUIRE(pair.b->stats().step_messages_refused == 1);
    REQUIRE(pair.a->Connect("b", pair.invitation).ok());
    pair.b->Revoke(pair.invitation.ticket);
    REQUIRE(SendRun(*pair.a, "b", 77, 5).ok());
    CHECK_FALSE(log.WaitFor(pair, 4, 200));
    CHECK(pair.b->stats().step_messages_refused == 2);
    CHECK(pair.b->stats().pushes_refused == 0);
  }
}

TEST_CASE("a step message's sender hears when its endpoint goes, and cannot send after") {
  Pair pair("");
  StepLog sender;
  sender.Listen(*pair.a);
  pair.a->Disconnect("b");
  REQUIRE(sender.gone.size() == 1);
  CHECK(sender.gone[0].first == "b");
  CHECK(sender.gone[0].second.code() == Code::kUnavailable);
  const Status after = SendRun(*pair.a, "b", 1, 1);
  CHECK(after.code() == Code::kUnavailable);
  CHECK(after.message().find("b") != std::string::npos);
  // Twice: a second disconnect of a task without an endpoint says nothing more.
  pair.a->Disconnect("b");
  CHECK(sender.gone.size() == 1);
  // Connected again, it sends again.
  REQUIRE(pair.a->Connect("b", pair.invitation).ok());
  StepLog receiver;
  receiver.Listen(*pair.b);
  REQUIRE(SendRun(*pair.a, "b", 2, 2).ok());
  REQUIRE(receiver.WaitFor(pair, 1));
  CHECK(receiver.got[0].graph == 2);
}

// What a peer that reaches UCX but is not tfd might send on the step
// message's id: junk, a frame larger than any step message, a header.
TEST_CASE("hostile step messages are refused and the plane serves on") {
  Pair pair("");
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

}  // namespace
}  // namespace tfd
