// Variables: creation and sharing by name, Assign and its shape checks,
// AssignAdd/AssignSub, initialization reports, and copy-on-write snapshots.
#include <algorithm>
#include <atomic>
#include <optional>
#include <span>
#include <thread>

#include "common/shape_inference.h"
#include "tests/kernels/state/state_test_util.h"

namespace tfd::testing {
namespace {

using kernels::Variable;

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

TEST_CASE("a variable is uninitialized until assigned, then reads its value") {
  StateTestEnv e;
  auto w = e.NewVariable("weights", DType::kFloat32, PartialShape({2, 2}));
  CHECK(w->name() == "weights");
  CHECK(w->DebugString() == "float32[2, 2] uninitialized");

  auto read = w->Read();
  CHECK(read.status().code() == Code::kFailedPrecondition);
  CHECK(read.status().message() == "variable 'weights' is uninitialized");

  auto init = e.Run("IsVariableInitialized", {{"dtype", DType::kFloat32}}, {StateTestEnv::Ref(w)});
  REQUIRE(init.ok());
  CHECK((*init)[0].tensor.scalar<bool>() == false);

  auto out = e.Run(
      "Assign", {{"T", DType::kFloat32}},
      {StateTestEnv::Ref(w), StateTestEnv::Val(Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}))});
  REQUIRE(out.ok());
  CHECK((*out)[0].ref == w);  // output_ref is the variable itself
  auto value = w->Read();
  REQUIRE(value.ok());
  CHECK(value->shape() == TensorShape({2, 2}));
  CHECK(Floats(*value) == std::vector<float>{1, 2, 3, 4});
  CHECK(w->DebugString() == "float32[2, 2] initialized");

  init = e.Run("IsVariableInitialized", {{"dtype", DType::kFloat32}}, {StateTestEnv::Ref(w)});
  REQUIRE(init.ok());
  CHECK((*init)[0].tensor.scalar<bool>() == true);
}

TEST_CASE("reading an uninitialized variable in a container names both") {
  StateTestEnv e;
  auto out = e.Run(
      "VariableV2",
      {{"shape", PartialShape({})}, {"dtype", DType::kInt64}, {"container", std::string("ps")}},
      {});
  REQUIRE(out.ok());
  // No shared_name: the resource is named after the node.
  Status s = (*out)[0].ref->Read().status();
  CHECK(s.code() == Code::kFailedPrecondition);
  CHECK(s.message() == "variable 'ps/test_VariableV2' is uninitialized");
  CHECK(e.resources().Lookup<Variable>("ps", "test_VariableV2").ok());
}

TEST_CASE("two VariableV2 kernels naming the same variable share it") {
  StateTestEnv e;
  auto a = e.NewVariable("shared", DType::kFloat32, PartialShape({3}));
  auto b = e.NewVariable("shared", DType::kFloat32, PartialShape({3}));
  CHECK(a == b);
  e.Assign(a, Tensor::FromVector<float>({7, 8, 9}));
  auto value = b->Read();
  REQUIRE(value.ok());
  CHECK(Floats(*value) == std::vector<float>{7, 8, 9});
  // The daemon lists variables through the ResourceMgr.
  auto listed = e.resources().List();
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].first.name == "shared");
  CHECK(listed[0].second->DebugString() == "float32[3] initialized");

  SECTION("another dtype or shape under the same name is refused, naming it") {
    auto wrong = e.Run("VariableV2",
                       {{"shape", PartialShape({3})},
                        {"dtype", DType::kFloat64},
                        {"shared_name", std::string("shared")}},
                       {});
    CHECK(wrong.status().code() == Code::kInvalidArgument);
    CHECK(Contains(wrong.status().message(), "'shared'"));
    CHECK(Contains(wrong.status().message(), "float64"));
    wrong = e.Run("VariableV2",
                  {{"shape", PartialShape({4})},
                   {"dtype", DType::kFloat32},
                   {"shared_name", std::string("shared")}},
                  {});
    CHECK(wrong.status().code() == Code::kInvalidArgument);
    CHECK(Contains(wrong.status().message(), "[4]"));
  }
}

TEST_CASE("Assign validates the shape unless told not to") {
  StateTestEnv e;
  auto v = e.NewVariable("v", DType::kFloat32, PartialShape({2}));
  auto bad = e.Run("Assign", {{"T", DType::kFloat32}},
                   {StateTestEnv::Ref(v), StateTestEnv::Val(Tensor::FromVector<float>({1, 2, 3}))});
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK(Contains(bad.status().message(), "'v'"));
  CHECK(Contains(bad.status().message(), "float32[3]"));
  CHECK_FALSE(v->initialized());

  auto ok = e.Run("Assign", {{"T", DType::kFloat32}, {"validate_shape", false}},
                  {StateTestEnv::Ref(v), StateTestEnv::Val(Tensor::FromVector<float>({1, 2, 3}))});
  REQUIRE(ok.ok());
  CHECK(v->Read()->shape() == TensorShape({3}));

  SECTION("a partial declared shape accepts any fit, then keeps the first") {
    auto p = e.NewVariable("p", DType::kFloat32, PartialShape({-1, 2}));
    e.Assign(p, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
    auto changed =
        e.Run("Assign", {{"T", DType::kFloat32}},
              {StateTestEnv::Ref(p), StateTestEnv::Val(Tensor::FromVector<float>({1, 2}, {1, 2}))});
    CHECK(changed.status().code() == Code::kInvalidArgument);
    CHECK(Contains(changed.status().message(), "float32[3, 2]"));
  }
  SECTION("a value of another dtype is refused") {
    auto wrong =
        e.Run("Assign", {{"T", DType::kFloat64}},
              {StateTestEnv::Ref(v), StateTestEnv::Val(Tensor::FromVector<double>({1, 2}))});
    CHECK(wrong.status().code() == Code::kInvalidArgument);
    CHECK(Contains(wrong.status().message(), "variable 'v' is float32"));
  }
  SECTION("the shape function rejects a certain mismatch") {
    const OpRegistration* reg = e.registry().Find("Assign");
    REQUIRE(reg != nullptr);
    AttrMap attrs{{"T", DType::kFloat32}, {"validate_shape", true}, {"use_locking", true}};
    InferenceContext c(attrs, {PartialShape({2}), PartialShape({3})},
                       {DType::kFloat32, DType::kFloat32}, {nullptr, nullptr}, 1);
    CHECK(reg->shape_fn(c).code() == Code::kInvalidArgument);
    attrs["validate_shape"] = false;
    InferenceContext c2(attrs, {PartialShape({2}), PartialShape({3})},
                        {DType::kFloat32, DType::kFloat32}, {nullptr, nullptr}, 1);
    REQUIRE(reg->shape_fn(c2).ok());
    CHECK(c2.output(0) == PartialShape({3}));
  }
}

TEST_CASE("AssignAdd and AssignSub update in place of the variable") {
  StateTestEnv e;
  auto v = e.NewVariable("acc", DType::kInt32, PartialShape({3}));
  auto add =
      e.Run("AssignAdd", {{"T", DType::kInt32}},
            {StateTestEnv::Ref(v), StateTestEnv::Val(Tensor::FromVector<int32_t>({1, 2, 3}))});
  CHECK(add.status().code() == Code::kFailedPrecondition);
  CHECK(add.status().message() == "variable 'acc' is uninitialized");

  const Tensor init = Tensor::FromVector<int32_t>({10, 20, 30});
  e.Assign(v, init);
  for (bool locking : {false, true}) {
    add = e.Run("AssignAdd", {{"T", DType::kInt32}, {"use_locking", locking}},
                {StateTestEnv::Ref(v), StateTestEnv::Val(Tensor::FromVector<int32_t>({1, 2, 3}))});
    REQUIRE(add.ok());
  }
  auto sub =
      e.Run("AssignSub", {{"T", DType::kInt32}},
            {StateTestEnv::Ref(v), StateTestEnv::Val(Tensor::FromVector<int32_t>({5, 5, 5}))});
  REQUIRE(sub.ok());
  const Tensor now = *v->Read();
  CHECK(std::vector<int32_t>(now.data<int32_t>(), now.data<int32_t>() + 3) ==
        std::vector<int32_t>{7, 19, 31});
  // The assigned tensor is the caller's: the updates went to a copy.
  CHECK(std::vector<int32_t>(init.data<int32_t>(), init.data<int32_t>() + 3) ==
        std::vector<int32_t>{10, 20, 30});

  auto mismatch =
      e.Run("AssignAdd", {{"T", DType::kInt32}},
            {StateTestEnv::Ref(v), StateTestEnv::Val(Tensor::FromVector<int32_t>({1, 2}))});
  CHECK(mismatch.status().code() == Code::kInvalidArgument);
  CHECK(Contains(mismatch.status().message(), "int32[2]"));
  CHECK(Contains(mismatch.status().message(), "int32[3]"));

  SECTION("scalars and empty variables work") {
    auto s = e.NewVariable("s", DType::kFloat64, PartialShape({}));
    e.Assign(s, Tensor::Scalar<double>(1.5));
    REQUIRE(e.Run("AssignSub", {{"T", DType::kFloat64}},
                  {StateTestEnv::Ref(s), StateTestEnv::Val(Tensor::Scalar<double>(0.25))})
                .ok());
    CHECK(s->Read()->scalar<double>() == 1.25);
    auto z = e.NewVariable("z", DType::kFloat32, PartialShape({0, 4}));
    e.Assign(z, *Tensor::Allocate(DType::kFloat32, TensorShape({0, 4})));
    REQUIRE(e.Run("AssignAdd", {{"T", DType::kFloat32}},
                  {StateTestEnv::Ref(z),
                   StateTestEnv::Val(*Tensor::Allocate(DType::kFloat32, TensorShape({0, 4})))})
                .ok());
    CHECK(z->Read()->shape() == TensorShape({0, 4}));
  }
}

TEST_CASE("a snapshot taken before an update keeps its values") {
  StateTestEnv e;
  auto w = e.NewVariable("w", DType::kFloat32, PartialShape({3}));
  e.Assign(w, Tensor::FromVector<float>({1, 2, 3}));
  for (bool locking : {false, true}) {
    const Tensor before = *w->Read();
    const std::vector<float> expected_after = {Floats(before)[0] - 0.5f, Floats(before)[1] - 1.0f,
                                               Floats(before)[2] - 1.5f};
    const std::vector<float> before_values = Floats(before);
    auto out = e.Run("ApplyGradientDescent", {{"T", DType::kFloat32}, {"use_locking", locking}},
                     {StateTestEnv::Ref(w), StateTestEnv::Val(Tensor::Scalar<float>(0.5f)),
                      StateTestEnv::Val(Tensor::FromVector<float>({1, 2, 3}))});
    REQUIRE(out.ok());
    CHECK(Floats(before) == before_values);
    CHECK(Floats(*w->Read()) == expected_after);
  }
}

TEST_CASE("with no reader holding it, updates reuse the variable's buffer") {
  StateTestEnv e;
  auto w = e.NewVariable("w", DType::kFloat32, PartialShape({4}));
  e.Assign(w, Tensor::FromVector<float>({1, 1, 1, 1}));
  auto step = [&] {
    REQUIRE(
        e.Run("AssignAdd", {{"T", DType::kFloat32}},
              {StateTestEnv::Ref(w), StateTestEnv::Val(Tensor::FromVector<float>({1, 1, 1, 1}))})
            .ok());
  };
  step();  // the first update copies away from the assigned tensor (no budget: not a kernel's)
  const void* first = w->Read()->raw_data();
  step();
  step();
  CHECK(w->Read()->raw_data() == first);
  CHECK(Floats(*w->Read()) == std::vector<float>{4, 4, 4, 4});
}

// A table assigned by its initializer (or restored from a checkpoint) is
// updated where it lies once the step that assigned it let go of it: a copy
// would double the memory of a ps holding a large shard. Borrowed memory (a
// received message's bytes) is still copied before it is written.
TEST_CASE("the first update writes in place into an assigned buffer no one else holds") {
  StateTestEnv e;
  auto w = e.NewVariable("w", DType::kFloat32, PartialShape({4}));
  const void* assigned = nullptr;
  {
    // As a kernel's output is: allocated under the task's budget.
    auto initial = Tensor::Allocate(DType::kFloat32, TensorShape({4}),
                                    std::make_shared<MemoryBudget>(1 << 20));
    REQUIRE(initial.ok());
    std::fill_n(initial->data<float>(), 4, 1.0f);
    assigned = initial->raw_data();
    e.Assign(w, *initial);
  }
  REQUIRE(e.Run("AssignAdd", {{"T", DType::kFloat32}},
                {StateTestEnv::Ref(w), StateTestEnv::Val(Tensor::FromVector<float>({1, 2, 3, 4}))})
              .ok());
  CHECK(w->Read()->raw_data() == assigned);
  CHECK(Floats(*w->Read()) == std::vector<float>{2, 3, 4, 5});

  auto message = std::make_shared<std::vector<float>>(std::vector<float>{1, 1, 1, 1});
  auto borrowed = Tensor::FromBuffer(
      DType::kFloat32, TensorShape({4}),
      Buffer::Wrap(message->data(), 4 * sizeof(float), std::shared_ptr<void>(message)));
  REQUIRE(borrowed.ok());
  e.Assign(w, *borrowed);
  borrowed = Tensor();  // the variable's is the buffer's only reference
  REQUIRE(e.Run("AssignAdd", {{"T", DType::kFloat32}},
                {StateTestEnv::Ref(w), StateTestEnv::Val(Tensor::FromVector<float>({1, 2, 3, 4}))})
              .ok());
  CHECK(Floats(*w->Read()) == std::vector<float>{2, 3, 4, 5});
  CHECK(*message == std::vector<float>{1, 1, 1, 1});
}

TEST_CASE("UpdateVariables hands fn every variable, in order, inline or not") {
  // kInlineVariables variables take no allocation; more go to the heap.
  // Both, with and without use_locking, with and without a reader holding a
  // buffer (the in-place and the copying paths). With use_locking, one
  // variable is also named twice: its mutex must be taken once.
  for (size_t n : {size_t{1}, kernels::kInlineVariables, kernels::kInlineVariables + 2}) {
    for (bool locking : {false, true}) {
      for (bool reader : {false, true}) {
        INFO("n=" << n << " use_locking=" << locking << " reader=" << reader);
        std::vector<std::shared_ptr<Variable>> owned;
        std::vector<Variable*> vars;
        for (size_t i = 0; i < n; ++i) {
          owned.push_back(std::make_shared<Variable>("", "v" + std::to_string(i), DType::kFloat32,
                                                     PartialShape({1})));
          REQUIRE(owned.back()->Assign(Tensor::FromVector<float>({float(i)}), true).ok());
          vars.push_back(owned.back().get());
        }
        if (n > 1 && locking) vars.push_back(vars.front());
        const Tensor held = *owned.back()->Read();
        std::optional<Tensor> keep;
        if (reader) keep = held;
        Status s = kernels::UpdateVariables(vars, locking, [&](std::span<Tensor> v) -> Status {
          REQUIRE(v.size() == vars.size());
          for (size_t i = 0; i < n; ++i) v[i].data<float>()[0] += 10.f;
          return OkStatus();
        });
        REQUIRE(s.ok());
        for (size_t i = 0; i < n; ++i) CHECK(Floats(*owned[i]->Read())[0] == float(i) + 10.f);
        if (reader) CHECK(Floats(*keep)[0] == float(n - 1));  // the snapshot kept its value
      }
    }
  }
}

TEST_CASE("concurrent updates and readers: snapshots are never torn") {
  // Every update adds the same amount to every element, so a consistent
  // snapshot has all elements equal; a torn one would not.
  for (bool locking : {true, false}) {
    StateTestEnv e;
    auto w = e.NewVariable("w", DType::kFloat64, PartialShape({64}));
    e.Assign(w, *Tensor::Allocate(DType::kFloat64, TensorShape({64})));
    constexpr int kWriters = 3, kSteps = 300;
    std::atomic<bool> torn{false}, failed{false};
    std::atomic<int> writers_left{kWriters};
    std::vector<std::thread> threads;
    for (int t = 0; t < kWriters; ++t) {
      threads.emplace_back([&] {
        std::vector<double> ones(64, 1.0);
        for (int i = 0; i < kSteps; ++i) {
          auto out =
              e.Run("AssignAdd", {{"T", DType::kFloat64}, {"use_locking", locking}},
                    {StateTestEnv::Ref(w), StateTestEnv::Val(Tensor::FromVector<double>(ones))});
          if (!out.ok()) failed = true;
        }
        --writers_left;
      });
    }
    threads.emplace_back([&] {
      while (writers_left > 0) {
        const Tensor snap = *w->Read();
        const double first = snap.data<double>()[0];
        for (int k = 0; k < 64; ++k) torn = torn || snap.data<double>()[k] != first;
        std::this_thread::yield();
        // Still unchanged after the writers had a chance to move on.
        for (int k = 0; k < 64; ++k) torn = torn || snap.data<double>()[k] != first;
      }
    });
    for (auto& t : threads) t.join();
    CHECK_FALSE(failed);
    CHECK_FALSE(torn);
    const Tensor final_value = *w->Read();
    if (locking) {
      // use_locking: no update is lost.
      CHECK(final_value.data<double>()[0] == kWriters * kSteps);
    } else {
      CHECK(final_value.data<double>()[0] <= kWriters * kSteps);
      CHECK(final_value.data<double>()[0] >= 1);
    }
  }
}

TEST_CASE("ReportUninitializedVariables lists the unassigned ones in input order") {
  StateTestEnv e;
  auto a = e.NewVariable("a", DType::kFloat32, PartialShape({}));
  auto b = e.NewVariable("b", DType::kInt32, PartialShape({}));
  auto c = e.NewVariable("c", DType::kFloat32, PartialShape({}));
  e.Assign(b, Tensor::Scalar<int32_t>(1));
  auto out = e.Run("ReportUninitializedVariables",
                   {{"T", std::vector<DType>{DType::kFloat32, DType::kInt32, DType::kFloat32}}},
                   {StateTestEnv::Ref(c), StateTestEnv::Ref(b), StateTestEnv::Ref(a)});
  REQUIRE(out.ok());
  const Tensor& names = (*out)[0].tensor;
  REQUIRE(names.shape() == TensorShape({2}));
  CHECK(names.data<std::string>()[0] == "c");
  CHECK(names.data<std::string>()[1] == "a");

  auto none = e.Run("ReportUninitializedVariables", {{"T", std::vector<DType>{}}}, {});
  REQUIRE(none.ok());
  CHECK((*none)[0].tensor.shape() == TensorShape({0}));
}

// A resource that is not a variable, to feed where one is expected.
class NotAVariable : public ResourceBase {
 public:
  std::string_view Kind() const override { return "widget"; }
  std::string DebugString() const override { return "widget"; }
};

TEST_CASE("a reference that is not a variable, or not a reference, is refused") {
  StateTestEnv e;
  auto widget = e.Run("AssignAdd", {{"T", DType::kFloat32}},
                      {StateTestEnv::Ref(std::make_shared<NotAVariable>()),
                       StateTestEnv::Val(Tensor::Scalar<float>(1))});
  CHECK(widget.status().code() == Code::kInvalidArgument);
  CHECK(Contains(widget.status().message(), "widget"));
  auto value = e.Run("IsVariableInitialized", {{"dtype", DType::kFloat32}},
                     {StateTestEnv::Val(Tensor::Scalar<float>(1))});
  CHECK(value.status().code() == Code::kInvalidArgument);
  CHECK(Contains(value.status().message(), "not a reference"));
}

}  // namespace
}  // namespace tfd::testing
