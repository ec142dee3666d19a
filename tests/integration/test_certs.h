// Certs: a temporary directory with the certificates make_test_certs.sh
// makes (the cluster's CA, a certificate per task, one per client role, and
// the wrong ones), for tests of TLS and of who a peer is.
//
//   Certs certs;
//   cluster.Spawn("ps", 0, certs.Flags("ps-0"));
//   auto tls = certs.Load("operator");
//
// Thread-safety: one test thread.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "daemon/rpc/tls.h"
#include "tests/integration/child_process.h"
#include "tests/integration/log_lines.h"
#include "tests/integration/temp_dir.h"

namespace tfd::testing {

struct Certs {
  TempDir dir;
  Certs() {
    const char* script = std::getenv("MAKE_TEST_CERTS");
    REQUIRE(script != nullptr);
    auto made = RunProcess({"sh", script, dir.path()}, std::chrono::seconds(60));
    REQUIRE(made.ok());
    INFO("stderr: " << OneLine(made->err));
    REQUIRE(made->exit_status == 0);
  }
  std::string File(const std::string& name) const { return dir.path() + "/" + name; }
  // tfd's or tfctl's flags for the pair NAME.crt, NAME.key, trusting `ca`.
  std::vector<std::string> Flags(const std::string& name, const std::string& ca = "ca") const {
    return {"--tls-cert", File(name + ".crt"), "--tls-key", File(name + ".key"), "--tls-ca",
            File(ca + ".crt")};
  }
  std::shared_ptr<Tls> Load(const std::string& name, const std::string& ca = "ca") const {
    auto tls = Tls::Load({File(name + ".crt"), File(name + ".key"), File(ca + ".crt")});
    INFO(tls.status().ToString());
    REQUIRE(tls.ok());
    return *tls;
  }
};

}  // namespace tfd::testing
