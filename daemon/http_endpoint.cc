#include "daemon/http_endpoint.h"

#include <fmt/format.h>

namespace tfd {
namespace {

constexpr kj::Duration kHeaderTimeout = 5 * kj::SECONDS;
constexpr kj::Duration kAcceptRetry = 100 * kj::MILLISECONDS;

kj::HttpServerSettings Settings() {
  kj::HttpServerSettings settings;
  settings.headerTimeout = kHeaderTimeout;
  return settings;
}

}  // namespace

class HttpEndpoint::Service final : public kj::HttpService {
 public:
  explicit Service(HttpEndpoint& owner) : owner_(owner) {}

  kj::Promise<void> request(kj::HttpMethod method, kj::StringPtr url, const kj::HttpHeaders&,
                            kj::AsyncInputStream&, Response& response) override {
    if (method != kj::HttpMethod::GET && method != kj::HttpMethod::HEAD) {
      return Send(response, 405, "Method Not Allowed", kPlain, "only GET and HEAD\n");
    }
    std::string_view path(url.cStr(), url.size());
    path = path.substr(0, path.find('?'));
    if (path == "/metrics") {
      return Send(response, 200, "OK", "text/plain; version=0.0.4; charset=utf-8",
                  owner_.pages_.metrics());
    }
    if (path == "/healthz") {
      if (owner_.draining_) return Send(response, 503, "Service Unavailable", kPlain, "draining\n");
      return Send(response, 200, "OK", kPlain, "ok\n");
    }
    return Send(response, 404, "Not Found", kPlain, "tfd serves /metrics and /healthz\n");
  }

 private:
  static constexpr const char* kPlain = "text/plain; charset=utf-8";

  kj::Promise<void> Send(Response& response, unsigned code, kj::StringPtr reason,
                         kj::StringPtr type, std::string body) {
    kj::HttpHeaders headers(owner_.headers_);
    headers.set(kj::HttpHeaderId::CONTENT_TYPE, type);
    auto out = response.send(code, reason, headers, static_cast<uint64_t>(body.size()));
    auto bytes = std::make_unique<std::string>(std::move(body));
    auto written = out->write(bytes->data(), bytes->size());
    return written.attach(kj::mv(out), kj::mv(bytes));
  }

  HttpEndpoint& owner_;
};

HttpEndpoint::HttpEndpoint(kj::AsyncIoProvider& io, kj::Timer& timer, Pages pages,
                           std::shared_ptr<spdlog::logger> logger)
    : io_(io),
      timer_(timer),
      pages_(std::move(pages)),
      log_(logger, timer),
      service_(kj::heap<Service>(*this)),
      server_(kj::heap<kj::HttpServer>(timer, headers_, *service_, Settings())),
      errors_(std::move(logger), "an HTTP connection"),
      connections_(errors_) {}

HttpEndpoint::~HttpEndpoint() = default;

kj::Promise<unsigned> HttpEndpoint::Listen(const std::string& address) {
  return io_.getNetwork().parseAddress(address.c_str()).then(
      [this](kj::Own<kj::NetworkAddress> addr) {
        listener_ = addr->listen();
        accepting_ = AcceptLoop().eagerlyEvaluate(nullptr);
        return listener_->getPort();
      });
}

kj::Promise<void> HttpEndpoint::AcceptLoop() {
  // evalNow: kj's accept() throws EMFILE at once rather than rejecting.
  return kj::evalNow([this]() { return listener_->accept(); })
      .then(
          [this](kj::Own<kj::AsyncIoStream> stream) -> kj::Promise<void> {
            if (open_ >= kMaxConnections) {
              log_.Warn("http connections", fmt::format("closed an HTTP connection: {} are open "
                                                        "already",
                                                        kMaxConnections));
              return AcceptLoop();  // `stream` closes here
            }
            ++open_;
            connections_.add(server_->listenHttp(kj::mv(stream)).attach(kj::defer([this] {
              --open_;
            })));
            return AcceptLoop();
          },
          [this](kj::Exception&& e) -> kj::Promise<void> {
            log_.Warn("http accept", fmt::format("cannot accept an HTTP connection: {}",
                                                 e.getDescription().cStr()));
            return timer_.afterDelay(kAcceptRetry).then([this]() { return AcceptLoop(); });
          });
}

}  // namespace tfd
