#include "daemon/task_server.h"

namespace tfd {

TaskServer::TaskServer(TaskEnv& env, kj::AsyncIoProvider& io, kj::Timer& timer, std::string token)
    : env_(env),
      io_(io),
      token_(std::move(token)),
      master_(kj::heap<MasterService>(env)),
      worker_(kj::heap<WorkerService>(env)),
      errors_(env.logger, "a connection"),
      connections_(errors_) {
  peers_ = kj::heap<Peers>(io, timer, env.cluster, env.task, TaskServices{master_, worker_}, token_,
                           env.logger);
  env_.peers = peers_.get();
}

TaskServer::~TaskServer() { env_.peers = nullptr; }

kj::Promise<unsigned> TaskServer::Listen(const std::string& address) {
  return io_.getNetwork().parseAddress(address.c_str()).then(
      [this](kj::Own<kj::NetworkAddress> addr) {
        listener_ = addr->listen();
        const unsigned port = listener_->getPort();
        accepting_ = AcceptLoop(*listener_).eagerlyEvaluate([this](kj::Exception&& e) {
          if (env_.logger) env_.logger->error("accept failed: {}", e.getDescription().cStr());
        });
        return port;
      });
}

kj::Promise<void> TaskServer::AcceptLoop(kj::ConnectionReceiver& listener) {
  return listener.accept().then([this, &listener](kj::Own<kj::AsyncIoStream> stream) {
    auto gate = kj::heap<GateService>(env_, token_, master_, worker_);
    auto connection = RpcConnection::Server(kj::mv(stream), kj::mv(gate));
    auto done = connection->OnDisconnect();
    connections_.add(done.attach(kj::mv(connection)));
    return AcceptLoop(listener);
  });
}

void TaskServer::StopAccepting() {
  accepting_ = nullptr;
  listener_ = nullptr;
}

}  // namespace tfd
