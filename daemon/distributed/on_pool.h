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
// process: reading a client's message (a Text without its NUL, a list past
// its segment) throws, and a malformed graph must cost its sender an error,
// not the task. Cap'n Proto's exceptions are the message's fault
// (INVALID_ARGUMENT "malformed request"); running out of memory is
// RESOURCE_EXHAUSTED; any other exception is INTERNAL, naming it.
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

#include "common/status.h"
#include "daemon/rpc/kj_status.h"

namespace tfd {

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
      // Cap'n Proto's checks of what a message says: the sender's error.
      result->emplace(errors::InvalidArgument("malformed request: ", e.getDescription().cStr()));
    } catch (const std::bad_alloc&) {
      result->emplace(errors::ResourceExhausted("out of memory while serving the request"));
    } catch (const std::exception& e) {
      result->emplace(errors::Internal("unexpected exception while serving the request: ",
                                       e.what()));
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
