// StridedSlice against Python's own slicing rules: each case is written as a
// Python index expression (items: a:b:c, an index, ..., newaxis), turned into
// begin/end/strides and masks the way tf.Tensor.__getitem__ does, and the
// expected result is computed item by item with Python's slice.indices
// algorithm, independently of the kernel's TensorFlow-style canonicalisation.
// StridedSliceGrad is checked against central differences of StridedSlice.
#include <optional>
#include <string>
#include <vector>

#include "tests/kernels/array/array_test_util.h"
#include "tests/util/gradient_check.h"

namespace tfd {
namespace {

using namespace array_test;  // NOLINT: test helpers

// One item of a Python index expression.
struct Item {
  enum Kind { kSlice, kIndex, kEllipsis, kNewAxis } kind = kSlice;
  std::optional<int64_t> start, stop;
  int64_t step = 1;  // kSlice; start holds the index for kIndex
};
Item S(std::optional<int64_t> a = {}, std::optional<int64_t> b = {}, int64_t c = 1) {
  return {Item::kSlice, a, b, c};
}
Item I(int64_t i) { return {Item::kIndex, i, {}, 1}; }
const Item kEll{Item::kEllipsis, {}, {}, 1};
const Item kNew{Item::kNewAxis, {}, {}, 1};

// What tf.Tensor.__getitem__ passes to StridedSlice for the items.
struct Encoded {
  std::vector<int64_t> begin, end, strides;
  AttrMap masks;
};
Encoded Encode(const std::vector<Item>& items) {
  Encoded e;
  int64_t bm = 0, em = 0, ell = 0, na = 0, sh = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    const int64_t bit = int64_t{1} << i;
    int64_t b = 0, en = 0, st = 1;
    if (it.kind == Item::kSlice) {
      if (it.start) b = *it.start; else bm |= bit;
      if (it.stop) en = *it.stop; else em |= bit;
      st = it.step;
    } else if (it.kind == Item::kIndex) {
      b = *it.start;
      en = b + 1;
      sh |= bit;
    } else if (it.kind == Item::kEllipsis) {
      ell |= bit;
    } else {
      na |= bit;
    }
    e.begin.push_back(b);
    e.end.push_back(en);
    e.strides.push_back(st);
  }
  e.masks = {{"begin_mask", bm}, {"end_mask", em}, {"ellipsis_mask", ell},
             {"new_axis_mask", na}, {"shrink_axis_mask", sh}};
  return e;
}

// Python's slice(start, stop, step).indices(n), expanded.
std::vector<int64_t> PySliceIndices(const Item& it, int64_t n) {
  const int64_t step = it.step;
  auto fix = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= n) {
      x = step < 0 ? n - 1 : n;
    }
    return x;
  };
  const int64_t start = fix(it.start, step < 0 ? n - 1 : 0);
  const int64_t stop = fix(it.stop, step < 0 ? -1 : n);
  std::vector<int64_t> out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(i);
  return out;
}

// The expected values and shape: every input dimension gets its index list
// (an index item one element, dropped from the shape), new axes add 1s.
struct Expected {
  std::vector<int64_t> dims;
  std::vector<double> values;
};
Expected Reference(const std::vector<Item>& items_in, const std::vector<int64_t>& dims,
                   const std::vector<double>& x) {
  std::vector<Item> items = items_in;
  int consumed = 0;
  bool has_ellipsis = false;
  for (const Item& it : items) {
    if (it.kind == Item::kSlice || it.kind == Item::kIndex) ++consumed;
    has_ellipsis |= it.kind == Item::kEllipsis;
  }
  if (!has_ellipsis) items.push_back(kEll);
  std::vector<std::vector<int64_t>> picks;  // per input dimension
  Expected e;
  for (const Item& it : items) {
    if (it.kind == Item::kEllipsis) {
      const int64_t whole = static_cast<int64_t>(dims.size()) - consumed;
      for (int64_t k = 0; k < whole; ++k) {
        picks.push_back(PySliceIndices(S(), dims[picks.size()]));
        e.dims.push_back(static_cast<int64_t>(picks.back().size()));
      }
    } else if (it.kind == Item::kNewAxis) {
      e.dims.push_back(1);
    } else if (it.kind == Item::kIndex) {
      const int64_t n = dims[picks.size()];
      picks.push_back({*it.start < 0 ? *it.start + n : *it.start});
    } else {
      picks.push_back(PySliceIndices(it, dims[picks.size()]));
      e.dims.push_back(static_cast<int64_t>(picks.back().size()));
    }
  }
  // Row-major over the picks.
  std::vector<size_t> idx(picks.size(), 0);
  for (const auto& p : picks) {
    if (p.empty()) return e;
  }
  while (true) {
    int64_t flat = 0;
    for (size_t d = 0; d < picks.size(); ++d) flat = flat * dims[d] + picks[d][idx[d]];
    e.values.push_back(x[flat]);
    int d = static_cast<int>(picks.size()) - 1;
    for (; d >= 0 && ++idx[d] == picks[d].size(); --d) idx[d] = 0;
    if (d < 0) return e;
  }
}

std::vector<double> Iota(int64_t n) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
  return v;
}

Tensor Slice(const Tensor& x, const Encoded& e, DType index = DType::kInt32) {
  AttrMap attrs = e.masks;
  attrs["T"] = x.dtype();
  attrs["Index"] = index;
  auto vec = [&](const std::vector<int64_t>& v) {
    if (index == DType::kInt64) return I64(v);
    return I32(std::vector<int32_t>(v.begin(), v.end()));
  };
  return RunOne("StridedSlice", attrs, {x, vec(e.begin), vec(e.end), vec(e.strides)});
}

TEST_CASE("StridedSlice follows Python's slicing for every mask and negative strides") {
  const std::vector<int64_t> dims = {4, 5, 6};
  const std::vector<double> x = Iota(120);
  const Tensor input = F64(x, TensorShape(dims));
  const std::vector<std::vector<Item>> cases = {
      {S(1, 3)},
      {S({}, {}, -1)},
      {I(-1)},
      {kEll, I(2)},
      {S(), kNew, S(1, 4, 2)},
      {S(3, 0, -2), S({}, {}, 2), S(-2)},
      {kEll, kNew},
      {I(1), kEll, S({}, {}, -3)},
      {S(-100, 100)},
      {S(5, 1)},
      {kNew, kEll, I(0), S(1, 2)},
      {S(2, -1, 1), S(4, 0, -1)},
      {S(-2), S(), S(-1, -7, -2)},
      {I(0), I(-1), I(5)},
      {S({}, -10, -1)},
      {kEll},
      {S(1, 2), kEll, kNew, S({}, {}, 4)},
      {I(2), kNew, kNew, S(10, -10, -3)},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    INFO("case " << c);
    const Encoded e = Encode(cases[c]);
    const Expected want = Reference(cases[c], dims, x);
    for (DType index : {DType::kInt32, DType::kInt64}) {
      const Tensor y = Slice(input, e, index);
      REQUIRE(y.shape() == TensorShape(want.dims));
      for (int64_t i = 0; i < y.num_elements(); ++i) CHECK(y.data<double>()[i] == want.values[i]);
    }
  }
}

TEST_CASE("StridedSlice copies strings and slices scalars with new axes") {
  const Tensor s = Str({"a", "b", "c", "d"}, TensorShape({4}));
  const Tensor y = Slice(s, Encode({S(3, {}, -2)}));
  REQUIRE(y.shape() == TensorShape({2}));
  CHECK(y.data<std::string>()[0] == "d");
  CHECK(y.data<std::string>()[1] == "b");
  const Tensor z = Slice(Tensor::Scalar<double>(2.5), Encode({kNew, kNew}));
  REQUIRE(z.shape() == TensorShape({1, 1}));
  CHECK(z.data<double>()[0] == 2.5);
}

TEST_CASE("StridedSlice refuses bad strides, indices and specs, naming the dimension") {
  const Tensor x = F64(Iota(6), TensorShape({2, 3}));
  auto expect = [&](const Encoded& e, const std::string& part) {
    AttrMap attrs = e.masks;
    attrs["T"] = DType::kFloat64;
    attrs["Index"] = DType::kInt64;
    auto out = Run("StridedSlice", attrs, {x, I64(e.begin), I64(e.end), I64(e.strides)});
    INFO(out.status().ToString());
    REQUIRE(out.status().code() == Code::kInvalidArgument);
    CHECK(out.status().message().find(part) != std::string::npos);
  };
  expect(Encode({S(0, 2, 0)}), "strides[0] must be non-zero");
  expect(Encode({I(2)}), "index 2 of dimension 0 is out of bounds");
  expect(Encode({S(), I(-4)}), "index -4 of dimension 1");
  expect(Encode({kEll, kEll}), "at most one ellipsis");
  expect(Encode({I(0), I(0), I(0)}), "past the 2 dimensions");
  Encoded e = Encode({S(0, 1)});
  e.end.push_back(2);
  expect(e, "one length");
}

TEST_CASE("StridedSlice's shape function knows constant slices") {
  const Encoded e = Encode({S({}, {}, -2), kNew, I(1)});
  AttrMap attrs = e.masks;
  attrs["T"] = DType::kFloat32;
  attrs["Index"] = DType::kInt64;
  const Tensor b = I64(e.begin), en = I64(e.end), st = I64(e.strides);
  const OpRegistration* reg = Ops().Find("StridedSlice");
  REQUIRE(reg != nullptr);
  REQUIRE(CompleteAndCheckAttrs(reg->def, attrs).ok());
  auto types_in = ArgTypes(reg->def.inputs, attrs);
  REQUIRE(types_in.ok());
  InferenceContext c(attrs, {PartialShape({5, -1, 7}), {3}, {3}, {3}}, *types_in,
                     {nullptr, &b, &en, &st}, 1);
  REQUIRE(reg->shape_fn(c).ok());
  CHECK(c.outputs()[0] == PartialShape({3, 1, 7}));
}

// x[i], x[:, ::-2, i], x[i, None], x[1:i] with i known at run time only: the
// rank, the new axes and the dimensions sliced whole are still known.
TEST_CASE("StridedSlice's shape function keeps what bounds known only at run time leave") {
  const OpRegistration* reg = Ops().Find("StridedSlice");
  REQUIRE(reg != nullptr);
  struct Case {
    std::vector<Item> spec;
    bool strides_known;
    PartialShape want;
  };
  const Case cases[] = {
      {{I(0)}, true, PartialShape({6, -1})},
      {{S({}, {}), S({}, {}, -2), I(0)}, true, PartialShape({4, 3})},
      {{I(0), kNew}, true, PartialShape({1, 6, -1})},
      {{S(1, 2)}, true, PartialShape({-1, 6, -1})},
      {{S({}, {}), S({}, {}, 2)}, false, PartialShape({-1, -1, -1})},
  };
  for (const Case& k : cases) {
    const Encoded e = Encode(k.spec);
    AttrMap attrs = e.masks;
    attrs["T"] = DType::kFloat32;
    attrs["Index"] = DType::kInt64;
    REQUIRE(CompleteAndCheckAttrs(reg->def, attrs).ok());
    auto types_in = ArgTypes(reg->def.inputs, attrs);
    REQUIRE(types_in.ok());
    const Tensor st = I64(e.strides);
    const int64_t n = static_cast<int64_t>(e.strides.size());
    InferenceContext c(attrs, {PartialShape({4, 6, -1}), {n}, {n}, {n}}, *types_in,
                       {nullptr, nullptr, nullptr, k.strides_known ? &st : nullptr}, 1);
    INFO("want " << k.want.ToString());
    REQUIRE(reg->shape_fn(c).ok());
    CHECK(c.outputs()[0] == k.want);
  }
}

TEST_CASE("StridedSliceGrad scatters dy back, matching finite differences") {
  const std::vector<int64_t> dims = {4, 5, 3};
  const Tensor x = F64(Iota(60), TensorShape(dims));
  const std::vector<std::vector<Item>> cases = {
      {S(3, 0, -2), kEll, I(1)}, {kNew, S(1, 4), S({}, {}, -2)}, {I(-1), I(2)}, {S(5, 1)}};
  for (size_t c = 0; c < cases.size(); ++c) {
    INFO("case " << c);
    const Encoded e = Encode(cases[c]);
    AttrMap attrs = e.masks;
    attrs["T"] = DType::kFloat64;
    attrs["Index"] = DType::kInt64;
    const Tensor y = Slice(x, e, DType::kInt64);
    std::vector<double> dyv(y.num_elements());
    for (size_t i = 0; i < dyv.size(); ++i) dyv[i] = 0.5 + static_cast<double>(i) * 0.25;
    const Tensor dy = F64(dyv, y.shape());
    const Tensor analytic = RunOne("StridedSliceGrad", attrs,
                                   {I64(dims), I64(e.begin), I64(e.end), I64(e.strides), dy});
    testing::TensorFunction f = [&](const std::vector<Tensor>& in) -> StatusOr<Tensor> {
      TFD_ASSIGN_OR_RETURN(auto out, Run("StridedSlice", attrs, in));
      return out[0];
    };
    const Status s = testing::CheckGradient(f, {x, I64(e.begin), I64(e.end), I64(e.strides)}, 0,
                                            dy, analytic);
    INFO(s.message());
    CHECK(s.ok());
  }
  // dy of the wrong shape is refused.
  const Encoded e = Encode({S(0, 2)});
  AttrMap attrs = e.masks;
  attrs["T"] = DType::kFloat64;
  attrs["Index"] = DType::kInt64;
  auto out = Run("StridedSliceGrad", attrs, {I64({4}), I64(e.begin), I64(e.end), I64(e.strides),
                                             F64({1, 2, 3}, TensorShape({3}))});
  CHECK(out.status().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd
