// HttpEndpoint: a task's HTTP port (--http-listen), served by kj-http on
// the event loop beside the RPC port:
//   GET /metrics  Prometheus's text format (daemon/metrics_page.h)
//   GET /healthz  200 "ok" while the task serves; 503 "draining" once it
//                 has been told to stop, so a load balancer or Kubernetes
//                 takes it out before it goes
// Anything else is 404; a method other than GET or HEAD is 405. Plain
// HTTP with no token, as Prometheus scrapes: the pages hold counts and task
// names, never tensors; bind it where only the scraper reaches
// (docs/operations.md, "Metrics and health").
//
// A connection must send its request headers within 5 s, and at most 16
// are served at once; more are closed at once, so a flood of this port
// cannot starve the RPC port of memory or descriptors.
//
//   HttpEndpoint http(io, timer, {.metrics = [&] { return RenderMetrics(env, v); }}, logger);
//   unsigned port = http.Listen("127.0.0.1:9090").wait(waitScope);
//   ... http.SetDraining();
//
// Thread-safety: event-loop thread only.
#pragma once

#include <kj/async-io.h>
#include <kj/compat/http.h>

#include <functional>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "daemon/rpc/kj_status.h"
#include "daemon/rpc/rate_limited_log.h"

namespace tfd {

class HttpEndpoint {
 public:
  struct Pages {
    std::function<std::string()> metrics;  // the /metrics body
  };
  static constexpr int kMaxConnections = 16;

  HttpEndpoint(kj::AsyncIoProvider& io, kj::Timer& timer, Pages pages,
               std::shared_ptr<spdlog::logger> logger);
  ~HttpEndpoint();

  // Binds and starts serving; resolves to the bound port.
  kj::Promise<unsigned> Listen(const std::string& address);
  // /healthz answers 503 from now on.
  void SetDraining() { draining_ = true; }

 private:
  class Service;

  kj::Promise<void> AcceptLoop();

  kj::AsyncIoProvider& io_;
  kj::Timer& timer_;
  Pages pages_;
  RateLimitedLog log_;
  bool draining_ = false;
  int open_ = 0;  // connections being served
  kj::HttpHeaderTable headers_;
  kj::Own<Service> service_;
  kj::Own<kj::HttpServer> server_;
  kj::Own<kj::ConnectionReceiver> listener_;
  LogTaskErrors errors_;
  kj::TaskSet connections_;
  kj::Promise<void> accepting_ = nullptr;
};

}  // namespace tfd
