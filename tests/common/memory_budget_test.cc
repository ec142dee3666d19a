// MemoryBudget: charges up to the limit, refuses beyond it, and gets back
// every byte when the buffers charged to it are freed.
#include "common/memory_budget.h"

#include <catch2/catch.hpp>

#include "common/memory_charge.h"
#include "common/tensor.h"

namespace tfd {
namespace {

TEST_CASE("a budget charges up to its limit and refuses beyond it") {
  MemoryBudget budget(1000);
  REQUIRE(budget.Charge(600).ok());
  const Status over = budget.Charge(500);
  CHECK(over.code() == Code::kResourceExhausted);
  CHECK(over.message().find("600 bytes of 1000 bytes in use") != std::string::npos);
  CHECK(budget.used() == 600);  // a refused charge counts nothing
  REQUIRE(budget.Charge(400).ok());
  budget.Release(1000);
  CHECK(budget.used() == 0);
  CHECK(budget.Charge(1001).code() == Code::kResourceExhausted);
}

TEST_CASE("a MemoryCharge counts its bytes for as long as it lives, moved or not") {
  auto budget = std::make_shared<MemoryBudget>(1000);
  {
    auto charge = MemoryCharge::Take(budget, 600);
    REQUIRE(charge.ok());
    CHECK(budget->used() == 600);
    auto refused = MemoryCharge::Take(budget, 500);
    CHECK(refused.status().code() == Code::kResourceExhausted);
    CHECK(budget->used() == 600);
    MemoryCharge moved = std::move(charge).value();
    CHECK(moved.bytes() == 600);
    CHECK(budget->used() == 600);
    MemoryCharge other = MemoryCharge::Take(budget, 300).value();
    other = std::move(moved);  // gives back the 300 it held
    CHECK(budget->used() == 600);
  }
  CHECK(budget->used() == 0);
  auto unbudgeted = MemoryCharge::Take(nullptr, uint64_t{1} << 60);
  REQUIRE(unbudgeted.ok());
  CHECK(unbudgeted->bytes() == 0);
}

TEST_CASE("the default budget is a part of this machine's memory") {
  const uint64_t limit = MemoryBudget::DefaultLimit();
  CHECK(limit > (uint64_t{64} << 20));
  CHECK(limit < (uint64_t{1} << 50));
}

TEST_CASE("tensors give their bytes back when their buffer dies, copies included") {
  auto budget = std::make_shared<MemoryBudget>(4096);
  {
    auto t = Tensor::Allocate(DType::kFloat32, TensorShape({256}), budget);
    REQUIRE(t.ok());
    CHECK(budget->used() == 1024);
    Tensor view = t->Slice(0, 128);  // shares the buffer: no new charge
    CHECK(budget->used() == 1024);
    auto copy = t->DeepCopy();  // a fresh buffer, charged to the same budget
    REQUIRE(copy.ok());
    CHECK(budget->used() == 2048);
    auto too_big = Tensor::Allocate(DType::kFloat64, TensorShape({512}), budget);
    CHECK(too_big.status().code() == Code::kResourceExhausted);
    CHECK(budget->used() == 2048);
  }
  CHECK(budget->used() == 0);
}

}  // namespace
}  // namespace tfd
