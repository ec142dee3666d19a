#include "common/tensor.h"

#include <catch2/catch.hpp>

#include "common/buffer_pool.h"
#include "common/memory_budget.h"
#include "common/tensor_eigen.h"

namespace tfd {
namespace {

TEST_CASE("tensors are 64-byte aligned, zero-filled and share on slice") {
  auto t = Tensor::Allocate(DType::kFloat32, TensorShape({4, 3}));
  REQUIRE(t.ok());
  CHECK(reinterpret_cast<uintptr_t>(t->raw_data()) % kTensorAlignment == 0);
  CHECK((EigenFlat<float>(*t) == 0.0f).all());
  EigenFlat<float>(*t).setLinSpaced(12, 0, 11);
  Tensor rows = t->Slice(1, 3);
  CHECK(rows.shape() == TensorShape({2, 3}));
  CHECK(rows.data<float>()[0] == 3.0f);
  CHECK(rows.buffer() == t->buffer());
  auto r = t->Reshaped(TensorShape({12}));
  REQUIRE(r.ok());
  CHECK(r->data<float>()[11] == 11.0f);
  CHECK(t->Reshaped(TensorShape({5})).status().code() == Code::kInvalidArgument);
}

TEST_CASE("large tensors reuse pooled blocks, zero-filled again, and give their budget back") {
  // 300 x 256 floats: 300 KiB, above BufferPool::kMinBytes.
  const TensorShape shape({300, 256});
  auto budget = std::make_shared<MemoryBudget>(uint64_t{1} << 20);
  void* first_block = nullptr;
  {
    auto t = Tensor::Allocate(DType::kFloat32, shape, budget);
    REQUIRE(t.ok());
    CHECK(budget->used() == 300 * 256 * 4);
    CHECK(reinterpret_cast<uintptr_t>(t->raw_data()) % kTensorAlignment == 0);
    EigenFlat<float>(*t).setConstant(7.0f);
    first_block = t->raw_data();
  }
  CHECK(budget->used() == 0);
  const BufferPool::Stats before = HostBufferPool().stats();
  auto again = Tensor::Allocate(DType::kFloat32, shape, budget);
  REQUIRE(again.ok());
  const BufferPool::Stats after = HostBufferPool().stats();
  CHECK(after.reused == before.reused + 1);
  CHECK(after.blocks_mapped == before.blocks_mapped);
  CHECK(again->raw_data() == first_block);
  CHECK((EigenFlat<float>(*again) == 0.0f).all());
  // Refused by the budget: nothing taken from the pool, nothing charged.
  auto too_big = Tensor::Allocate(DType::kFloat32, TensorShape({1024, 1024}), budget);
  CHECK(too_big.status().code() == Code::kResourceExhausted);
  CHECK(HostBufferPool().stats().gets == after.gets);
  CHECK(budget->used() == 300 * 256 * 4);
}

TEST_CASE("huge shapes are refused before allocation") {
  auto s = TensorShape::Make({1 << 20, 1 << 20, 1 << 20});
  CHECK(s.status().code() == Code::kInvalidArgument);
  CHECK(TensorShape::Make({3, -1}).status().code() == Code::kInvalidArgument);
  auto big = Tensor::Allocate(DType::kFloat64, TensorShape({int64_t{1} << 35}));
  CHECK(big.status().code() == Code::kInvalidArgument);
}

TEST_CASE("string tensors own their strings and deep-copy") {
  Tensor s = Tensor::FromVector<std::string>({"a", "bc"});
  auto c = s.DeepCopy();
  REQUIRE(c.ok());
  s.data<std::string>()[0] = "changed";
  CHECK(c->data<std::string>()[0] == "a");
  CHECK(c->DebugString() == "[\"a\" \"bc\"]");
}

TEST_CASE("partial shapes merge and broadcast") {
  auto m = PartialShape({-1, 3}).Merge(PartialShape({2, -1}));
  REQUIRE(m.ok());
  CHECK(*m == PartialShape({2, 3}));
  CHECK(!PartialShape({2}).IsCompatibleWith(PartialShape({3})));
  CHECK(PartialShape::Unknown().ToString() == "<unknown>");
  CHECK(PartialShape({-1, 784}).ToString() == "[?, 784]");
}

TEST_CASE("status codes have stable names") {
  CHECK(CodeName(Code::kInvalidArgument) == "INVALID_ARGUMENT");
  CHECK(CodeFromName("DEADLINE_EXCEEDED") == Code::kDeadlineExceeded);
  Status s = errors::NotFound("node '", "x", "'");
  CHECK(s.ToString() == "NOT_FOUND: node 'x'");
  CHECK(s.WithContext("graph g").message() == "graph g: node 'x'");
}

TEST_CASE("every status code's name reads back as that code") {
  for (int i = 0; i < kNumCodes; ++i) {
    const Code code = static_cast<Code>(i);
    CHECK(CodeName(code) != "UNKNOWN");
    CHECK(CodeFromName(CodeName(code)) == code);
  }
  Status s = errors::ResourceExhausted("output 0 of 'big'");
  CHECK(s.ToString() == "RESOURCE_EXHAUSTED: output 0 of 'big'");
}

}  // namespace
}  // namespace tfd
