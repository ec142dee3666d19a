#include "daemon/transport/step_messages.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "daemon/rpc/trace_wire.h"
#include "schemas/transport.capnp.h"

namespace tfd {
namespace {

// StepMessage, its done group, the trace list, one node: no deeper.
constexpr int kNesting = 4;
// The first segment an encoding builds in (words).
constexpr size_t kScratchWords = 64;

void FillMessage(const StepMessage& m, proto::StepMessage::Builder out) {
  out.setGraph(m.graph);
  out.setStepId(m.step_id);
  switch (m.kind) {
    case StepMessage::Kind::kRun: {
      auto run = out.initRun();
      run.setTimeoutMs(m.timeout_ms);
      run.setTrace(m.trace);
      return;
    }
    case StepMessage::Kind::kDone: {
      auto done = out.initDone();
      // The names are literals, so the view ends in a NUL as Text wants.
      const std::string_view code = CodeName(m.status.code());
      done.setCode(capnp::Text::Reader(code.data(), code.size()));
      done.setMessage(m.status.message());
      if (!m.status.details().empty()) done.setDetails(EncodeStatusDetails(m.status.details()));
      if (!m.stats.nodes.empty()) {
        TraceToProto(m.stats, done.initTrace(static_cast<unsigned>(m.stats.nodes.size())));
      }
      return;
    }
    case StepMessage::Kind::kCancel:
      out.setCancel();
      return;
  }
}

// The status a `done` reports: OK only for the code "OK".
Status DoneStatus(proto::StepMessage::Done::Reader done) {
  const std::string code = done.getCode();
  if (code == "OK") return OkStatus();
  const Code c = CodeFromName(code).value_or(Code::kInternal);
  // Malformed details are no details: the error stands all the same. Read
  // once: each read counts against the traversal limit of the message's size.
  const capnp::Text::Reader wire = done.getDetails();
  const std::string_view details(wire.cStr(), wire.size());
  return Status(c == Code::kOk ? Code::kInternal : c, done.getMessage().cStr())
      .WithDetails(ParseStatusDetails(details).details);
}

// Everything but the kind's fields; INVALID_ARGUMENT for an unknown kind.
Status ReadMessage(proto::StepMessage::Reader in, ReceivedStep& out) {
  auto ticket = in.getTicket();
  out.ticket.assign(reinterpret_cast<const char*>(ticket.begin()), ticket.size());
  StepMessage& m = out.message;
  m.graph = in.getGraph();
  m.step_id = in.getStepId();
  switch (in.which()) {
    case proto::StepMessage::RUN:
      m.kind = StepMessage::Kind::kRun;
      m.timeout_ms = in.getRun().getTimeoutMs();
      m.trace = in.getRun().getTrace();
      return OkStatus();
    case proto::StepMessage::DONE:
      m.kind = StepMessage::Kind::kDone;
      m.status = DoneStatus(in.getDone());
      TraceFromProto(in.getDone().getTrace(), m.stats);
      return OkStatus();
    case proto::StepMessage::CANCEL:
      m.kind = StepMessage::Kind::kCancel;
      return OkStatus();
  }
  return errors::InvalidArgument("a step message of kind ", static_cast<unsigned>(in.which()),
                                 ", which is none of run, done, cancel");
}

}  // namespace

StepMessage StepMessage::Run(uint64_t graph, int64_t step_id, int64_t timeout_ms, bool trace) {
  StepMessage m;
  m.kind = Kind::kRun;
  m.graph = graph;
  m.step_id = step_id;
  m.timeout_ms = timeout_ms;
  m.trace = trace;
  return m;
}

StepMessage StepMessage::Done(uint64_t graph, int64_t step_id, Status status, StepStats stats) {
  StepMessage m;
  m.kind = Kind::kDone;
  m.graph = graph;
  m.step_id = step_id;
  m.status = std::move(status);
  m.stats = std::move(stats);
  return m;
}

StepMessage StepMessage::Cancel(uint64_t graph, int64_t step_id) {
  StepMessage m;
  m.kind = Kind::kCancel;
  m.graph = graph;
  m.step_id = step_id;
  return m;
}

StatusOr<kj::Array<capnp::word>> EncodeStepMessage(const StepMessage& message,
                                                   const std::string& ticket) {
  // Built in memory on the stack: a run, a cancel or an untraced done
  // fits, so only the flat copy below is allocated.
  capnp::word scratch[kScratchWords] = {};
  capnp::MallocMessageBuilder builder(kj::arrayPtr(scratch, kScratchWords));
  auto out = builder.initRoot<proto::StepMessage>();
  FillMessage(message, out);
  if (!ticket.empty()) {
    out.setTicket(
        kj::arrayPtr(reinterpret_cast<const capnp::byte*>(ticket.data()), ticket.size()));
  }
  auto words = capnp::messageToFlatArray(builder);
  if (const size_t size = words.asBytes().size(); size > kMaxStepMessageBytes) {
    return errors::InvalidArgument("a step message of ", size, " bytes for step ",
                                   message.step_id, ", more than ", kMaxStepMessageBytes);
  }
  return words;
}

StatusOr<ReceivedStep> DecodeStepMessage(kj::ArrayPtr<const capnp::word> words) {
  if (const size_t size = words.asBytes().size(); size > kMaxStepMessageBytes) {
    return errors::InvalidArgument("a step message of ", size, " bytes, more than ",
                                   kMaxStepMessageBytes);
  }
  ReceivedStep out;
  Status read;
  KJ_IF_MAYBE(e, kj::runCatchingExceptions([&]() {
    capnp::ReaderOptions limits;
    limits.traversalLimitInWords = words.size();
    limits.nestingLimit = kNesting;
    capnp::FlatArrayMessageReader reader(words, limits);
    read = ReadMessage(reader.getRoot<proto::StepMessage>(), out);
  })) {
    return errors::InvalidArgument("a malformed step message: ", e->getDescription().cStr());
  }
  if (!read.ok()) return read;
  return out;
}

}  // namespace tfd
