// tfd's configuration: flags, then TFD_* environment variables, then a
// --config file, then TF_CONFIG — the first that sets a value wins. Each flag
// is declared once, in daemon/tfd_flags.cc, with its variable, default,
// help and validation.
//
//   auto config = ParseTfdConfig(argc, argv, ::getenv);
//   if (!config.ok()) { print "tfd: error: ..." and exit 2 }
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/cluster_spec.h"
#include "daemon/distributed/server_limits.h"
#include "common/size_limits.h"
#include "daemon/log_format.h"
#include "daemon/rpc/tls.h"

namespace tfd {

// The longest --spin-wait-us: past a few hundred microseconds polling only
// burns CPU, and past 10 ms it is a busy loop.
inline constexpr std::chrono::microseconds kMaxSpinWait{10000};

struct TfdConfig {
  ClusterSpec cluster;
  std::string job;
  int task = -1;
  std::string listen;          // default: DefaultListenAddress(this task's address in the spec)
  std::string http_listen;     // --http-listen: /metrics and /healthz; empty: none
  std::string data_dir;        // readers and Save/Restore may use it
  std::string checkpoint_dir;  // checkpoints go here; the newest good one is restored on start
  int checkpoint_keep = 5;     // checkpoints kept after each save (daemon/checkpoint/checkpoint_manager.h)
  std::string log_level = "info";
  std::optional<LogFormat> log_format;  // --log-format; nullopt: DetectLogFormat
  bool log_device_placement = false;
  bool allow_soft_placement = false;  // GPU requests that cannot be met run on the CPU
  bool pin_host_buffers = true;  // --pin-host-buffers: page-lock the host tensor pool on a GPU host
  std::string auth_token;      // read from --auth-token-file
  std::string auth_token_warning;  // what to log about its file (group-readable), or empty
  int threads = 0;             // compute threads; 0 = NumAllowedCpus()
  std::chrono::milliseconds step_timeout{30000};
  // --spin-wait-us: how long the event loop polls after its last event
  // before it sleeps (daemon/rpc/spin_wait.h); 0, the default, sleeps at once.
  std::chrono::microseconds spin_wait{0};
  // --drain-grace: how long the steps still running at SIGTERM may go on
  // before they are cancelled (daemon/task_host.h, Drain).
  std::chrono::milliseconds drain_grace{2000};
  ServerLimits server_limits;  // connection caps, login deadline and throttle
  SizeLimits size_limits;      // --max-graph-tensor-bytes, --max-graph-bytes, --max-tensor-bytes
  uint64_t memory_budget = 0;  // --memory-budget; 0: MemoryBudget::DefaultLimit()
  uint64_t max_received_bytes = uint64_t{4} << 30;  // --max-received-bytes
  std::string data_plane_transports = "stream";  // --data-plane-transports: stream or shm
  // --tls-cert, --tls-key, --tls-ca: mutual TLS on every control-plane
  // connection (docs/operations.md, "TLS"); null when off.
  std::shared_ptr<Tls> tls;
  TlsFiles tls_files;          // what --tls-* named; `tls` holds them loaded
  std::string config_file;     // --config, or empty
  bool help = false;
  std::string help_format;     // --help=FORMAT: text, man, markdown or bash-completion
  bool version = false;        // --version: print tfd's version and exit
  std::string usage;           // the flags' help text
};

// INVALID_ARGUMENT naming the flag (or variable, or file) and the value
// that is unknown, missing, malformed or contradicts another: an unknown
// flag, no cluster, a job not in it, a task out of range, an unreadable
// token file, an unknown log level, a size that is not a positive number of
// bytes (suffixes K, M, G, T, binary: "64M", "8GiB"), one or two of the
// three --tls-* flags, a TLS file that cannot be read or parsed, a
// --spin-wait-us outside 0..kMaxSpinWait (daemon/tfd_flags.cc has them all).
StatusOr<TfdConfig> ParseTfdConfig(int argc, const char* const* argv,
                                   const std::function<const char*(const char*)>& getenv);
// The same for tfd's flags alone, without the program's name: a task that
// another program hosts (daemon/task_host.h), configured as tfd would be.
StatusOr<TfdConfig> ParseTfdFlags(const std::vector<std::string>& flags,
                                  const std::function<const char*(const char*)>& getenv);

// Where a task listens when --listen does not say: "*:PORT" (every IPv4
// and IPv6 interface, as TensorFlow's server listens on 0.0.0.0) with the
// port of its address in the cluster spec. The host part is the name peers
// dial, which need not resolve to an interface of this machine (a pod's
// headless-service name before the pod is ready, a host name that
// /etc/hosts maps to 127.0.1.1). A loopback address (localhost, 127.x,
// [::1]) is kept as it is: peers that dial it are on this host, so nothing
// is gained by listening beyond it.
std::string DefaultListenAddress(const std::string& own_address);
// Whether "host:port" names a loopback host.
bool IsLoopbackAddress(const std::string& address);

// "1048576", "64K", "64M", "8G", "1T" (also "64MiB", "64MB": all binary) as
// bytes; nullopt for anything else, 0 included.
std::optional<uint64_t> ParseByteSize(const std::string& text);

}  // namespace tfd
