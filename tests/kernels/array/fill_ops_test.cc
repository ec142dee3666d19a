// Fill, ZerosLike, OnesLike, OneHot.
#include "tests/kernels/array/array_test_util.h"

namespace tfd::array_test {
namespace {

TEST_CASE("Fill repeats a scalar over the requested shape") {
  CheckTensor(RunOne("Fill", {{"T", DType::kFloat64}}, {I32({2, 3}), F64({2.5}, {})}),
              DType::kFloat64, {2, 3}, {2.5, 2.5, 2.5, 2.5, 2.5, 2.5});
  CheckTensor(RunOne("Fill", {{"T", DType::kInt32}, {"index_type", DType::kInt64}},
                     {I64({}), Tensor::Scalar(int32_t{-4})}),
              DType::kInt32, {}, {-4});
  CheckTensor(RunOne("Fill", {{"T", DType::kBool}}, {I32({0, 5}), Tensor::Scalar(true)}),
              DType::kBool, {0, 5}, {});
  Tensor s = RunOne("Fill", {{"T", DType::kString}}, {I32({2}), Tensor::Scalar("ab")});
  CHECK(s.data<std::string>()[1] == "ab");
}

TEST_CASE("Fill refuses bad dims and a non-scalar value") {
  CheckInvalid(Run("Fill", {{"T", DType::kFloat64}}, {I32({2, -1}), F64({1}, {})}).status(),
               "is negative");
  CheckInvalid(Run("Fill", {{"T", DType::kFloat64}}, {I32({2}), F64({1, 2}, {2})}).status(),
               "value must be a scalar");
  CheckInvalid(Run("Fill", {{"T", DType::kFloat64}}, {I32({2}, {1, 1}), F64({1}, {})}).status(),
               "dims must be a vector");
}

TEST_CASE("Fill's shape function reads a known dims input") {
  const AttrMap attrs{{"T", DType::kFloat32}};
  const PartialShape scalar(std::vector<int64_t>{});
  CHECK(InferOne("Fill", attrs, {PartialShape({2}), scalar}, {{0, I32({4, 0})}}) ==
        PartialShape({4, 0}));
  CHECK(InferOne("Fill", attrs, {PartialShape({3}), scalar}) == PartialShape::UnknownOfRank(3));
  CHECK(InferOne("Fill", attrs, {Unknown(), Unknown()}) == Unknown());
  CheckInvalid(InferShapes("Fill", attrs, {PartialShape({2}), PartialShape({2})}).status(),
               "input 1 must have rank 0");
  CheckInvalid(InferShapes("Fill", attrs, {PartialShape({1}), scalar}, {{0, I32({-3})}}).status(),
               "non-negative");
}

TEST_CASE("ZerosLike and OnesLike keep shape and dtype") {
  CheckTensor(RunOne("ZerosLike", {{"T", DType::kFloat32}}, {F32({1, -2, 3}, {3, 1})}),
              DType::kFloat32, {3, 1}, {0, 0, 0});
  CheckTensor(RunOne("OnesLike", {{"T", DType::kUInt8}},
                     {Tensor::FromVector<uint8_t>({7, 9}, {2})}),
              DType::kUInt8, {2}, {1, 1});
  CheckTensor(RunOne("OnesLike", {{"T", DType::kBool}}, {Tensor::Scalar(false)}), DType::kBool,
              {}, {1});
  CheckTensor(RunOne("OnesLike", {{"T", DType::kInt64}}, {I64({}, {0})}), DType::kInt64, {0}, {});
  Tensor z = RunOne("ZerosLike", {{"T", DType::kString}}, {Str({"x", "y"}, {2})});
  CHECK(z.data<std::string>()[0].empty());
  CHECK(z.data<std::string>()[1].empty());
  CHECK(InferOne("OnesLike", {{"T", DType::kInt32}}, {PartialShape({-1, 2})}) ==
        PartialShape({-1, 2}));
}

// One-hot by its definition, one output element at a time: the new axis
// sits at `axis` of the output's index.
std::vector<double> OneHotReference(const std::vector<int64_t>& idx,
                                    const std::vector<int64_t>& idx_dims, int64_t depth,
                                    int axis, double on, double off) {
  std::vector<int64_t> dims = idx_dims;
  dims.insert(dims.begin() + axis, depth);
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  std::vector<double> out;
  for (int64_t pos = 0; pos < total; ++pos) {
    std::vector<int64_t> index(dims.size());
    int64_t rest = pos;
    for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
      index[d] = rest % dims[d];
      rest /= dims[d];
    }
    const int64_t k = index[axis];
    index.erase(index.begin() + axis);
    int64_t flat = 0;
    for (size_t d = 0; d < index.size(); ++d) flat = flat * idx_dims[d] + index[d];
    out.push_back(idx[flat] == k ? on : off);
  }
  return out;
}

TEST_CASE("OneHot places on_value at each index along the new axis") {
  const std::vector<int64_t> idx = {0, 2, -1, 1, 3, 1};  // -1 and 3 are outside [0, 3)
  for (int64_t axis : {-1, 0, 1, 2}) {
    INFO("axis " << axis);
    Tensor out = RunOne("OneHot", {{"T", DType::kFloat64}, {"axis", axis}},
                        {I64(idx, {2, 3}), Tensor::Scalar(int32_t{3}), F64({5}, {}),
                         F64({-1}, {})});
    const int pos = axis == -1 ? 2 : static_cast<int>(axis);
    std::vector<int64_t> dims = {2, 3};
    dims.insert(dims.begin() + pos, 3);
    CheckTensor(out, DType::kFloat64, TensorShape(dims),
                OneHotReference(idx, {2, 3}, 3, pos, 5, -1));
  }
  // int32 indices and a rank-0 index.
  CheckTensor(RunOne("OneHot", {{"T", DType::kInt32}, {"TI", DType::kInt32}},
                     {I32({1}, {}), Tensor::Scalar(int32_t{4}), I32({1}, {}), I32({0}, {})}),
              DType::kInt32, {4}, {0, 1, 0, 0});
  // Depth 0 and empty indices give empty outputs.
  CheckTensor(RunOne("OneHot", {{"T", DType::kFloat32}},
                     {I64({0, 1}), Tensor::Scalar(int32_t{0}), F32({1}, {}), F32({0}, {})}),
              DType::kFloat32, {2, 0}, {});
  CheckTensor(RunOne("OneHot", {{"T", DType::kFloat32}},
                     {I64({}, {0}), Tensor::Scalar(int32_t{3}), F32({1}, {}), F32({0}, {})}),
              DType::kFloat32, {0, 3}, {});
}

TEST_CASE("OneHot refuses a negative depth, a bad axis and non-scalar values") {
  const AttrMap attrs{{"T", DType::kFloat32}};
  const Tensor on = F32({1}, {}), off = F32({0}, {});
  CheckInvalid(Run("OneHot", attrs, {I64({0}), Tensor::Scalar(int32_t{-1}), on, off}).status(),
               "depth must be non-negative, got -1");
  CheckInvalid(Run("OneHot", {{"T", DType::kFloat32}, {"axis", int64_t{2}}},
                   {I64({0}), Tensor::Scalar(int32_t{2}), on, off}).status(),
               "axis 2 is out of range");
  CheckInvalid(Run("OneHot", {{"T", DType::kFloat32}, {"axis", int64_t{-2}}},
                   {I64({0}), Tensor::Scalar(int32_t{2}), on, off}).status(),
               "axis must be -1 or non-negative");
  CheckInvalid(Run("OneHot", attrs, {I64({0}), I32({2}), on, off}).status(),
               "depth must be a scalar");
  CheckInvalid(Run("OneHot", attrs, {I64({0}), Tensor::Scalar(int32_t{2}), F32({1, 2}, {2}), off})
                   .status(), "on_value must be a scalar");
}

TEST_CASE("OneHot with a huge depth fails with RESOURCE_EXHAUSTED before allocating") {
  // Two indices at depth 2e9 ask for 16 GB of float32.
  auto out = Run("OneHot", {{"T", DType::kFloat32}},
                 {I64({0, 1}), Tensor::Scalar(int32_t{2000000000}), F32({1}, {}), F32({0}, {})});
  INFO(out.status().ToString());
  REQUIRE(!out.ok());
  CHECK(out.status().code() == Code::kResourceExhausted);
  CHECK(out.status().message() ==
        "output 0 of 'test_OneHot': float32[2, 2000000000] takes 14.9 GiB, more than the 4 GiB "
        "allowed for one tensor (--max-tensor-bytes)");
}

// Fill of `n` float32 with the limits and budget of `env`.
StatusOr<std::vector<Tensor>> FillUnder(KernelEnv& env, int32_t n) {
  testing::RunOpOptions options;
  options.env = &env;
  return testing::RunOp(Ops(), "Fill", {{"T", DType::kFloat32}}, {I32({n}), F32({1}, {})},
                        options);
}

TEST_CASE("outputs are charged to the task's memory budget until they are freed") {
  ResourceMgr resources;
  KernelEnv env;
  env.resources = &resources;
  const uint64_t budget = 4 << 20;  // room for 1 Mi floats
  env.memory = std::make_shared<MemoryBudget>(budget);
  {
    auto half = FillUnder(env, 1 << 19);  // budget / 2
    INFO(half.status().ToString());
    REQUIRE(half.ok());
    CHECK(env.memory->used() == budget / 2);
    // A second half still fits; a third does not while both are alive.
    auto second = FillUnder(env, 1 << 19);
    REQUIRE(second.ok());
    auto third = FillUnder(env, 1);
    CHECK(third.status().code() == Code::kResourceExhausted);
    CHECK(third.status().message().find("output 0 of 'test_Fill': float32[1]: 4 bytes more would "
                                        "pass the task's memory budget: 4 MiB of 4 MiB in use") !=
          std::string::npos);
  }
  CHECK(env.memory->used() == 0);
  auto twice = FillUnder(env, 1 << 21);  // budget * 2
  CHECK(twice.status().code() == Code::kResourceExhausted);
  CHECK(twice.status().message().find("8 MiB more would pass") != std::string::npos);
  CHECK(env.memory->used() == 0);
  // The per-tensor limit applies before the budget.
  env.limits.max_tensor_bytes = 1000;
  auto over = FillUnder(env, 251);
  CHECK(over.status().code() == Code::kResourceExhausted);
  CHECK(over.status().message().find("float32[251] takes 1004 bytes, more than the 1000 bytes "
                                     "allowed for one tensor") != std::string::npos);
}

TEST_CASE("OneHot's shape function") {
  const PartialShape scalar(std::vector<int64_t>{});
  const AttrMap attrs{{"T", DType::kFloat32}};
  CHECK(InferOne("OneHot", attrs, {PartialShape({-1, 4}), scalar, scalar, scalar},
                 {{1, Tensor::Scalar(int32_t{10})}}) == PartialShape({-1, 4, 10}));
  CHECK(InferOne("OneHot", {{"T", DType::kFloat32}, {"axis", int64_t{0}}},
                 {PartialShape({5}), scalar, scalar, scalar}) == PartialShape({-1, 5}));
  CHECK(InferOne("OneHot", attrs, {Unknown(), scalar, scalar, scalar}) == Unknown());
  CheckInvalid(InferShapes("OneHot", attrs, {PartialShape({5}), scalar, scalar, scalar},
                           {{1, Tensor::Scalar(int32_t{-2})}}).status(),
               "depth must be non-negative");
  CheckInvalid(InferShapes("OneHot", {{"T", DType::kFloat32}, {"axis", int64_t{3}}},
                           {PartialShape({5}), scalar, scalar, scalar}).status(), "out of range");
}

}  // namespace
}  // namespace tfd::array_test
