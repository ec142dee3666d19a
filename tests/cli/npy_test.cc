// .npy files as numpy writes them, and the ways they can be unusable.
#include "cli/npy.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tfd::cli {
namespace {

// A .npy file: magic, version, header padded so the body is 64-byte aligned
// (as numpy pads it), then the raw body.
std::string Npy(const std::string& dict, const std::string& body, int major = 1) {
  const size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const size_t n = header.size();
  out += static_cast<char>(n & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  if (major != 1) {
    out += static_cast<char>((n >> 16) & 0xff);
    out += static_cast<char>((n >> 24) & 0xff);
  }
  return out + header + body;
}

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  std::string s(v.size() * sizeof(T), '\0');
  if (!v.empty()) std::memcpy(s.data(), v.data(), s.size());
  return s;
}

TEST_CASE("npy: each supported dtype and version reads back") {
  auto f = ParseNpy(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                        Bytes<float>({1, 2, 3, 4})), "a.npy");
  REQUIRE(f.ok());
  CHECK(TensorsEqual(*f, Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}))));

  auto d = ParseNpy(Npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
                        Bytes<double>({0.5, -1, 1e300}), 2), "d.npy");
  REQUIRE(d.ok());
  CHECK(TensorsEqual(*d, Tensor::FromVector<double>({0.5, -1, 1e300})));

  auto i = ParseNpy(Npy("{\"descr\": \"<i8\", \"fortran_order\": False, \"shape\": ()}",
                        Bytes<int64_t>({-7}), 3), "i.npy");
  REQUIRE(i.ok());
  CHECK(TensorsEqual(*i, Tensor::Scalar<int64_t>(-7)));

  auto i32 = ParseNpy(Npy("{'descr': '<i4', 'fortran_order': False, 'shape': (0, 3), }", ""), "e.npy");
  REQUIRE(i32.ok());
  CHECK(i32->dtype() == DType::kInt32);
  CHECK(i32->shape() == TensorShape({0, 3}));

  auto u = ParseNpy(Npy("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }",
                        std::string("\x00\xff", 2)), "u.npy");
  REQUIRE(u.ok());
  CHECK(TensorsEqual(*u, Tensor::FromVector<uint8_t>({0, 255})));

  auto b = ParseNpy(Npy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                        std::string("\x01\x00", 2)), "b.npy");
  REQUIRE(b.ok());
  CHECK(TensorsEqual(*b, Tensor::FromVector<bool>({true, false})));
}

Status Error(const std::string& bytes) {
  auto t = ParseNpy(bytes, "bad.npy");
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == Code::kInvalidArgument);
  CHECK_THAT(t.status().message(), Catch::Contains("'bad.npy'"));
  return t.status();
}

TEST_CASE("npy: unusable files name the file and the problem") {
  const std::string body = Bytes<float>({1, 2});
  CHECK_THAT(Error(Npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", body)).message(),
             Catch::Contains("fortran_order"));
  CHECK_THAT(Error(Npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", body)).message(),
             Catch::Contains("dtype '>f4' is not supported"));
  CHECK_THAT(Error(Npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", body)).message(),
             Catch::Contains("'<c8'"));
  CHECK_THAT(Error(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", body)).message(),
             Catch::Contains("needs 12 bytes of data but the file has 8"));
  CHECK_THAT(Error(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000, 100000000000), }",
                       body)).message(),
             Catch::Contains("bytes of data"));
  CHECK_THAT(Error(Npy("{'descr': '<f4', 'shape': (2,), }", body)).message(),
             Catch::Contains("no 'fortran_order'"));
  CHECK_THAT(Error(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,) ", body)).message(),
             Catch::Contains("malformed header"));
  CHECK_THAT(Error(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", body)).message(),
             Catch::Contains("malformed header"));
  CHECK_THAT(Error("not an npy file at all").message(), Catch::Contains("magic"));
  std::string v9 = Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", body);
  v9[6] = 9;
  CHECK_THAT(Error(v9).message(), Catch::Contains("version 9.0"));
  std::string cut = Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", body);
  CHECK_THAT(Error(cut.substr(0, 30)).message(), Catch::Contains("header says"));
}

// Writes `bytes` to a fresh file under the system's temporary directory.
class TempFile {
 public:
  explicit TempFile(const std::string& bytes) {
    char name[] = "/tmp/npy_test_XXXXXX";
    const int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    path_ = name;
    REQUIRE(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    close(fd);
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST_CASE("npy: ReadNpy reads a file as ParseNpy reads its bytes, header then body") {
  const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
  for (int major : {1, 2}) {
    INFO("version " << major);
    TempFile file(Npy(dict, Bytes<double>({0.5, -1, 3}), major));
    auto t = ReadNpy(file.path());
    REQUIRE(t.ok());
    CHECK(TensorsEqual(*t, Tensor::FromVector<double>({0.5, -1, 3})));
  }
  // Bools are bytes there, any nonzero one true.
  TempFile bools(Npy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", std::string("\0\x07\x01", 3)));
  auto b = ReadNpy(bools.path());
  REQUIRE(b.ok());
  CHECK(TensorsEqual(*b, Tensor::FromVector<bool>({false, true, true})));
  // A body shorter than the shape says is refused before it is read.
  TempFile cut(Npy(dict, Bytes<double>({0.5, -1})));
  auto c = ReadNpy(cut.path());
  REQUIRE_FALSE(c.ok());
  CHECK_THAT(c.status().message(), Catch::Contains("needs 24 bytes of data but the file has 16"));
}

TEST_CASE("npy: a missing file is NOT_FOUND") {
  auto t = ReadNpy("/nonexistent/x.npy");
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == Code::kNotFound);
  CHECK_THAT(t.status().message(), Catch::Contains("/nonexistent/x.npy"));
}

}  // namespace
}  // namespace tfd::cli
