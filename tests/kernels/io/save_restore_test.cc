// Save/Restore and SaveV2/RestoreV2 through their kernels, and the
// confinement of their paths to the task's allowed directories.
#include "common/tensor_bundle/checkpoint_file.h"
#include "kernels/register_all.h"
#include "tests/util/io_test_util.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {
namespace {

struct IoEnv {
  IoEnv() {
    REQUIRE(kernels::RegisterAll(registry).ok());
    env.resources = &resources;
    env.io_dirs = {allowed.path()};
  }
  StatusOr<std::vector<Tensor>> Run(const std::string& op, AttrMap attrs, std::vector<Tensor> in) {
    RunOpOptions options;
    options.env = &env;
    return RunOp(registry, op, std::move(attrs), std::move(in), options);
  }
  Status Save(const std::string& file, std::vector<std::string> names, std::vector<Tensor> data) {
    std::vector<DType> types;
    for (const Tensor& t : data) types.push_back(t.dtype());
    std::vector<Tensor> in{Tensor::Scalar(file), Tensor::FromVector<std::string>(names)};
    in.insert(in.end(), data.begin(), data.end());
    return Run("Save", {{"T", types}}, std::move(in)).status();
  }
  StatusOr<Tensor> Restore(const std::string& file, const std::string& name, DType dt) {
    TFD_ASSIGN_OR_RETURN(
        auto out, Run("Restore", {{"dt", dt}}, {Tensor::Scalar(file), Tensor::Scalar(name)}));
    return out[0];
  }

  TempDir allowed;
  OpRegistry registry;
  ResourceMgr resources;
  KernelEnv env;
};

TEST_CASE("Save then Restore gives back each tensor") {
  IoEnv e;
  const Tensor w = Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2});
  const Tensor step = Tensor::Scalar<int64_t>(1000);
  const Tensor vocab = Tensor::FromVector<std::string>({"the", "cat"});
  // A relative path resolves against the first allowed directory; missing
  // directories inside it are created.
  REQUIRE(e.Save("ckpt/model-1000", {"w", "global_step", "vocab"}, {w, step, vocab}).ok());
  CHECK(std::filesystem::exists(e.allowed.path() / "ckpt" / "model-1000"));
  auto w2 = e.Restore("ckpt/model-1000", "w", DType::kFloat32);
  REQUIRE(w2.ok());
  CHECK(TensorsEqual(*w2, w));
  auto step2 =
      e.Restore((e.allowed.path() / "ckpt/model-1000").string(), "global_step", DType::kInt64);
  REQUIRE(step2.ok());
  CHECK(TensorsEqual(*step2, step));
  auto vocab2 = e.Restore("ckpt/model-1000", "vocab", DType::kString);
  REQUIRE(vocab2.ok());
  CHECK(TensorsEqual(*vocab2, vocab));

  SECTION("restoring as another dtype names the tensor") {
    auto wrong = e.Restore("ckpt/model-1000", "w", DType::kFloat64);
    CHECK(wrong.status().code() == Code::kInvalidArgument);
    CHECK(Contains(wrong.status().message(), "tensor 'w'"));
    CHECK(Contains(wrong.status().message(), "float32[2, 2]"));
  }
  SECTION("a missing tensor or file is NOT_FOUND") {
    CHECK(e.Restore("ckpt/model-1000", "bias", DType::kFloat32).status().code() == Code::kNotFound);
    CHECK(e.Restore("ckpt/model-2000", "w", DType::kFloat32).status().code() == Code::kNotFound);
  }
}

TEST_CASE("SaveV2 and RestoreV2 move several tensors at once") {
  IoEnv e;
  const Tensor a = Tensor::FromVector<double>({0.5, 1.5});
  const Tensor b = Tensor::FromVector<bool>({true, false, true});
  auto saved = e.Run("SaveV2", {{"dtypes", std::vector<DType>{DType::kFloat64, DType::kBool}}},
                     {Tensor::Scalar("v2"), Tensor::FromVector<std::string>({"a", "b"}),
                      Tensor::FromVector<std::string>({"", ""}), a, b});
  REQUIRE(saved.ok());
  auto restored =
      e.Run("RestoreV2", {{"dtypes", std::vector<DType>{DType::kBool, DType::kFloat64}}},
            {Tensor::Scalar("v2"), Tensor::FromVector<std::string>({"b", "a"}),
             Tensor::FromVector<std::string>({"", ""})});
  REQUIRE(restored.ok());
  CHECK(TensorsEqual((*restored)[0], b));
  CHECK(TensorsEqual((*restored)[1], a));

  auto sliced = e.Run("SaveV2", {{"dtypes", std::vector<DType>{DType::kFloat64}}},
                      {Tensor::Scalar("v2"), Tensor::FromVector<std::string>({"a"}),
                       Tensor::FromVector<std::string>({"2 0,1"}), a});
  CHECK(sliced.status().code() == Code::kInvalidArgument);
  CHECK(Contains(sliced.status().message(), "slice"));
}

TEST_CASE("what Restore and RestoreV2 read is charged to the task's memory budget") {
  IoEnv e;
  const Tensor emb = Tensor::FromVector<float>(std::vector<float>(4096, 1.0f));  // 16 KiB
  REQUIRE(e.Save("ckpt", {"emb"}, {emb}).ok());
  auto restore_v2 = [&e] {
    return e.Run("RestoreV2", {{"dtypes", std::vector<DType>{DType::kFloat32}}},
                 {Tensor::Scalar("ckpt"), Tensor::FromVector<std::string>({"emb"}),
                  Tensor::FromVector<std::string>({""})});
  };
  SECTION("a value that fits is charged for as long as it lives") {
    e.env.memory = std::make_shared<MemoryBudget>(1 << 20);
    {
      auto v1 = e.Restore("ckpt", "emb", DType::kFloat32);
      REQUIRE(v1.ok());
      auto v2 = restore_v2();
      REQUIRE(v2.ok());
      CHECK(TensorsEqual((*v2)[0], emb));
      CHECK(e.env.memory->used() >= 2 * emb.total_bytes());
    }
    CHECK(e.env.memory->used() == 0);
  }
  SECTION("one that does not fit is RESOURCE_EXHAUSTED naming it and the flag") {
    e.env.memory = std::make_shared<MemoryBudget>(8 << 10);
    for (const Status& s :
         {e.Restore("ckpt", "emb", DType::kFloat32).status(), restore_v2().status()}) {
      CHECK(s.code() == Code::kResourceExhausted);
      CHECK(Contains(s.message(), "'emb'"));
      CHECK(Contains(s.message(), "--memory-budget"));
    }
    CHECK(e.env.memory->used() == 0);
  }
}

TEST_CASE("Save refuses mismatched names") {
  IoEnv e;
  auto out = e.Run("Save", {{"T", std::vector<DType>{DType::kFloat32, DType::kFloat32}}},
                   {Tensor::Scalar("x"), Tensor::FromVector<std::string>({"only_one"}),
                    Tensor::Scalar<float>(1), Tensor::Scalar<float>(2)});
  CHECK(out.status().code() == Code::kInvalidArgument);
  CHECK(Contains(out.status().message(), "tensor_names"));
  CHECK(e.Save("x", {"dup", "dup"}, {Tensor::Scalar<float>(1), Tensor::Scalar<float>(2)}).code() ==
        Code::kInvalidArgument);
}

TEST_CASE("paths that leave the allowed directories are refused") {
  IoEnv e;
  TempDir outside;
  const Tensor t = Tensor::Scalar<float>(1);
  SECTION("through ..") {
    const std::string up = "../" + outside.path().filename().string() + "/stolen";
    Status s = e.Save(up, {"t"}, {t});
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(Contains(s.message(), "outside the allowed directories"));
    CHECK(e.Restore(up, "t", DType::kFloat32).status().code() == Code::kInvalidArgument);
  }
  SECTION("through an absolute path") {
    Status s = e.Save((outside.path() / "stolen").string(), {"t"}, {t});
    CHECK(s.code() == Code::kInvalidArgument);
  }
  SECTION("through a symlink inside the allowed directory") {
    std::filesystem::create_directory_symlink(outside.path(), e.allowed.path() / "link");
    Status s = e.Save("link/stolen", {"t"}, {t});
    CHECK(s.code() == Code::kInvalidArgument);
    // A checkpoint outside, reached through the link, cannot be read either.
    REQUIRE(kernels::WriteCheckpoint(outside.path() / "secret", {"t"}, {t}).ok());
    CHECK(e.Restore("link/secret", "t", DType::kFloat32).status().code() == Code::kInvalidArgument);
  }
  CHECK_FALSE(std::filesystem::exists(outside.path() / "stolen"));

  SECTION("a task with no allowed directory refuses every path") {
    e.env.io_dirs.clear();
    CHECK(e.Save("x", {"t"}, {t}).code() == Code::kInvalidArgument);
  }
}

}  // namespace
}  // namespace tfd::testing
