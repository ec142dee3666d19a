// The step channel's wire (daemon/transport/step_messages.h): each kind of
// message reads back as it was written, with or without a ticket; what a
// peer could send that this tfd never does — an unknown code in `done`, a
// message too large, bytes that are no message — is an error, never
// success.
#include "daemon/transport/step_messages.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "schemas/transport.capnp.h"

namespace tfd {
namespace {

ReceivedStep RoundTrip(const StepMessage& m, const std::string& ticket) {
  auto words = EncodeStepMessage(m, ticket);
  INFO(words.status().ToString());
  REQUIRE(words.ok());
  auto back = DecodeStepMessage(*words);
  INFO(back.status().ToString());
  REQUIRE(back.ok());
  return std::move(back).value();
}

TEST_CASE("each step message reads back as it was written, with the ticket it carried") {
  const auto run = RoundTrip(StepMessage::Run(77, 12, 2500, true), "ticket-1");
  CHECK(run.ticket == "ticket-1");
  CHECK(run.message.kind == StepMessage::Kind::kRun);
  CHECK(run.message.graph == 77);
  CHECK(run.message.step_id == 12);
  CHECK(run.message.timeout_ms == 2500);
  CHECK(run.message.trace);

  StepStats stats;
  stats.nodes.push_back({.node = "noop", .op = "NoOp", .start_micros = 5, .end_micros = 9});
  const auto done = RoundTrip(StepMessage::Done(77, 12, OkStatus(), stats), "");
  CHECK(done.ticket.empty());  // on a stream: none
  CHECK(done.message.kind == StepMessage::Kind::kDone);
  CHECK(done.message.status.ok());
  REQUIRE(done.message.stats.nodes.size() == 1);
  CHECK(done.message.stats.nodes[0].node == "noop");
  CHECK(done.message.stats.nodes[0].end_micros == 9);

  const auto failed =
      RoundTrip(StepMessage::Done(77, 13, errors::DeadlineExceeded("step 13 took too long")), "");
  CHECK(failed.message.status.code() == Code::kDeadlineExceeded);
  CHECK(failed.message.status.message() == "step 13 took too long");
  CHECK(failed.message.stats.nodes.empty());

  // The details travel with the error: the master decides on them.
  const Status detailed = errors::DeadlineExceeded("nothing came")
                              .WithNode("w/recv", "_Recv")
                              .WithTask("/job:worker/replica:0/task:1")
                              .WithReason(ErrorReason::kConnectionLost);
  const auto with_details = RoundTrip(StepMessage::Done(77, 15, detailed), "");
  CHECK(with_details.message.status == detailed);
  CHECK(with_details.message.status.op() == "_Recv");

  const auto cancel = RoundTrip(StepMessage::Cancel(78, 14), "t");
  CHECK(cancel.message.kind == StepMessage::Kind::kCancel);
  CHECK(cancel.message.graph == 78);
  CHECK(cancel.message.step_id == 14);
}

TEST_CASE("a done with a code this tfd does not know is an error, never success") {
  for (const char* code : {"NOT_A_CODE", ""}) {
    INFO("code '" << code << "'");
    capnp::MallocMessageBuilder builder;
    auto m = builder.initRoot<proto::StepMessage>();
    m.setGraph(7);
    m.setStepId(300);
    auto done = m.initDone();
    done.setCode(code);
    done.setMessage("forged");
    auto words = capnp::messageToFlatArray(builder);
    auto in = DecodeStepMessage(words);
    REQUIRE(in.ok());
    CHECK(in->message.status.code() == Code::kInternal);
    CHECK(in->message.status.message() == "forged");
  }
}

TEST_CASE("a done whose details are malformed is the error without details") {
  capnp::MallocMessageBuilder builder;
  auto m = builder.initRoot<proto::StepMessage>();
  auto done = m.initDone();
  done.setCode("ABORTED");
  done.setMessage("forged");
  done.setDetails("tfd-details/1/999:task=3:abc;");
  auto in = DecodeStepMessage(capnp::messageToFlatArray(builder));
  REQUIRE(in.ok());
  CHECK(in->message.status.code() == Code::kAborted);
  CHECK(in->message.status.message() == "forged");
  CHECK(in->message.status.details().empty());
}

TEST_CASE("a step message too large or malformed is refused, sent or received") {
  StepStats many;
  many.nodes.resize(100000, {.node = std::string(96, 'n'), .op = "NoOp"});
  const auto big = EncodeStepMessage(StepMessage::Done(1, 2, OkStatus(), many), "");
  CHECK(big.status().code() == Code::kInvalidArgument);
  CHECK(big.status().message().find("for step 2") != std::string::npos);

  kj::Array<capnp::word> huge = kj::heapArray<capnp::word>(kMaxStepMessageBytes / 8 + 1);
  CHECK(DecodeStepMessage(huge).status().code() == Code::kInvalidArgument);
  // A segment table that claims more words than there are.
  kj::Array<capnp::word> garbage = kj::heapArray<capnp::word>(4);
  auto bytes = garbage.asBytes();
  std::fill(bytes.begin(), bytes.end(), 0xff);
  const Status malformed = DecodeStepMessage(garbage).status();
  CHECK(malformed.code() == Code::kInvalidArgument);
  CHECK(malformed.message().find("malformed step message") != std::string::npos);
}

}  // namespace
}  // namespace tfd
