// OnPool: runs blocking or heavy work (file I/O, parsing a large graph,
// building kernels) on the task's compute pool and resolves on the
// event-loop thread, so the loop keeps serving RPCs meanwhile.
//
//   auto graph = OwnedCopy(context.getParams().getGraph());
//   return OnPool<GraphDef>(*env.pool, [graph] {
//            return GraphFromProto(graph->getRoot<proto::GraphDef>().asReader());
//          })
//       .then([](GraphDef g) { ... back on the loop ... });
//
// `work` must not touch kj objects of the loop (RPC messages, capabilities):
// give it copies it owns (OwnedCopy). An RPC's params die with the call, and
// a call may be dropped (its client gone) while the work still runs. A
// promise dropped before the work is done lets the work finish on the pool
// and discards its result.
//
// An exception thrown by `work` rejects the promise instead of ending the
// process, with a code that keeps what it meant (WorkError):
// - Cap'n Proto's checks of a message it reads (a Text without its NUL, a
//   list past its segment) are the sender's fault: INVALID_ARGUMENT
//   "malformed request: ...";
// - an error that carries a Status (KjFromStatus, ThrowIfError) keeps its
//   code and message;
// - running out of memory is RESOURCE_EXHAUSTED;
// - anything else is a fault of the task, INTERNAL with its description.
//
// Thread-safety: call on the event-loop thread; `work` runs on a pool thread.
#pragma once

#include <capnp/message.h>
#include <kj/async.h>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string_view>

#include "common/status.h"
#include "daemon/rpc/kj_status.h"

namespace tfd {

// True for the exceptions Cap'n Proto throws while it reads a message
// (pointers, sizes, segments, the traversal limit): thrown from its
// decoding sources, never from RPC or from tfd's own code.
inline bool IsMessageDecodingError(const kj::Exception& e) {
  std::string_view file = e.getFile();
  const size_t slash = file.rfind('/');
  if (slash == std::string_view::npos || slash < 5 || file.substr(slash - 5, 6) != "capnp/" ||
      (slash > 5 && file[slash - 6] != '/')) {
    return false;
  }
  const std::string_view name = file.substr(slash + 1);
  return name == "layout.c++" || name == "arena.c++" || name == "message.c++" ||
         name == "serialize.c++" || name == "serialize-packed.c++";
}

// The error an exception thrown by work on the pool stands for (see above).
inline Status WorkError(const kj::Exception& e) {
  if (IsMessageDecodingError(e)) {
    return errors::InvalidArgument("malformed request: ", e.getDescription().cStr());
  }
  // A Status keeps its code; any other kj exception is INTERNAL.
  return StatusFromKj(e);
}

template <typename T>
kj::Promise<T> OnPool(boost::asio::thread_pool& pool, std::function<StatusOr<T>()> work) {
  auto paf = kj::newPromiseAndCrossThreadFulfiller<void>();
  auto fulfiller =
      std::make_shared<kj::Own<kj::CrossThreadPromiseFulfiller<void>>>(kj::mv(paf.fulfiller));
  auto result = std::make_shared<std::optional<StatusOr<T>>>();
  boost::asio::post(pool, [work = std::move(work), fulfiller, result] {
    try {
      result->emplace(work());
    } catch (const kj::Exception& e) {
      result->emplace(WorkError(e));
    } catch (const std::bad_alloc&) {
      result->emplace(errors::ResourceExhausted("out of memory while serving the request"));
    } catch (const std::exception& e) {
      result->emplace(errors::Internal("unexpected exception while serving the request: ",
                                       e.what()));
    } catch (...) {
      result->emplace(errors::Internal("unexpected exception of an unknown type while serving "
                                       "the request"));
    }
    (*fulfiller)->fulfill();
  });
  return paf.promise.then([result]() -> T {
    StatusOr<T>& r = **result;
    ThrowIfError(r.status());
    return std::move(r).value();
  });
}

// A copy of `reader` in a message of its own, which work on the pool may
// read after the RPC call it came with has gone.
template <typename Reader>
std::shared_ptr<capnp::MallocMessageBuilder> OwnedCopy(Reader reader) {
  auto copy = std::make_shared<capnp::MallocMessageBuilder>();
  copy->setRoot(reader);
  return copy;
}

inline kj::Promise<void> OnPool(boost::asio::thread_pool& pool, std::function<Status()> work) {
  return OnPool<bool>(pool, [work = std::move(work)]() -> StatusOr<bool> {
           TFD_RETURN_IF_ERROR(work());
           return true;
         })
      .ignoreResult();
}

}  // namespace tfd
