// TensorFromProto: a proto of a few bytes can describe gigabytes (a short
// value list is repeated to fill the shape), so every size is checked before
// anything is allocated.
#include "common/tensor_proto.h"

#include <sys/resource.h>

#include <capnp/message.h>
#include <catch2/catch.hpp>

#include <functional>
#include <limits>

namespace tfd {
namespace {

// This process's peak resident memory so far, in MiB.
int64_t PeakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;  // Linux reports KiB
}

// Decodes a proto filled in by `fill`, with `max_bytes` as the limit, and
// checks that doing so raised the peak resident memory by less than 64 MiB:
// a refused tensor must be refused before it is allocated.
StatusOr<Tensor> Decode(const std::function<void(proto::Tensor::Builder)>& fill,
                        uint64_t max_bytes = SizeLimits().max_tensor_bytes) {
  capnp::MallocMessageBuilder message;
  auto t = message.initRoot<proto::Tensor>();
  fill(t);
  const int64_t before = PeakRssMiB();
  auto out = TensorFromProto(t.asReader(), max_bytes);
  CHECK(PeakRssMiB() - before < 64);
  return out;
}

void SetShape(proto::Tensor::Builder t, std::initializer_list<int64_t> dims) {
  auto shape = t.initShape(static_cast<unsigned>(dims.size()));
  unsigned i = 0;
  for (int64_t d : dims) shape.set(i++, d);
}

void CheckRefused(const StatusOr<Tensor>& t, const std::string& needle) {
  INFO(t.status().ToString());
  REQUIRE(!t.ok());
  CHECK(t.status().code() == Code::kInvalidArgument);
  CHECK(t.status().message().find(needle) != std::string::npos);
}

TEST_CASE("a short value list fills its shape by repetition") {
  auto t = Decode([](proto::Tensor::Builder t) {
    t.setDtype(proto::DType::FLOAT32);
    SetShape(t, {2, 2});
    t.initFloatVal(2).set(0, 1.5f);
  });
  REQUIRE(t.ok());
  CHECK(t->data<float>()[0] == 1.5f);
  CHECK(t->data<float>()[3] == 0.0f);  // the list's last value, 0
}

TEST_CASE("a long string repeated to fill a shape counts every character it makes") {
  const std::string kilobyte(1024, 's');
  auto fill = [&](proto::Tensor::Builder t) {
    t.setDtype(proto::DType::STRING);
    SetShape(t, {1 << 20});  // 1 GiB of characters from one 1 KiB value
    t.initStringVal(1).set(0, capnp::Data::Reader(
                                  reinterpret_cast<const capnp::byte*>(kilobyte.data()), 1024));
  };
  capnp::MallocMessageBuilder message;
  auto t = message.initRoot<proto::Tensor>();
  fill(t);
  auto info = InspectTensorProto(t.asReader());
  REQUIRE(info.ok());
  CHECK(info->bytes >= (uint64_t{1} << 30));
  CheckRefused(Decode(fill, uint64_t{512} << 20), "allowed for one tensor");
}

TEST_CASE("a tensor over the limit is refused before it is allocated") {
  // 16 GB from a one-element list, over the default 4 GiB; 1 GB, over a
  // limit of 64 MiB.
  for (int64_t n : {int64_t{4000000000}, int64_t{250000000}}) {
    CAPTURE(n);
    auto t = Decode(
        [n](proto::Tensor::Builder t) {
          t.setDtype(proto::DType::FLOAT32);
          SetShape(t, {n});
          t.initFloatVal(1).set(0, 1.0f);
        },
        n == 4000000000 ? SizeLimits().max_tensor_bytes : uint64_t{64} << 20);
    CheckRefused(t, "allowed for one tensor (--max-tensor-bytes)");
  }
  auto small = Decode(
      [](proto::Tensor::Builder t) {
        t.setDtype(proto::DType::INT64);
        SetShape(t, {1000});
      },
      /*max_bytes=*/4096);
  CheckRefused(small, "int64[1000] takes 8000 bytes, more than the 4096 bytes allowed");
}

TEST_CASE("content of the wrong length is refused before allocating the shape") {
  // 2^30 + 2 rows of two floats is 8 GiB; 16 bytes of content do not fill it.
  auto t = Decode(
      [](proto::Tensor::Builder t) {
        t.setDtype(proto::DType::FLOAT32);
        SetShape(t, {1073741826, 2});
        t.initContent(16);
      },
      std::numeric_limits<uint64_t>::max());
  CheckRefused(t, "float32[1073741826, 2] needs 8589934608 content bytes, got 16");
}

TEST_CASE("negative dimensions and element counts that overflow are refused") {
  auto negative = Decode([](proto::Tensor::Builder t) {
    t.setDtype(proto::DType::FLOAT32);
    SetShape(t, {4, -2});
  });
  CheckRefused(negative, "is negative");
  auto overflow = Decode([](proto::Tensor::Builder t) {
    t.setDtype(proto::DType::FLOAT32);
    SetShape(t, {int64_t{1} << 62, 4, 4});
  });
  CheckRefused(overflow, "elements");
}

TEST_CASE("value lists of another dtype or longer than the shape are refused") {
  CheckRefused(Decode([](proto::Tensor::Builder t) {
                 t.setDtype(proto::DType::FLOAT32);
                 SetShape(t, {2});
                 t.initInt32Val(1);
               }),
               "given values in int32Val");
  CheckRefused(Decode([](proto::Tensor::Builder t) {
                 t.setDtype(proto::DType::INT32);
                 SetShape(t, {2});
                 t.initInt32Val(3);
               }),
               "given 3 values");
}

}  // namespace
}  // namespace tfd
