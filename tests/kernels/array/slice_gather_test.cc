// Slice, Gather, GatherV2.
#include <limits>

#include "tests/kernels/array/array_test_util.h"

namespace tfd::array_test {
namespace {

// The box of Iota(dims) at begin with extent size (sizes already resolved),
// by visiting every index of the input and keeping those inside.
std::vector<double> BoxOfIota(const std::vector<int64_t>& dims, const std::vector<int64_t>& begin,
                              const std::vector<int64_t>& size) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  std::vector<double> out;
  for (int64_t pos = 0; pos < total; ++pos) {
    int64_t rest = pos;
    bool inside = true;
    for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
      const int64_t i = rest % dims[d];
      rest /= dims[d];
      inside = inside && i >= begin[d] && i < begin[d] + size[d];
    }
    if (inside) out.push_back(static_cast<double>(pos));
  }
  return out;
}

AttrMap SliceAttrs(DType index = DType::kInt32) {
  return {{"T", DType::kFloat64}, {"Index", index}};
}

TEST_CASE("Slice takes a box, size -1 running to the end") {
  const Tensor x = Iota({3, 4, 5});
  Tensor box = RunOne("Slice", SliceAttrs(), {x, I32({1, 0, 2}), I32({2, -1, 2})});
  CheckTensor(box, DType::kFloat64, {2, 4, 2}, BoxOfIota({3, 4, 5}, {1, 0, 2}, {2, 4, 2}));
  Tensor corner = RunOne("Slice", SliceAttrs(DType::kInt64), {x, I64({2, 3, 4}), I64({1, 1, 1})});
  CheckTensor(corner, DType::kFloat64, {1, 1, 1}, {59});
  Tensor middle = RunOne("Slice", SliceAttrs(), {x, I32({0, 1, 1}), I32({3, 2, 3})});
  CheckTensor(middle, DType::kFloat64, {3, 2, 3}, BoxOfIota({3, 4, 5}, {0, 1, 1}, {3, 2, 3}));
}

TEST_CASE("Slice returns a view when the box is contiguous") {
  const Tensor x = Iota({3, 4, 5});
  Tensor rows = RunOne("Slice", SliceAttrs(), {x, I32({1, 0, 0}), I32({2, -1, -1})});
  CheckTensor(rows, DType::kFloat64, {2, 4, 5}, BoxOfIota({3, 4, 5}, {1, 0, 0}, {2, 4, 5}));
  CHECK(SharesBuffer(rows, x));
  Tensor inner = RunOne("Slice", SliceAttrs(), {x, I32({2, 1, 0}), I32({1, 2, 5})});
  CheckTensor(inner, DType::kFloat64, {1, 2, 5}, BoxOfIota({3, 4, 5}, {2, 1, 0}, {1, 2, 5}));
  CHECK(SharesBuffer(inner, x));
  Tensor all = RunOne("Slice", SliceAttrs(), {x, I32({0, 0, 0}), I32({-1, -1, -1})});
  CHECK(SharesBuffer(all, x));
  CHECK(all.shape() == x.shape());
}

TEST_CASE("Slice handles rank 0 and empty boxes") {
  CheckTensor(RunOne("Slice", SliceAttrs(), {F64({3}, {}), I32({}), I32({})}), DType::kFloat64,
              {}, {3});
  CheckTensor(RunOne("Slice", SliceAttrs(), {Iota({3, 4}), I32({1, 4}), I32({2, 0})}),
              DType::kFloat64, {2, 0}, {});
  CheckTensor(RunOne("Slice", SliceAttrs(), {Iota({0, 4}), I32({0, 1}), I32({-1, 2})}),
              DType::kFloat64, {0, 2}, {});
  Tensor s = RunOne("Slice", {{"T", DType::kString}, {"Index", DType::kInt32}},
                    {Str({"a", "b", "c", "d"}, {2, 2}), I32({0, 1}), I32({2, 1})});
  REQUIRE(s.shape() == TensorShape({2, 1}));
  CHECK(s.data<std::string>()[0] == "b");
  CHECK(s.data<std::string>()[1] == "d");
}

TEST_CASE("Slice refuses boxes that leave the input") {
  const Tensor x = Iota({3, 4});
  CheckInvalid(Run("Slice", SliceAttrs(), {x, I32({1, 2}), I32({1, 3})}).status(),
               "slice out of range in dimension 1");
  CheckInvalid(Run("Slice", SliceAttrs(), {x, I32({-1, 0}), I32({1, 1})}).status(),
               "slice out of range in dimension 0");
  CheckInvalid(Run("Slice", SliceAttrs(), {x, I32({4, 0}), I32({-1, 1})}).status(),
               "slice out of range in dimension 0");
  CheckInvalid(Run("Slice", SliceAttrs(DType::kInt64),
                   {x, I64({1, 0}), I64({std::numeric_limits<int64_t>::max(), 1})}).status(),
               "slice out of range in dimension 0");
  CheckInvalid(Run("Slice", SliceAttrs(), {x, I32({0, 0}), I32({1, -2})}).status(),
               "dimension 1");
  CheckInvalid(Run("Slice", SliceAttrs(), {x, I32({0}), I32({1, 1})}).status(),
               "begin must be a vector of length 2");
}

TEST_CASE("Slice's shape function") {
  const AttrMap attrs = SliceAttrs();
  const PartialShape v2({2});
  CHECK(InferOne("Slice", attrs, {PartialShape({5, -1}), v2, v2},
                 {{1, I32({1, 0})}, {2, I32({-1, 2})}}) == PartialShape({4, 2}));
  CHECK(InferOne("Slice", attrs, {PartialShape({5, -1}), v2, v2},
                 {{1, I32({1, 0})}, {2, I32({2, -1})}}) == PartialShape({2, -1}));
  CHECK(InferOne("Slice", attrs, {PartialShape({5, 6}), v2, v2}, {{2, I32({3, -1})}}) ==
        PartialShape({3, -1}));
  CHECK(InferOne("Slice", attrs, {Unknown(), v2, Unknown()}) == PartialShape::UnknownOfRank(2));
  CHECK(InferOne("Slice", attrs, {Unknown(), Unknown(), Unknown()}) == Unknown());
  CheckInvalid(InferShapes("Slice", attrs, {PartialShape({5, 6}), v2, v2},
                           {{1, I32({4, 0})}, {2, I32({2, 1})}}).status(), "out of range");
  CheckInvalid(InferShapes("Slice", attrs, {PartialShape({5, 6, 7}), v2, v2}).status(),
               "must have length 3");
}

AttrMap GatherAttrs(DType params = DType::kFloat64, DType indices = DType::kInt32) {
  return {{"Tparams", params}, {"Tindices", indices}};
}

TEST_CASE("Gather picks rows of params") {
  const Tensor params = Iota({4, 2});
  CheckTensor(RunOne("Gather", GatherAttrs(), {params, I32({3, 0, 3})}), DType::kFloat64, {3, 2},
              {6, 7, 0, 1, 6, 7});
  CheckTensor(RunOne("Gather", GatherAttrs(DType::kFloat64, DType::kInt64),
                     {params, I64({1, 2, 0, 3}, {2, 2})}),
              DType::kFloat64, {2, 2, 2}, {2, 3, 4, 5, 0, 1, 6, 7});
  CheckTensor(RunOne("Gather", GatherAttrs(), {params, I32({2}, {})}), DType::kFloat64, {2},
              {4, 5});
  CheckTensor(RunOne("Gather", GatherAttrs(), {params, I32({}, {0})}), DType::kFloat64, {0, 2},
              {});
  CheckTensor(RunOne("Gather", GatherAttrs(), {F64({5, 6, 7}, {3}), I32({2, 2})}),
              DType::kFloat64, {2}, {7, 7});
  Tensor s = RunOne("Gather", GatherAttrs(DType::kString),
                    {Str({"x", "y", "z"}, {3}), I32({2, 0})});
  CHECK(s.data<std::string>()[0] == "z");
  CHECK(s.data<std::string>()[1] == "x");
}

TEST_CASE("Gather refuses indices out of range, naming the index") {
  const Tensor params = Iota({4, 2});
  CheckInvalid(Run("Gather", GatherAttrs(), {params, I32({0, 4})}).status(),
               "indices[1] = 4 is not in [0, 4)");
  CheckInvalid(Run("Gather", GatherAttrs(), {params, I32({0, 1, -1, 2}, {2, 2})}).status(),
               "indices[1, 0] = -1 is not in [0, 4)");
  // No row to pick from an empty params.
  CheckInvalid(Run("Gather", GatherAttrs(), {Iota({0, 2}), I32({0})}).status(), "not in [0, 0)");
  CheckInvalid(Run("Gather", GatherAttrs(), {F64({1}, {}), I32({0})}).status(),
               "params must have rank >= 1");
}

// GatherV2 by definition: out[o, i, k] = params[o, indices[i], k].
std::vector<double> GatherReference(const Tensor& params, const std::vector<int32_t>& idx,
                                    int axis) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= params.dim(d);
  for (int d = axis + 1; d < params.rank(); ++d) inner *= params.dim(d);
  std::vector<double> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (int32_t i : idx) {
      for (int64_t k = 0; k < inner; ++k) {
        out.push_back(At(params, (o * params.dim(axis) + i) * inner + k));
      }
    }
  }
  return out;
}

TEST_CASE("GatherV2 gathers along any axis") {
  const Tensor params = Iota({2, 3, 2});
  const AttrMap attrs{{"Tparams", DType::kFloat64}, {"Tindices", DType::kInt32},
                      {"Taxis", DType::kInt32}};
  CheckTensor(RunOne("GatherV2", attrs, {params, I32({2, 0}), I32({1}, {})}), DType::kFloat64,
              {2, 2, 2}, GatherReference(params, {2, 0}, 1));
  CheckTensor(RunOne("GatherV2", attrs, {params, I32({1, 1, 0}), I32({-1}, {})}),
              DType::kFloat64, {2, 3, 3}, GatherReference(params, {1, 1, 0}, 2));
  CheckTensor(RunOne("GatherV2", attrs, {params, I32({1}), I32({0}, {})}), DType::kFloat64,
              {1, 3, 2}, GatherReference(params, {1}, 0));

  CheckInvalid(Run("GatherV2", attrs, {params, I32({3}), I32({1}, {})}).status(),
               "indices[0] = 3 is not in [0, 3)");
  CheckInvalid(Run("GatherV2", attrs, {params, I32({0}), I32({3}, {})}).status(),
               "axis 3 is out of range");
  AttrMap batched = attrs;
  batched["batch_dims"] = int64_t{1};
  CheckInvalid(Run("GatherV2", batched, {params, I32({0}), I32({1}, {})}).status(), "batch_dims");
}

TEST_CASE("Gather and GatherV2 shape functions") {
  CHECK(InferOne("Gather", GatherAttrs(), {PartialShape({-1, 5}), PartialShape({2, 3})}) ==
        PartialShape({2, 3, 5}));
  CHECK(InferOne("Gather", GatherAttrs(), {PartialShape({-1, 5}), Unknown()}) == Unknown());
  CheckInvalid(InferShapes("Gather", GatherAttrs(),
                           {PartialShape(std::vector<int64_t>{}), PartialShape({2})}).status(),
               "rank >= 1");
  const AttrMap v2{{"Tparams", DType::kFloat32}, {"Tindices", DType::kInt32},
                   {"Taxis", DType::kInt32}};
  const PartialShape scalar(std::vector<int64_t>{});
  CHECK(InferOne("GatherV2", v2, {PartialShape({4, 5, 6}), PartialShape({7}), scalar},
                 {{2, I32({-2}, {})}}) == PartialShape({4, 7, 6}));
  CHECK(InferOne("GatherV2", v2, {PartialShape({4, 5, 6}), PartialShape({7, 8}), scalar}) ==
        PartialShape::UnknownOfRank(4));
  CheckInvalid(InferShapes("GatherV2", v2, {PartialShape({4}), PartialShape({7}), scalar},
                           {{2, I32({1}, {})}}).status(), "out of range");
}

}  // namespace
}  // namespace tfd::array_test
