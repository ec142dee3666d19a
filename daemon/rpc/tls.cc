#include "daemon/rpc/tls.h"

#include <memory>
#include <optional>

#include <kj/debug.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "common/file_read.h"
#include "daemon/rpc/forwarding_stream.h"
#include "daemon/rpc/kj_status.h"

namespace tfd {
namespace {

// More than any certificate, key or bundle of CAs (every public root
// together is some 200 KiB) holds: a flag may name /dev/zero.
constexpr size_t kMaxPemFileBytes = size_t{4} << 20;

StatusOr<std::string> ReadPem(const std::string& flag, const std::string& path) {
  auto text = ReadFileAtMost(path, kMaxPemFileBytes, "file");
  if (!text.ok()) return errors::InvalidArgument(flag, ": ", text.status().message());
  // A look at the input, not at an error: a file without a PEM block would
  // otherwise reach kj as an OpenSSL error that does not name the flag.
  if (text->find("-----BEGIN ") == std::string::npos) {
    return errors::InvalidArgument(flag, ": '", path, "' holds no PEM block");
  }
  return text;
}

// What OpenSSL said, without kj's "OpenSSL error; message = " framing: for
// the message people read only; nothing decides on it (HandshakeRecord
// carries what the hints are chosen by).
std::string Reason(const kj::Exception& e) {
  std::string d = e.getDescription().cStr();
  for (const std::string_view framing : {"message = ", "OpenSSL error; "}) {
    if (const size_t at = d.find(framing); at != std::string::npos) {
      d = d.substr(at + framing.size());
      break;
    }
  }
  return d;
}

// Says that an error was TLS's: a FAILED read or write on a TLS stream is a
// refusal (a certificate the peer did not accept arrives as an alert after
// the handshake under TLS 1.3) or a corrupt record, neither of which a retry
// mends. A peer that just went away stays DISCONNECTED.
kj::Exception Tagged(kj::Exception&& e, const std::string& peer, const std::string& hint = "") {
  if (e.getType() != kj::Exception::Type::FAILED) return kj::mv(e);
  return KjFromStatus(errors::Unauthenticated("TLS with ", peer, " failed: ", Reason(e), hint));
}

// What one handshake saw, which decides the hint its failure gets: kj
// drains OpenSSL's error queue into a message, so the codes are taken where
// they arise. Written and read on the loop thread of the Tls that made it.
struct HandshakeRecord {
  // The first error OpenSSL's verification found in the peer's chain.
  long verify_error = X509_V_OK;
  // The first byte the peer sent (the server records it).
  std::optional<unsigned char> first_byte;
};

// kj makes a connection's SSL inside wrapClient / wrapServer, on the calling
// thread; while such a call runs, this names the record that SSL reports to.
thread_local std::shared_ptr<HandshakeRecord>* attaching = nullptr;

class AttachingTo {
 public:
  explicit AttachingTo(std::shared_ptr<HandshakeRecord>& record) : previous_(attaching) {
    attaching = &record;
  }
  ~AttachingTo() { attaching = previous_; }
  AttachingTo(const AttachingTo&) = delete;
  AttachingTo& operator=(const AttachingTo&) = delete;

 private:
  std::shared_ptr<HandshakeRecord>* previous_;
};

// An SSL's slot holds a heap copy of the shared_ptr, so the record outlives
// whichever of the SSL and the failed handshake's handler goes first.
using RecordSlot = std::shared_ptr<HandshakeRecord>;

void AttachRecord(void*, void*, CRYPTO_EX_DATA* data, int index, long, void*) {
  if (attaching == nullptr) return;
  CRYPTO_set_ex_data(data, index, std::make_unique<RecordSlot>(*attaching).release());
}
int CopyRecord(CRYPTO_EX_DATA*, const CRYPTO_EX_DATA*, void** slot, int, long, void*) {
  if (*slot != nullptr) *slot = std::make_unique<RecordSlot>(*static_cast<RecordSlot*>(*slot)).release();
  return 1;
}
void FreeRecord(void*, void* slot, CRYPTO_EX_DATA*, int, long, void*) {
  std::unique_ptr<RecordSlot>(static_cast<RecordSlot*>(slot));
}

// OpenSSL hands out ex-data slots per process: one for every Tls, taken
// before the first SSL is made (in Tls's constructor).
int RecordIndex() {
  static const int index = SSL_get_ex_new_index(0, nullptr, AttachRecord, CopyRecord, FreeRecord);
  return index;
}

// OpenSSL's verify callback: notes the first failure and leaves the verdict
// as OpenSSL found it.
int RecordVerifyError(int preverify_ok, X509_STORE_CTX* store) {
  if (preverify_ok != 0) return preverify_ok;
  auto* ssl = static_cast<SSL*>(
      X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  auto* slot = ssl == nullptr ? nullptr : static_cast<RecordSlot*>(SSL_get_ex_data(ssl, RecordIndex()));
  if (slot != nullptr && (*slot)->verify_error == X509_V_OK) {
    (*slot)->verify_error = X509_STORE_CTX_get_error(store);
  }
  return preverify_ok;
}

// What a failed verification of the server's certificate leaves unsaid:
// which checks that certificate must pass.
std::string ServerCertificateHint(const HandshakeRecord& record, const std::string& host) {
  if (record.verify_error == X509_V_OK) return "";
  return " (the task's certificate must be signed by --tls-ca, be valid now, and name '" + host +
         "' in its subjectAltName as DNS:" + host +
         ", also for an IP address: kj-tls checks the dialled name as a DNS name)";
}

// A TLS client's first record is its ClientHello, of content type
// "handshake"; a failed handshake that began with another byte was a client
// that does not speak TLS.
constexpr unsigned char kTlsHandshakeRecord = 22;

std::string PlainClientHint(const HandshakeRecord& record) {
  if (!record.first_byte || *record.first_byte == kTlsHandshakeRecord) return "";
  return " (the client did not start a TLS handshake: a client without --tls-cert?)";
}

// Beneath kj's TLS on the server: notes the client's first byte.
class FirstByteStream final : public ForwardingStream {
 public:
  FirstByteStream(kj::Own<kj::AsyncIoStream> inner, std::shared_ptr<HandshakeRecord> record)
      : ForwardingStream(kj::mv(inner)), record_(std::move(record)) {}

  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override {
    if (record_->first_byte) return inner().tryRead(buffer, min_bytes, max_bytes);
    return inner().tryRead(buffer, min_bytes, max_bytes).then([this, buffer](size_t n) {
      if (n > 0 && !record_->first_byte) record_->first_byte = *static_cast<unsigned char*>(buffer);
      return n;
    });
  }

 private:
  const std::shared_ptr<HandshakeRecord> record_;
};

class TlsErrorStream final : public ForwardingStream {
 public:
  TlsErrorStream(kj::Own<kj::AsyncIoStream> inner, std::string peer)
      : ForwardingStream(kj::mv(inner)), peer_(std::move(peer)) {}

  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override {
    return inner().tryRead(buffer, min_bytes, max_bytes).catch_([this](kj::Exception&& e) -> size_t {
      kj::throwFatalException(Tagged(kj::mv(e), peer_));
    });
  }
  kj::Promise<void> write(const void* buffer, size_t size) override {
    return inner().write(buffer, size).catch_([this](kj::Exception&& e) {
      kj::throwFatalException(Tagged(kj::mv(e), peer_));
    });
  }
  kj::Promise<void> write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override {
    return inner().write(pieces).catch_([this](kj::Exception&& e) {
      kj::throwFatalException(Tagged(kj::mv(e), peer_));
    });
  }

 private:
  const std::string peer_;
};

// kj 0.9.2's TlsPeerIdentity offers the common name and host-name matching
// only; its certificate is a private member. An explicit instantiation may
// name a private member (C++ [temp.spec]), which is how the URI names are
// read here; a kj that renames the member fails to compile, not to check.
void* CertificateOf(kj::TlsPeerIdentity& peer);
template <void* kj::TlsPeerIdentity::*Member>
struct CertificateAccess {
  friend void* CertificateOf(kj::TlsPeerIdentity& peer) { return peer.*Member; }
};
template struct CertificateAccess<&kj::TlsPeerIdentity::cert>;

// The same for the context's SSL_CTX, where the verify callback is set.
void* SslContextOf(kj::TlsContext& context);
template <void* kj::TlsContext::*Member>
struct SslContextAccess {
  friend void* SslContextOf(kj::TlsContext& context) { return context.*Member; }
};
template struct SslContextAccess<&kj::TlsContext::ctx>;

// The certificate's URI subjectAltNames.
std::vector<std::string> UrisOf(X509* cert) {
  std::vector<std::string> uris;
  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return uris;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    if (name->type != GEN_URI) continue;
    const ASN1_STRING* uri = name->d.uniformResourceIdentifier;
    uris.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(uri)),
                      static_cast<size_t>(ASN1_STRING_length(uri)));
  }
  GENERAL_NAMES_free(names);
  return uris;
}

// Who the peer's certificate names; kNone (with its common name, for
// messages) when no tfd identity. A certificate with two tfd names, or a
// malformed one, is refused outright.
StatusOr<TlsIdentity> IdentityOf(kj::PeerIdentity& peer) {
  auto* tls = dynamic_cast<kj::TlsPeerIdentity*>(&peer);
  if (tls == nullptr || !tls->hasCertificate()) return TlsIdentity{};
  TFD_ASSIGN_OR_RETURN(TlsIdentity id,
                       TlsIdentity::FromUris(UrisOf(static_cast<X509*>(CertificateOf(*tls)))));
  if (id.kind == TlsIdentity::Kind::kNone) id.name = "CN=" + std::string(tls->getCommonName().cStr());
  return id;
}

// The tfd identity of the first certificate in `pem`.
StatusOr<TlsIdentity> IdentityOfPem(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return errors::Internal("BIO_new_mem_buf failed");
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (cert == nullptr) return errors::InvalidArgument("no certificate in it");
  auto id = TlsIdentity::FromUris(UrisOf(cert));
  X509_free(cert);
  return id;
}

}  // namespace

Status CheckTlsFiles(const TlsFiles& files, const std::string& prefix) {
  if (!files.enabled()) return OkStatus();
  for (const auto& [name, value] : {std::pair{"cert", &files.cert}, std::pair{"key", &files.key},
                                    std::pair{"ca", &files.ca}}) {
    if (value->empty()) {
      return errors::InvalidArgument(prefix, name, " is missing: TLS needs ", prefix, "cert, ",
                                     prefix, "key and ", prefix, "ca together");
    }
  }
  return OkStatus();
}

std::string HostOfAddress(const std::string& address) {
  if (!address.empty() && address[0] == '[') {
    const size_t close = address.find(']');
    if (close != std::string::npos) return address.substr(1, close - 1);
  }
  const size_t colon = address.rfind(':');
  // One colon is host:port; more without brackets is a bare IPv6 address.
  if (colon == std::string::npos || address.find(':') != colon) return address;
  return address.substr(0, colon);
}

StatusOr<std::shared_ptr<Tls>> Tls::Load(const TlsFiles& files) {
  TFD_RETURN_IF_ERROR(CheckTlsFiles(files));
  TFD_ASSIGN_OR_RETURN(std::string cert_pem, ReadPem("--tls-cert", files.cert));
  TFD_ASSIGN_OR_RETURN(std::string key_pem, ReadPem("--tls-key", files.key));
  TFD_ASSIGN_OR_RETURN(std::string ca_pem, ReadPem("--tls-ca", files.ca));
  // kj throws on what OpenSSL cannot parse; each file is parsed on its own
  // so the error names it.
  auto parse = [](const std::string& flag, const std::string& path,
                  auto&& make) -> Status {
    KJ_IF_MAYBE(e, kj::runCatchingExceptions(make)) {
      return errors::InvalidArgument(flag, ": cannot parse '", path, "': ", Reason(*e));
    }
    return OkStatus();
  };
  kj::Maybe<kj::TlsCertificate> cert, ca;
  kj::Maybe<kj::TlsPrivateKey> key;
  TFD_RETURN_IF_ERROR(parse("--tls-cert", files.cert,
                            [&]() { cert = kj::TlsCertificate(kj::StringPtr(cert_pem.c_str())); }));
  TFD_RETURN_IF_ERROR(parse("--tls-key", files.key,
                            [&]() { key = kj::TlsPrivateKey(kj::StringPtr(key_pem.c_str())); }));
  TFD_RETURN_IF_ERROR(parse("--tls-ca", files.ca,
                            [&]() { ca = kj::TlsCertificate(kj::StringPtr(ca_pem.c_str())); }));
  auto identity = IdentityOfPem(cert_pem);
  if (!identity.ok()) {
    return errors::InvalidArgument("--tls-cert '", files.cert, "': ", identity.status().message());
  }
  std::shared_ptr<Tls> tls;
  KJ_IF_MAYBE(e, kj::runCatchingExceptions([&]() {
    tls = std::make_shared<Tls>(
        kj::TlsKeypair{kj::mv(KJ_ASSERT_NONNULL(key)), kj::mv(KJ_ASSERT_NONNULL(cert))},
        kj::mv(KJ_ASSERT_NONNULL(ca)));
  })) {
    return errors::InvalidArgument("--tls-cert '", files.cert, "' and --tls-key '", files.key,
                                   "' do not make a usable key pair: ", Reason(*e));
  }
  tls->identity_ = std::move(identity).value();
  return tls;
}

Tls::Tls(kj::TlsKeypair keypair, kj::TlsCertificate ca)
    : keypair_(kj::mv(keypair)), ca_(kj::mv(ca)) {
  kj::TlsContext::Options options;
  // The cluster's CA alone decides who is a member.
  options.useSystemTrustStore = false;
  options.trustedCertificates = kj::arrayPtr(&ca_, 1);
  options.verifyClients = true;
  options.defaultKeypair = keypair_;
  context_ = kj::heap<kj::TlsContext>(kj::mv(options));
  RecordIndex();  // before kj makes an SSL from this context
  auto* ssl_context = static_cast<SSL_CTX*>(SslContextOf(*context_));
  SSL_CTX_set_verify(ssl_context, SSL_CTX_get_verify_mode(ssl_context), RecordVerifyError);
}

kj::Promise<kj::Own<kj::AsyncIoStream>> Tls::WrapClient(kj::Own<kj::AsyncIoStream> stream,
                                                        const std::string& address,
                                                        const std::string& task) {
  const std::string host = HostOfAddress(address);
  kj::AuthenticatedStream plain{kj::mv(stream), kj::UnknownPeerIdentity::newInstance()};
  auto record = std::make_shared<HandshakeRecord>();
  auto handshake = [&]() {
    AttachingTo attach(record);
    return context_->wrapClient(kj::mv(plain), host.c_str());
  }();
  return handshake
      .then(
          [self = shared_from_this(), address, task](kj::AuthenticatedStream secured)
              -> kj::Own<kj::AsyncIoStream> {
            auto id = IdentityOf(*secured.peerIdentity);
            Status ok = id.status();
            if (ok.ok() && id->kind != TlsIdentity::Kind::kTask) {
              ok = errors::Unauthenticated("the certificate of ", address, " names ",
                                           id->Describe(), ", not a task (tfd:task/JOB/N)");
            } else if (ok.ok() && !task.empty() && id->task != task) {
              ok = errors::Unauthenticated("the certificate of ", address, " names ",
                                           id->Describe(), ", not ", task);
            }
            if (!ok.ok()) {
              kj::throwFatalException(KjFromStatus(
                  errors::Unauthenticated("TLS with ", address, " refused: ", ok.message())));
            }
            return kj::heap<TlsErrorStream>(kj::mv(secured.stream), address).attach(kj::mv(self));
          },
          [address, host, record](kj::Exception&& e) -> kj::Own<kj::AsyncIoStream> {
            std::string hint = ServerCertificateHint(*record, host);
            kj::throwFatalException(Tagged(kj::mv(e), address, hint));
          });
}

kj::Promise<Tls::Secured> Tls::WrapServer(kj::Own<kj::AsyncIoStream> stream) {
  auto record = std::make_shared<HandshakeRecord>();
  kj::AuthenticatedStream plain{kj::heap<FirstByteStream>(kj::mv(stream), record),
                                kj::UnknownPeerIdentity::newInstance()};
  auto handshake = [&]() {
    AttachingTo attach(record);
    return context_->wrapServer(kj::mv(plain));
  }();
  return handshake
      .then(
          [self = shared_from_this()](kj::AuthenticatedStream secured) -> Secured {
            auto id = IdentityOf(*secured.peerIdentity);
            if (!id.ok()) {
              kj::throwFatalException(KjFromStatus(errors::Unauthenticated(
                  "TLS with the client refused: ", id.status().message())));
            }
            return Secured{
                kj::heap<TlsErrorStream>(kj::mv(secured.stream), "the client").attach(kj::mv(self)),
                std::move(id).value()};
          },
          [record](kj::Exception&& e) -> Secured {
            std::string hint = PlainClientHint(*record);
            kj::throwFatalException(Tagged(kj::mv(e), "the client", hint));
          });
}

}  // namespace tfd
