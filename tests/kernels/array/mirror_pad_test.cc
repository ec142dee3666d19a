// MirrorPad and MirrorPadGrad against a reference written here from the
// definition (numpy's pad modes 'reflect' and 'symmetric' are TF's REFLECT
// and SYMMETRIC): every padding up to each mode's limit on small shapes,
// strings, an empty input, the limits refused by name; the gradient sums
// each padded element back onto the one it copied.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/kernels/array/array_test_util.h"

namespace tfd {
namespace {

using array_test::CheckInvalid;
using array_test::CheckTensor;
using array_test::I32;
using array_test::I64;
using array_test::Iota;
using array_test::RunOne;

// The attrs of a MirrorPad or MirrorPadGrad of `t` with int32 paddings
// (int64 with `wide`).
AttrMap Attrs(const std::string& mode, DType t = DType::kFloat64, bool wide = false) {
  return {{"mode", mode}, {"T", t}, {"Tpaddings", wide ? DType::kInt64 : DType::kInt32}};
}

// The index of the input a padded index copies, from the mirror's picture:
// reflect about the edge element (REFLECT) or about the edge itself.
int64_t Mirror(int64_t o, int64_t before, int64_t n, bool symmetric) {
  int64_t i = o - before;
  while (i < 0 || i >= n)
    i = i < 0 ? (symmetric ? -1 - i : -i) : (symmetric ? 2 * n - 1 - i : 2 * n - 2 - i);
  return i;
}

// Reference padding of a row-major [rows, cols] float64 array.
std::vector<double> Padded(const std::vector<double>& x, int64_t rows, int64_t cols,
                           const int64_t pads[4], bool symmetric) {
  const int64_t out_rows = rows + pads[0] + pads[1], out_cols = cols + pads[2] + pads[3];
  std::vector<double> out;
  for (int64_t r = 0; r < out_rows; ++r) {
    for (int64_t c = 0; c < out_cols; ++c) {
      out.push_back(
          x[Mirror(r, pads[0], rows, symmetric) * cols + Mirror(c, pads[2], cols, symmetric)]);
    }
  }
  return out;
}

TEST_CASE("MirrorPad pads by every amount each mode allows, as the mirror's definition says") {
  for (const bool symmetric : {false, true}) {
    const std::string mode = symmetric ? "SYMMETRIC" : "REFLECT";
    for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{3, 4}, {1, 5}, {4, 1}, {2, 2}}) {
      const int64_t most_r = symmetric ? rows : rows - 1, most_c = symmetric ? cols : cols - 1;
      const Tensor x = Iota(TensorShape{rows, cols});
      std::vector<double> xs(rows * cols);
      for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<double>(i);
      for (int64_t a = 0; a <= most_r; ++a) {
        for (int64_t b = 0; b <= most_c; ++b) {
          const int64_t pads[4] = {a, most_r - a, most_c - b, b};
          INFO(mode << " " << rows << "x" << cols << " pads " << pads[0] << "," << pads[1] << ","
                    << pads[2] << "," << pads[3]);
          const Tensor out =
              RunOne("MirrorPad", Attrs(mode, DType::kFloat64, true),
                     {x, I64({pads[0], pads[1], pads[2], pads[3]}, TensorShape{2, 2})});
          CheckTensor(out, DType::kFloat64,
                      TensorShape{rows + pads[0] + pads[1], cols + pads[2] + pads[3]},
                      Padded(xs, rows, cols, pads, symmetric));
        }
      }
    }
  }
}

TEST_CASE("MirrorPad's two modes on one row, strings, and an empty input") {
  const Tensor row = Tensor::FromVector<float>({1, 2, 3}, TensorShape{3});
  CheckTensor(RunOne("MirrorPad", Attrs("REFLECT", DType::kFloat32), {row, I32({2, 1}, {1, 2})}),
              DType::kFloat32, TensorShape{6}, {3, 2, 1, 2, 3, 2});
  CheckTensor(RunOne("MirrorPad", Attrs("SYMMETRIC", DType::kFloat32), {row, I32({2, 3}, {1, 2})}),
              DType::kFloat32, TensorShape{8}, {2, 1, 1, 2, 3, 3, 2, 1});
  const Tensor words = Tensor::FromVector<std::string>({"a", "b"}, TensorShape{2});
  const Tensor padded =
      RunOne("MirrorPad", Attrs("SYMMETRIC", DType::kString), {words, I32({1, 2}, {1, 2})});
  REQUIRE(padded.num_elements() == 5);
  CHECK(padded.data<std::string>()[0] == "a");
  CHECK(padded.data<std::string>()[3] == "b");
  CHECK(padded.data<std::string>()[4] == "a");
  // An empty dimension takes no padding: none at all in REFLECT (its limit
  // is -1, as TF's), none but 0 in SYMMETRIC.
  const Tensor empty =
      RunOne("MirrorPad", Attrs("SYMMETRIC"), {Iota(TensorShape{0, 3}), I32({0, 0, 1, 1}, {2, 2})});
  CHECK(empty.shape() == TensorShape({0, 5}));
}

TEST_CASE("MirrorPad refuses paddings past each mode's limit and a mode it does not know") {
  const Tensor x = Iota(TensorShape{2, 3});
  CheckInvalid(
      array_test::Run("MirrorPad", Attrs("REFLECT"), {x, I32({1, 0, 0, 3}, {2, 2})}).status(),
      "paddings [0, 3] of dimension 1 (size 3) must be at most 2 each in REFLECT mode");
  CheckInvalid(
      array_test::Run("MirrorPad", Attrs("SYMMETRIC"), {x, I32({3, 0, 0, 0}, {2, 2})}).status(),
      "dimension 0 (size 2) must be at most 2 each in SYMMETRIC mode");
  CheckInvalid(array_test::Run("MirrorPad", Attrs("EDGE"), {x, I32({0, 0, 0, 0}, {2, 2})}).status(),
               "attr 'mode' must be REFLECT or SYMMETRIC, got 'EDGE'");
  CheckInvalid(
      array_test::Run("MirrorPad", Attrs("REFLECT"), {x, I32({0, 0, -1, 0}, {2, 2})}).status(),
      "must be >= 0");
  CheckInvalid(
      array_test::Run("MirrorPad", Attrs("REFLECT"), {Iota(TensorShape{0}), I32({1, 0}, {1, 2})})
          .status(),
      "must be at most -1");
}

TEST_CASE("MirrorPadGrad sums each padded element onto the element it copied") {
  for (const bool symmetric : {false, true}) {
    const std::string mode = symmetric ? "SYMMETRIC" : "REFLECT";
    const int64_t rows = 3, cols = 4;
    const int64_t pads[4] = {2, 1, symmetric ? 4 : 3, 1};
    const int64_t out_rows = rows + pads[0] + pads[1], out_cols = cols + pads[2] + pads[3];
    const Tensor dy = Iota(TensorShape{out_rows, out_cols});
    std::vector<double> want(rows * cols, 0.0);
    for (int64_t r = 0; r < out_rows; ++r) {
      for (int64_t c = 0; c < out_cols; ++c) {
        want[Mirror(r, pads[0], rows, symmetric) * cols + Mirror(c, pads[2], cols, symmetric)] +=
            static_cast<double>(r * out_cols + c);
      }
    }
    INFO(mode);
    CheckTensor(RunOne("MirrorPadGrad", Attrs(mode),
                       {dy, I32({2, 1, static_cast<int32_t>(pads[2]), 1}, {2, 2})}),
                DType::kFloat64, TensorShape{rows, cols}, want);
  }
}

}  // namespace
}  // namespace tfd
