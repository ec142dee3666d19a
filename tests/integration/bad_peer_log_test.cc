// Bad peers are visible: each connection tfd refuses or drops — garbage,
// a lying segment table, a bad root pointer, a call to nothing, an oversized
// frame, no login — gets one log line naming the peer's address and the
// reason. A flood of them gets a few lines a second and a count of the rest,
// and tfd goes on serving.
#include <capnp/message.h>
#include <capnp/rpc.capnp.h>
#include <capnp/serialize.h>

#include <catch2/catch.hpp>
#include <random>
#include <set>
#include <thread>

#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/log_lines.h"
#include "tests/integration/raw_socket.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Contains;
using testing::LinesWith;
using testing::LocalCluster;
using testing::RawSocket;
using testing::Le32;
using testing::WaitForLines;

std::string Le64(uint64_t v) { return Le32(static_cast<uint32_t>(v)) + Le32(static_cast<uint32_t>(v >> 32)); }

std::string RandomBytes(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string out(n, '\0');
  for (auto& c : out) c = static_cast<char>(gen() & 0xff);
  return out;
}

// Random bytes whose first word declares more segments than Cap'n Proto
// allows, so every one is refused at its first word.
std::string Garbage(unsigned seed) { return Le32(0xfffffff0u) + RandomBytes(60, seed); }

// One segment of one word: a struct pointer whose offset points far beyond
// the segment.
std::string BadRootPointer() {
  const uint64_t pointer = (uint64_t{1000} << 2) | (uint64_t{1} << 32);  // 1 data word
  return Le32(0) + Le32(1) + Le64(pointer);
}

// A well-formed RPC call on a capability the peer never received.
std::string JunkCall() {
  capnp::MallocMessageBuilder builder;
  auto call = builder.initRoot<capnp::rpc::Message>().initCall();
  call.setQuestionId(0);
  call.initTarget().setImportedCap(12345);
  call.setInterfaceId(0x1234abcd);
  call.setMethodId(7);
  call.initParams();
  auto words = capnp::messageToFlatArray(builder);
  auto bytes = words.asBytes();
  return std::string(bytes.begin(), bytes.end());
}

// The lines about the connection from 127.0.0.1:`port`: "... closed: why"
// or "... refused: why".
std::vector<std::string> LinesFor(const std::string& log, int port) {
  return LinesWith(log, "connection from 127.0.0.1:" + std::to_string(port) + " ");
}

TEST_CASE("each refused or broken connection is logged once with the peer and the reason; a "
          "flood is summed up and tfd goes on serving") {
  LocalCluster cluster({{"worker", 1}}, {"--login-timeout", "2"});
  REQUIRE(cluster.Start("worker", 0).ok());
  auto log = [&] { return cluster.Log("worker", 0); };

  struct Kind {
    const char* what;
    std::string bytes;
    bool end_after;      // half-close after sending
    const char* reason;  // part of the logged reason
  };
  const std::vector<Kind> kinds = {
      {"random bytes", Garbage(1), false, "segments"},
      {"a lying segment table", Le32(0) + Le32(100) + std::string(24, '\0'), true, ""},
      {"a bad root pointer", BadRootPointer(), false, "out-of-bounds"},
      {"a junk call", JunkCall(), false, ""},
      {"an oversized frame", Le32(0) + Le32(0x7ffffff0), false, "pre-login limit"},
      {"silence", "", false, "no login within 2 s"},
  };
  std::vector<int> ports;
  for (const auto& kind : kinds) {
    INFO(kind.what);
    auto s = RawSocket::Connect(cluster.Address("worker", 0), 5s);
    REQUIRE(s.ok());
    ports.push_back((*s)->local_port());
    if (!kind.bytes.empty()) REQUIRE((*s)->Send(kind.bytes));
    if (kind.end_after) (*s)->ShutdownWrite();
    CHECK((*s)->WaitClosed(15s));
  }
  WaitForLines(log, " closed: ", kinds.size(), 15s);
  const std::string text = log();
  for (size_t i = 0; i < kinds.size(); ++i) {
    INFO(kinds[i].what << "; log: " << testing::OneLine(text));
    const auto lines = LinesFor(text, ports[i]);
    REQUIRE(lines.size() == 1);
    REQUIRE(Contains(lines[0], " closed: "));
    const std::string reason = lines[0].substr(lines[0].find(" closed: ") + 9);
    CHECK(reason.size() > 5);
    CHECK(Contains(reason, kinds[i].reason));
  }

  // Let every kind's window close, so what follows is all the flood's.
  std::this_thread::sleep_for(1500ms);
  const size_t lines_before = LinesWith(log(), "more like it").size();
  REQUIRE(lines_before == 0);

  // Only what is logged from here on is the flood's: a flood connection
  // may get a local port one of the connections above had (the server
  // closed those, so the port is free again), and their lines would count.
  const size_t flood_log_start = log().size();
  auto flood_log = [&] { return log().substr(flood_log_start); };
  constexpr int kFlood = 200;
  const auto flood_start = std::chrono::steady_clock::now();
  std::set<int> flood_ports;
  for (int i = 0; i < kFlood; ++i) {
    auto s = RawSocket::Connect(cluster.Address("worker", 0), 5s);
    REQUIRE(s.ok());
    flood_ports.insert((*s)->local_port());
    (*s)->Send(i % 3 == 0 ? Garbage(100 + i) : i % 3 == 1 ? BadRootPointer() : JunkCall());
    // Closed at once: tfd still reads what was sent.
  }
  // Every flood connection is accounted for exactly once: its own line, or
  // a count in a summary.
  auto account = [&](const std::string& text, size_t* own_lines) {
    size_t own = 0, summed = 0;
    for (int port : flood_ports) own += LinesFor(text, port).size();
    for (const auto& line : LinesWith(text, "more like it")) {
      const size_t at = line.find("... and ");
      if (at != std::string::npos) summed += std::stoul(line.substr(at + 8));
    }
    *own_lines = own;
    return own + summed;
  };
  size_t own = 0, total = 0;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while ((total = account(flood_log(), &own)) < kFlood &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100ms);
  }
  // The bound on lines follows from the limit: at most 5 per second for
  // each of the kinds the flood can produce (pre-login limit, broken
  // connection, refused), over the seconds tfd took to see it all.
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::steady_clock::now() - flood_start).count();
  INFO(own << " lines of their own, " << total << " accounted for, in " << seconds << " s");
  std::string summaries;
  for (const auto& line : LinesWith(flood_log(), "more like it")) summaries += line + "\n";
  INFO("summaries:\n" << summaries);
  CHECK(total == kFlood);
  CHECK(own < static_cast<size_t>(kFlood));
  CHECK(own <= static_cast<size_t>(5 * 3 * (seconds + 2)));
  CHECK_FALSE(LinesWith(log(), "more like it").empty());

  // And tfd serves a client as before.
  auto client = cluster.Connect("worker", 0);
  INFO(client.status().ToString());
  REQUIRE(client.ok());
  CHECK((*client)->GetStatus(5s).ok());
}

}  // namespace
}  // namespace tfd
