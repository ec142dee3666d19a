// Tls: mutual TLS for the control plane (Cap'n Proto RPC between tfctl and
// tfd, and between tfd tasks), built from three PEM files: this side's
// certificate, its private key, and the CA that signs every member of the
// cluster. Both sides present a certificate and both check the other's
// against the CA (and only the CA: the system's trust store is not used).
// A client also checks that the server's certificate names the host it
// dialled: the host part of the cluster address or --target, so a server
// certificate needs a subjectAltName for each name it is reached by
// (IP:10.0.0.7, DNS:ps0.example). Who a holder is comes from the
// certificate's tfd identity (daemon/rpc/tls_identity.h): a server must be
// a task — the very task a peer dialled, when it says which — and the
// server hands each client's identity to whoever judges its login.
//
//   TFD_ASSIGN_OR_RETURN(auto tls, Tls::Load({cert, key, ca}));
//   auto stream = tls->WrapClient(kj::mv(socket), "ps0:2222", "/job:ps/replica:0/task:0");
//   tls->WrapServer(kj::mv(accepted)).then([](Tls::Secured s) { ... s.peer ... });
//
// A refused handshake, or a peer's refusal that arrives after it (under
// TLS 1.3 a server judges the client's certificate after the client's
// handshake has finished), fails with UNAUTHENTICATED and a message saying
// it was TLS and why, so a client does not retry what will stay refused.
//
// Thread-safety: one Tls may wrap streams on the event-loop thread that
// uses it; a wrapped stream keeps the Tls alive.
#pragma once

#include <kj/async-io.h>
#include <kj/compat/tls.h>

#include <memory>
#include <string>

#include "common/status.h"
#include "daemon/rpc/tls_identity.h"

namespace tfd {

// --tls-cert, --tls-key, --tls-ca: all three, or none (TLS off).
struct TlsFiles {
  std::string cert, key, ca;
  bool enabled() const { return !cert.empty() || !key.empty() || !ca.empty(); }
};

// OK when all three or none are set; else INVALID_ARGUMENT naming the flag
// that is missing (`prefix` + "cert", e.g. "--tls-").
Status CheckTlsFiles(const TlsFiles& files, const std::string& prefix = "--tls-");

// "host:port", "[v6]:port" -> the host, for checking the server's name.
std::string HostOfAddress(const std::string& address);

class Tls : public std::enable_shared_from_this<Tls> {
 public:
  // INVALID_ARGUMENT naming the file that cannot be read or parsed, or the
  // key that does not match the certificate.
  static StatusOr<std::shared_ptr<Tls>> Load(const TlsFiles& files);

  // The client's handshake, checking the server against the CA and the host
  // of `address` ("host:port"), and that its certificate names a task:
  // `task` itself, when not empty. UNAUTHENTICATED otherwise.
  kj::Promise<kj::Own<kj::AsyncIoStream>> WrapClient(kj::Own<kj::AsyncIoStream> stream,
                                                     const std::string& address,
                                                     const std::string& task = "");
  // The server's handshake, requiring a client certificate from the CA;
  // resolves with the stream and the client's identity (kNone when its
  // certificate carries none: the login decides what that may do).
  struct Secured {
    kj::Own<kj::AsyncIoStream> stream;
    TlsIdentity peer;
  };
  kj::Promise<Secured> WrapServer(kj::Own<kj::AsyncIoStream> stream);

  // Who this side's own certificate names.
  const TlsIdentity& identity() const { return identity_; }

  // Use Load.
  Tls(kj::TlsKeypair keypair, kj::TlsCertificate ca);

 private:
  TlsIdentity identity_;
  kj::TlsKeypair keypair_;
  kj::TlsCertificate ca_;
  kj::Own<kj::TlsContext> context_;
};

}  // namespace tfd
