// TensorArray kernels: TF1's semantics (write once, read once with
// clear_after_read, zeros for what was never written, dynamic growth,
// gradient arrays that add up and are found again by source), every error
// naming the node and the array, and hostile sizes that must cost nothing
// until used.
#include "kernels/data_flow/tensor_array.h"

#include "tests/kernels/data_flow/queue_test_util.h"

namespace tfd::testing {
namespace {

Value Flow() { return Val(Tensor::Scalar<float>(0.0f)); }
Value I32(int32_t v) { return Val(Tensor::Scalar<int32_t>(v)); }
Value Ints(std::vector<int32_t> v) { return Val(Tensor::FromVector<int32_t>(v)); }
Tensor Floats(std::vector<float> v, TensorShape shape) {
  return Tensor::FromVector<float>(v, shape);
}
std::vector<float> FloatsOf(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

struct Array {
  QueueTestEnv& env;
  std::shared_ptr<ResourceBase> ref;

  Status Write(int32_t i, Tensor v) {
    return env.Run("TensorArrayWriteV3", {{"T", v.dtype()}}, {Ref(ref), I32(i), Val(v), Flow()})
        .status();
  }
  StatusOr<Tensor> Read(int32_t i) {
    auto out =
        env.Run("TensorArrayReadV3", {{"dtype", DType::kFloat32}}, {Ref(ref), I32(i), Flow()});
    if (!out.ok()) return out.status();
    return (*out)[0].tensor;
  }
  StatusOr<Tensor> Gather(std::vector<int32_t> indices) {
    auto out = env.Run("TensorArrayGatherV3", {{"dtype", DType::kFloat32}},
                       {Ref(ref), Ints(std::move(indices)), Flow()});
    if (!out.ok()) return out.status();
    return (*out)[0].tensor;
  }
  int32_t Size() {
    auto out = env.Run("TensorArraySizeV3", {}, {Ref(ref), Flow()});
    REQUIRE(out.ok());
    return (*out)[0].tensor.scalar<int32_t>();
  }
  Array Grad(const std::string& source) {
    auto out = env.Run("TensorArrayGradV3", {{"source", source}}, {Ref(ref), Flow()});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    return Array{env, (*out)[0].ref};
  }
};

Array Make(QueueTestEnv& env, int32_t size, AttrMap attrs = {}) {
  attrs.emplace("dtype", DType::kFloat32);
  auto out = env.Run("TensorArrayV3", std::move(attrs), {I32(size)});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE((*out)[0].is_ref());
  CHECK((*out)[1].tensor.shape() == TensorShape{});
  return Array{env, (*out)[0].ref};
}

void RequireInvalid(const Status& s, const std::string& says) {
  INFO(s.ToString());
  REQUIRE(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find(says) != std::string::npos);
}

TEST_CASE("a tensor array writes each element once and reads it once, by default") {
  QueueTestEnv env;
  Array ta = Make(env, 2);
  REQUIRE(ta.Write(0, Floats({1, 2}, {2})).ok());
  RequireInvalid(ta.Write(0, Floats({3, 4}, {2})), "written already");
  auto r = ta.Read(0);
  REQUIRE(r.ok());
  CHECK(FloatsOf(*r) == std::vector<float>{1, 2});
  RequireInvalid(ta.Read(0).status(), "cleared");
  RequireInvalid(ta.Write(0, Floats({5, 6}, {2})), "cleared");

  Array keep = Make(env, 1, {{"clear_after_read", false}});
  REQUIRE(keep.Write(0, Floats({7}, {1})).ok());
  REQUIRE(keep.Read(0).ok());
  auto again = keep.Read(0);
  REQUIRE(again.ok());
  CHECK(FloatsOf(*again) == std::vector<float>{7});
}

TEST_CASE("indices past a fixed size are refused; a dynamic array grows to them") {
  QueueTestEnv env;
  Array fixed = Make(env, 2);
  RequireInvalid(fixed.Write(2, Floats({1}, {1})), "past the array's size 2");
  RequireInvalid(fixed.Write(-1, Floats({1}, {1})), "negative");
  RequireInvalid(fixed.Read(5).status(), "past the array's size");

  Array grows = Make(env, 0, {{"dynamic_size", true}, {"element_shape", PartialShape({1})}});
  CHECK(grows.Size() == 0);
  REQUIRE(grows.Write(4, Floats({9}, {1})).ok());
  CHECK(grows.Size() == 5);
  auto all = grows.Gather({0, 1, 2, 3, 4});
  REQUIRE(all.ok());
  CHECK(all->shape() == TensorShape{5, 1});
  CHECK(FloatsOf(*all) == std::vector<float>{0, 0, 0, 0, 9});  // the rest never written
}

TEST_CASE("writes of another dtype or a shape the element shape refuses name the node") {
  QueueTestEnv env;
  Array ta = Make(env, 2, {{"element_shape", PartialShape({-1, 2})}});
  RequireInvalid(ta.Write(0, Tensor::FromVector<int32_t>({1, 2})), "int32");
  const Status s = ta.Write(0, Floats({1, 2, 3}, {1, 3}));
  RequireInvalid(s, "does not fit the element shape [?, 2]");
  CHECK(s.message().find("node '") != std::string::npos);
  REQUIRE(ta.Write(0, Floats({1, 2, 3, 4}, {2, 2})).ok());
  // An unwritten element of a partly known shape has no zeros to read as.
  RequireInvalid(ta.Read(1).status(), "never written");

  Array same = Make(env, 2, {{"identical_element_shapes", true}});
  REQUIRE(same.Write(0, Floats({1}, {1})).ok());
  RequireInvalid(same.Write(1, Floats({1, 2}, {2})), "whose elements are all [1]");
}

TEST_CASE("gather, scatter, concat and split move rows; each checks what it is given") {
  QueueTestEnv env;
  Array ta = Make(env, 3);
  auto scattered =
      env.Run("TensorArrayScatterV3", {{"T", DType::kFloat32}},
              {Ref(ta.ref), Ints({2, 0, 1}), Val(Floats({1, 2, 3, 4, 5, 6}, {3, 2})), Flow()});
  REQUIRE(scattered.ok());
  auto g = ta.Gather({0, 1, 2});
  REQUIRE(g.ok());
  CHECK(FloatsOf(*g) == std::vector<float>{3, 4, 5, 6, 1, 2});

  RequireInvalid(env.Run("TensorArrayScatterV3", {{"T", DType::kFloat32}},
                         {Ref(Make(env, 3).ref), Ints({0, 1}), Val(Floats({1, 2, 3}, {3})), Flow()})
                     .status(),
                 "first dimension must match");

  Array pieces = Make(env, 3, {{"clear_after_read", false}});
  const Tensor lengths = Tensor::FromVector<int64_t>({2, 0, 3});
  auto split = env.Run("TensorArraySplitV3", {{"T", DType::kFloat32}},
                       {Ref(pieces.ref), Val(Floats({1, 2, 3, 4, 5}, {5})), Val(lengths), Flow()});
  INFO(split.status().ToString());
  REQUIRE(split.ok());
  auto joined =
      env.Run("TensorArrayConcatV3", {{"dtype", DType::kFloat32}}, {Ref(pieces.ref), Flow()});
  REQUIRE(joined.ok());
  CHECK(FloatsOf((*joined)[0].tensor) == std::vector<float>{1, 2, 3, 4, 5});
  const Tensor& got = (*joined)[1].tensor;
  CHECK(std::vector<int64_t>(got.data<int64_t>(), got.data<int64_t>() + 3) ==
        std::vector<int64_t>{2, 0, 3});
  RequireInvalid(pieces.Gather({0, 2}).status(), "share a shape");

  RequireInvalid(env.Run("TensorArraySplitV3", {{"T", DType::kFloat32}},
                         {Ref(Make(env, 2).ref), Val(Floats({1, 2, 3}, {3})),
                          Val(Tensor::FromVector<int64_t>({1, 1})), Flow()})
                     .status(),
                 "must sum to its first dimension");
  RequireInvalid(env.Run("TensorArraySplitV3", {{"T", DType::kFloat32}},
                         {Ref(Make(env, 2).ref), Val(Floats({1, 2, 3}, {3})),
                          Val(Tensor::FromVector<int64_t>({3})), Flow()})
                     .status(),
                 "(not dynamic_size)");
}

TEST_CASE("a gather that cannot read every index reads none of them") {
  QueueTestEnv env;
  Array ta = Make(env, 3);
  REQUIRE(ta.Write(0, Floats({1}, {1})).ok());
  RequireInvalid(ta.Gather({0, 2}).status(), "never written");
  auto first = ta.Read(0);  // not cleared by the failed gather
  REQUIRE(first.ok());
  CHECK(FloatsOf(*first) == std::vector<float>{1});
  // With no indices, the element shape must say what [0, ...] is.
  RequireInvalid(Make(env, 0).Gather({}).status(), "not known");
  auto none = Make(env, 0, {{"element_shape", PartialShape({2})}}).Gather({});
  REQUIRE(none.ok());
  CHECK(none->shape() == TensorShape{0, 2});
}

TEST_CASE("the gradient array is one per source, adds its writes up and reads zeros elsewhere") {
  QueueTestEnv env;
  Array ta = Make(env, 3);
  REQUIRE(ta.Write(0, Floats({1, 2}, {2})).ok());
  Array g = ta.Grad("gradients");
  CHECK(g.ref == ta.Grad("gradients").ref);
  CHECK(g.ref != ta.Grad("gradients_1").ref);
  REQUIRE(g.Write(1, Floats({1, 1}, {2})).ok());
  REQUIRE(g.Write(1, Floats({0.5, -3}, {2})).ok());
  // The forward array's writes gave the gradient its element shape.
  RequireInvalid(g.Write(1, Floats({1, 1, 1}, {3})), "does not fit the element shape [2]");
  Array unshaped = Make(env, 1).Grad("gradients");
  REQUIRE(unshaped.Write(0, Floats({1, 1}, {2})).ok());
  RequireInvalid(unshaped.Write(0, Floats({1, 1, 1}, {3})), "already there");
  auto all = g.Gather({0, 1, 2});
  INFO(all.status().ToString());
  REQUIRE(all.ok());
  CHECK(FloatsOf(*all) == std::vector<float>{0, 0, 1.5, -2, 0, 0});

  auto ints = env.Run("TensorArrayV3", {{"dtype", DType::kInt32}}, {I32(1)});
  REQUIRE(ints.ok());
  RequireInvalid(env.Run("TensorArrayGradV3", {{"source", std::string("gradients")}},
                         {Ref((*ints)[0].ref), Flow()})
                     .status(),
                 "has no gradient");
}

TEST_CASE("a closed array refuses every use; hostile sizes cost nothing until used") {
  QueueTestEnv env;
  Array ta = Make(env, 2);
  REQUIRE(ta.Write(0, Floats({1}, {1})).ok());
  REQUIRE(env.Run("TensorArrayCloseV3", {}, {Ref(ta.ref)}).ok());
  RequireInvalid(ta.Read(0).status(), "closed");
  RequireInvalid(ta.Write(1, Floats({1}, {1})), "closed");

  RequireInvalid(env.Run("TensorArrayV3", {{"dtype", DType::kFloat32}}, {I32(-1)}).status(),
                 "non-negative");
  // The largest size an int32 says: made, written at its end, read back.
  Array huge = Make(env, 2147483647, {{"clear_after_read", false}});
  REQUIRE(huge.Write(2147483646, Floats({4}, {1})).ok());
  auto last = huge.Read(2147483646);
  REQUIRE(last.ok());
  CHECK(FloatsOf(*last) == std::vector<float>{4});
  auto grows = Make(env, 0, {{"dynamic_size", true}});
  REQUIRE(grows.Write(2147483646, Floats({4}, {1})).ok());
  CHECK(grows.Size() == 2147483647);
}

}  // namespace
}  // namespace tfd::testing
