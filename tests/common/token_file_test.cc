// ReadTokenFile: the token is the first line, trimmed; a blank one, one
// shorter than 128 bits in its alphabet (checked on both sides of each
// boundary) or too regular is refused, as is a file every user may read or
// write; a group-readable one is accepted with a warning; links are
// followed to the file they name.
#include "common/token_file.h"

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/temp_dir.h"

namespace tfd {
namespace {

using testing::TempDir;

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// `contents` in a file of mode `mode`.
std::string File(const TempDir& dir, const std::string& contents, mode_t mode = 0600) {
  static int n = 0;
  const std::string path = dir.Write("token" + std::to_string(n++), contents);
  REQUIRE(::chmod(path.c_str(), mode) == 0);
  return path;
}

TEST_CASE("the token is the first line with the whitespace around it trimmed") {
  TempDir dir;
  const std::string token = testing::kToken;
  for (const std::string& contents : {token, token + "\n", "  " + token + " \r\n", "\t" + token +
                                      "\nsecond line\n"}) {
    auto file = ReadTokenFile(File(dir, contents));
    INFO(file.status().ToString());
    REQUIRE(file.ok());
    CHECK(file->token == token);
    CHECK(file->warning.empty());
  }
}

TEST_CASE("an empty or blank token file is refused, naming the file and how to make a token") {
  TempDir dir;
  const std::vector<std::string> blanks = {"",      "\n", "   ", "   \n", " \t\r\n",
                                           "\n" + std::string(testing::kToken)};
  for (const std::string& contents : blanks) {
    const std::string path = File(dir, contents);
    auto file = ReadTokenFile(path);
    INFO("contents '" << contents << "': " << file.status().ToString());
    CHECK(file.status().code() == Code::kInvalidArgument);
    CHECK(Contains(file.status().message(), "token file '" + path + "' holds no token"));
    CHECK(Contains(file.status().message(), "openssl rand -hex 32 > " + path));
  }
}

TEST_CASE("a token needs 128 bits by its alphabet: refused one character short, accepted at the "
          "boundary") {
  struct Case {
    std::string what, accepted, refused, unit;
  };
  const std::string hex = "0123456789abcdef0123456789ABCDEF";  // 32 hex digits
  const std::string b64 = "Zm9vYmFyYmF6cXV4K/+w9Q";            // 22 base64 characters
  const std::string b64url = "Zm9vYmFyYmF6cXV4K_-w9Q";         // base64url
  const std::string printable = "correct horse batter";         // 20, with spaces
  const std::string binary = "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0b\x0c\x0e\x0f\x10\x11\x80";
  const std::vector<Case> cases = {
      {"hex", hex, hex.substr(1), "31 hex digits"},
      {"base64", b64, b64.substr(1), "21 base64 characters"},
      {"base64 with padding", b64 + "==", b64.substr(1) + "==", "21 base64 characters"},
      {"base64url", b64url, b64url.substr(1), "21 base64 characters"},
      {"printable", printable, printable.substr(1), "19 printable characters"},
      {"binary", binary, binary.substr(1), "15 bytes"},
  };
  TempDir dir;
  for (const auto& c : cases) {
    INFO(c.what);
    auto good = ReadTokenFile(File(dir, c.accepted + "\n"));
    INFO(good.status().ToString());
    CHECK(good.ok());
    const std::string path = File(dir, c.refused + "\n");
    auto short_one = ReadTokenFile(path);
    INFO(short_one.status().ToString());
    CHECK(short_one.status().code() == Code::kInvalidArgument);
    CHECK(Contains(short_one.status().message(), "token file '" + path + "' holds a token of " + c.unit));
    CHECK(Contains(short_one.status().message(), "at least 128 random bits"));
    CHECK(Contains(short_one.status().message(), "openssl rand -hex 32"));
  }
}

TEST_CASE("a long token of few distinct characters is refused") {
  TempDir dir;
  const std::string path = File(dir, "abababababababababababababababababababab\n");
  auto file = ReadTokenFile(path);
  CHECK(file.status().code() == Code::kInvalidArgument);
  CHECK(Contains(file.status().message(), "only 2 distinct characters"));
  // Eight distinct are enough.
  CHECK(ReadTokenFile(File(dir, "0123456701234567012345670123456701234567\n")).ok());
}

TEST_CASE("a token file others may read or write is refused; one its group may read is accepted "
          "with a warning") {
  TempDir dir;
  const std::string token = std::string(testing::kToken) + "\n";
  auto own = ReadTokenFile(File(dir, token, 0600));
  REQUIRE(own.ok());
  CHECK(own->warning.empty());
  CHECK(ReadTokenFile(File(dir, token, 0400)).ok());

  const std::string group_path = File(dir, token, 0640);
  auto group = ReadTokenFile(group_path);
  REQUIRE(group.ok());
  CHECK(group->token == testing::kToken);
  CHECK(Contains(group->warning, "token file '" + group_path + "' may be read by its group (mode 0640)"));
  CHECK(Contains(group->warning, "chmod 600 " + group_path));

  for (mode_t mode : {0644, 0666, 0604, 0602}) {
    const std::string path = File(dir, token, mode);
    auto file = ReadTokenFile(path);
    INFO("mode " << std::oct << mode << ": " << file.status().ToString());
    CHECK(file.status().code() == Code::kInvalidArgument);
    CHECK(Contains(file.status().message(), "token file '" + path + "' may be"));
    CHECK(Contains(file.status().message(), "by every user"));
    CHECK(Contains(file.status().message(), "chmod 600 " + path));
  }
}

TEST_CASE("the mode checked is that of the file a link leads to") {
  TempDir dir;
  const std::string token = std::string(testing::kToken) + "\n";
  // As a Kubernetes Secret's volume: token -> ..data/token, the link itself 0777.
  const std::string target = File(dir, token, 0440);
  const std::string link = dir.path() + "/link";
  std::filesystem::create_symlink(target, link);
  auto file = ReadTokenFile(link);
  INFO(file.status().ToString());
  REQUIRE(file.ok());
  CHECK(file->token == testing::kToken);
  CHECK(Contains(file->warning, "mode 0440"));

  REQUIRE(::chmod(target.c_str(), 0644) == 0);
  CHECK(ReadTokenFile(link).status().code() == Code::kInvalidArgument);
}

TEST_CASE("a missing file, or one whose first line is no token, is INVALID_ARGUMENT naming it") {
  TempDir dir;
  const std::string missing = dir.path() + "/none";
  auto none = ReadTokenFile(missing);
  CHECK(none.status().code() == Code::kInvalidArgument);
  CHECK(Contains(none.status().message(), "cannot read token file '" + missing + "'"));

  const std::string path = File(dir, std::string(kMaxTokenLine + 1, 'x') + "\n");
  auto huge = ReadTokenFile(path);
  CHECK(huge.status().code() == Code::kInvalidArgument);
  CHECK(Contains(huge.status().message(), "longer than 4096 bytes"));
}

}  // namespace
}  // namespace tfd
