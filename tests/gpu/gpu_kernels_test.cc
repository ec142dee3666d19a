// Every GPU kernel against its CPU kernel: each case runs one op in a
// LocalSession twice — on the CPU, then with the op on GPU:0 (the runtime
// copying its inputs and outputs between host and device) — on the same
// random inputs, and compares the outputs within a tolerance per dtype.
// Shapes include empty tensors and broadcasts.
//
// Needs a GPU: on a machine without one (or a build without CUDA) the whole
// executable reports itself skipped, with the reason, through TAP.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <catch2/catch_reporter_tap.hpp>

#include <boost/asio/thread_pool.hpp>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>

#include "api/optimizers.h"
#include "api/variables.h"
#include "daemon/runtime/local_session.h"
#include "kernels/gpu/gpu_device.h"
#include "kernels/register_all.h"

namespace tfd {
namespace {

// An input of the op under test: random values of a dtype and shape, or a
// fixed tensor (axes, shapes, labels, hyper-parameters).
struct In {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  Tensor fixed;
  bool positive = false;  // random values in [0.5, 2] (Log, Sqrt, a divisor)
};
In R(DType t, std::vector<int64_t> s) { return In{t, std::move(s), {}, false}; }
In Pos(DType t, std::vector<int64_t> s) { return In{t, std::move(s), {}, true}; }
In Fixed(Tensor t) { return In{t.dtype(), {}, std::move(t), false}; }

struct Case {
  std::string op;
  std::vector<In> inputs;
  int outputs = 1;
  AttrMap attrs;
  // Sums of this many terms per output element: the two devices add them in
  // different orders, so float32 results may differ by about terms x 1e-6
  // (products of inputs in [-2, 2]) beyond the relative tolerance.
  int64_t terms = 1;
};

Tensor Random(const In& in, std::mt19937& rng) {
  if (in.fixed.initialized()) return in.fixed;
  Tensor t = *Tensor::Allocate(in.dtype, TensorShape(in.shape));
  std::uniform_real_distribution<double> u(in.positive ? 0.5 : -2.0, 2.0);
  std::uniform_int_distribution<int> i(-5, 5);
  for (int64_t k = 0; k < t.num_elements(); ++k) {
    switch (in.dtype) {
      case DType::kFloat32: t.data<float>()[k] = static_cast<float>(u(rng)); break;
      case DType::kFloat64: t.data<double>()[k] = u(rng); break;
      case DType::kInt32: t.data<int32_t>()[k] = i(rng); break;
      case DType::kInt64: t.data<int64_t>()[k] = i(rng); break;
      case DType::kBool: t.data<bool>()[k] = i(rng) > 0; break;
      default: FAIL("no random values of " << DTypeName(in.dtype));
    }
  }
  return t;
}

// Element-wise agreement: floats within a relative and absolute tolerance
// of their type (NaN matches NaN), everything else exactly.
void CheckClose(const Tensor& cpu, const Tensor& gpu, const std::string& what, int64_t terms = 1) {
  INFO(what << ": CPU " << cpu.DebugString(8) << " | GPU " << gpu.DebugString(8));
  REQUIRE(gpu.dtype() == cpu.dtype());
  REQUIRE(gpu.shape() == cpu.shape());
  REQUIRE_FALSE(gpu.on_device());
  int64_t bad = -1;
  auto close = [terms](double a, double b, double tol) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    if (std::isinf(a) || std::isinf(b)) return a == b;
    return std::abs(a - b) <= tol * (1 + std::abs(a)) + (terms > 1 ? tol * 0.05 * terms : 0);
  };
  if (cpu.dtype() != DType::kFloat32 && cpu.dtype() != DType::kFloat64) {
    CHECK(TensorsEqual(cpu, gpu));
    return;
  }
  for (int64_t i = 0; i < cpu.num_elements() && bad < 0; ++i) {
    const bool ok = cpu.dtype() == DType::kFloat32
                        ? close(cpu.data<float>()[i], gpu.data<float>()[i], 2e-5)
                        : close(cpu.data<double>()[i], gpu.data<double>()[i], 1e-12);
    if (!ok) bad = i;
  }
  INFO("first difference at flat index " << bad);
  CHECK(bad == -1);
}

class Runner {
 public:
  Runner() : pool_(2) {
    REQUIRE(kernels::RegisterAll(registry_).ok());
    cpu_env_.resources = &cpu_resources_;
    gpu_env_.resources = &gpu_resources_;
    gpu_env_.gpus = gpu::GpuMemories();
  }

  // The fetched outputs of `graph` run with `targets` first (when given).
  std::vector<Tensor> Run(bool on_gpu, const GraphDef& graph, const LocalSession::Feeds& feeds,
                          const std::vector<std::string>& fetches,
                          const std::vector<std::string>& init = {},
                          const std::vector<std::string>& targets = {}) {
    KernelEnv& env = on_gpu ? gpu_env_ : cpu_env_;
    LocalSession session(registry_, env, pool_);
    REQUIRE(session.Create(graph).ok());
    if (!init.empty()) {
      auto s = session.Run(feeds, {}, init);
      INFO(s.status().ToString());
      REQUIRE(s.ok());
    }
    if (!targets.empty()) {
      auto s = session.Run(feeds, {}, targets);
      INFO(s.status().ToString());
      REQUIRE(s.ok());
    }
    auto out = session.Run(feeds, fetches, {});
    INFO((on_gpu ? "GPU: " : "CPU: ") << out.status().ToString());
    REQUIRE(out.ok());
    return out->fetches;
  }

  void Check(const Case& c, std::mt19937& rng) {
    LocalSession::Feeds feeds;
    GraphDef g;
    NodeDef op{.name = "op", .op = c.op};
    std::ostringstream label;
    label << c.op << "(";
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const std::string name = "in" + std::to_string(i);
      Tensor t = Random(c.inputs[i], rng);
      label << (i ? ", " : "") << t.Describe();
      g.nodes.push_back({.name = name, .op = "Placeholder", .attrs = {{"dtype", t.dtype()}}});
      feeds.emplace_back(name, t);
      op.inputs.push_back(name);
    }
    label << ")";
    op.attrs = c.attrs;
    std::vector<std::string> fetches;
    for (int k = 0; k < c.outputs; ++k) fetches.push_back("op:" + std::to_string(k));
    g.nodes.push_back(op);
    const auto cpu = Run(false, g, feeds, fetches);
    g.nodes.back().device = "/device:GPU:0";
    const auto gpu = Run(true, g, feeds, fetches);
    for (int k = 0; k < c.outputs; ++k) {
      CheckClose(cpu[k], gpu[k], label.str() + " output " + std::to_string(k), c.terms);
    }
  }

  OpRegistry registry_;
  boost::asio::thread_pool pool_;
  ResourceMgr cpu_resources_, gpu_resources_;
  KernelEnv cpu_env_, gpu_env_;
};

const std::vector<DType> kFloats = {DType::kFloat32, DType::kFloat64};
const std::vector<DType> kNumbers = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                     DType::kInt64};

TEST_CASE("element-wise unary ops and activations agree with the CPU") {
  Runner r;
  std::mt19937 rng(1);
  for (const char* op : {"Neg", "Square", "Exp", "Abs", "Sigmoid", "Tanh", "Relu"}) {
    for (DType t : kFloats) {
      for (const auto& s : std::vector<std::vector<int64_t>>{{}, {0}, {7}, {3, 5}, {1000}}) {
        r.Check({op, {R(t, s)}}, rng);
      }
    }
  }
  for (const char* op : {"Sqrt", "Rsqrt", "Log", "Reciprocal"}) {
    for (DType t : kFloats) {
      for (const auto& s : std::vector<std::vector<int64_t>>{{}, {0}, {3, 5}}) {
        r.Check({op, {Pos(t, s)}}, rng);
      }
    }
  }
}

TEST_CASE("broadcasting binary arithmetic agrees with the CPU") {
  Runner r;
  std::mt19937 rng(2);
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{3, 4}, {3, 4}}, {{3, 4}, {}},     {{}, {3, 4}},      {{3, 1}, {1, 4}},
      {{2, 3, 4}, {4}}, {{0, 4}, {4}},    {{5, 1, 3}, {1, 4, 1}}, {{2, 1, 3, 1}, {1, 2, 1, 2}},
      {{100, 10}, {10}}};
  for (const char* op : {"Add", "Sub", "Mul", "Maximum", "Minimum", "SquaredDifference"}) {
    for (DType t : kNumbers) {
      for (const auto& [a, b] : shapes) r.Check({op, {R(t, a), R(t, b)}}, rng);
    }
  }
  for (DType t : kFloats) {
    for (const auto& [a, b] : shapes) r.Check({"Div", {R(t, a), Pos(t, b)}}, rng);
  }
}

TEST_CASE("activation gradients agree with the CPU") {
  Runner r;
  std::mt19937 rng(3);
  for (const char* op : {"SigmoidGrad", "TanhGrad", "ReluGrad"}) {
    for (DType t : kFloats) {
      for (const auto& s : std::vector<std::vector<int64_t>>{{0}, {10}, {3, 4}, {100, 100}}) {
        r.Check({op, {R(t, s), R(t, s)}}, rng);
      }
    }
  }
}

TEST_CASE("MatMul agrees with the CPU, with every transpose") {
  Runner r;
  std::mt19937 rng(4);
  for (DType t : kFloats) {
    for (auto [m, k, n] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {2, 3, 4}, {1, 1, 1}, {0, 3, 4}, {3, 0, 4}, {100, 784, 100}, {33, 65, 17}}) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          std::vector<int64_t> a = ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
          std::vector<int64_t> b = tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
          r.Check({"MatMul", {R(t, a), R(t, b)}, 1,
                   {{"transpose_a", ta}, {"transpose_b", tb}}, k}, rng);
        }
      }
    }
  }
}

TEST_CASE("BiasAdd, its gradient, softmax and the cross-entropies agree with the CPU") {
  Runner r;
  std::mt19937 rng(5);
  for (DType t : kFloats) {
    for (const auto& s : std::vector<std::vector<int64_t>>{{4, 5}, {2, 3, 5}, {0, 5}, {100, 10}}) {
      r.Check({"BiasAdd", {R(t, s), R(t, {s.back()})}}, rng);
      r.Check({"BiasAddGrad", {R(t, s)}}, rng);
      r.Check({"Softmax", {R(t, s)}}, rng);
      r.Check({"LogSoftmax", {R(t, s)}}, rng);
    }
    for (const auto& s : std::vector<std::vector<int64_t>>{{4, 10}, {1, 1}, {0, 10}, {100, 10}}) {
      r.Check({"SoftmaxCrossEntropyWithLogits", {R(t, s), Pos(t, s)}, 2}, rng);
      std::vector<int32_t> l32;
      std::vector<int64_t> l64;
      for (int64_t i = 0; i < s[0]; ++i) {
        l32.push_back(static_cast<int32_t>((i * 7) % s[1]));
        l64.push_back((i * 3) % s[1]);
      }
      r.Check({"SparseSoftmaxCrossEntropyWithLogits",
               {R(t, s), Fixed(Tensor::FromVector(l32, TensorShape({s[0]})))}, 2}, rng);
      r.Check({"SparseSoftmaxCrossEntropyWithLogits",
               {R(t, s), Fixed(Tensor::FromVector(l64, TensorShape({s[0]})))}, 2}, rng);
    }
  }
}

TEST_CASE("Sum, Mean and ArgMax agree with the CPU") {
  Runner r;
  std::mt19937 rng(6);
  const std::vector<std::vector<int32_t>> axes = {{0}, {1}, {2}, {0, 2}, {}, {-1}, {0, 1, 2}};
  for (const char* op : {"Sum", "Mean"}) {
    for (DType t : op == std::string("Sum") ? kNumbers : kFloats) {
      for (const auto& a : axes) {
        for (bool keep : {false, true}) {
          Tensor at = Tensor::FromVector(a, TensorShape({static_cast<int64_t>(a.size())}));
          r.Check({op, {R(t, {3, 4, 5}), Fixed(at)}, 1, {{"keep_dims", keep}}}, rng);
        }
      }
      r.Check({op, {R(t, {0, 3}), Fixed(Tensor::FromVector(std::vector<int32_t>{0}))}, 1,
               {{"keep_dims", false}}},
              rng);
      r.Check({op, {R(t, {100, 10}), Fixed(Tensor::FromVector(std::vector<int32_t>{0}))}, 1,
               {{"keep_dims", false}}},
              rng);
    }
  }
  for (DType t : kFloats) {
    for (auto [shape, axis] : std::vector<std::pair<std::vector<int64_t>, int32_t>>{
             {{3, 4}, 0}, {{3, 4}, 1}, {{2, 3, 4}, 1}, {{100, 10}, -1}, {{0, 4}, 1}}) {
      for (DType out : {DType::kInt32, DType::kInt64}) {
        r.Check({"ArgMax", {R(t, shape), Fixed(Tensor::Scalar<int32_t>(axis))}, 1,
                 {{"output_type", out}}},
                rng);
      }
    }
  }
}

TEST_CASE("Cast, Fill, ZerosLike, OnesLike and the shape-only ops agree with the CPU") {
  Runner r;
  std::mt19937 rng(7);
  const std::vector<DType> types = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                    DType::kInt64, DType::kBool};
  for (DType from : types) {
    for (DType to : types) {
      r.Check({"Cast", {R(from, {3, 4})}, 1, {{"DstT", to}}}, rng);
    }
  }
  r.Check({"Cast", {R(DType::kFloat32, {0})}, 1, {{"DstT", DType::kInt32}}}, rng);
  for (DType t : kNumbers) {
    r.Check({"Fill", {Fixed(Tensor::FromVector(std::vector<int32_t>{2, 3})), R(t, {})}}, rng);
    r.Check({"Fill", {Fixed(Tensor::FromVector(std::vector<int64_t>{0, 3})), R(t, {})}}, rng);
  }
  for (DType t : kNumbers) {
    r.Check({"ZerosLike", {R(t, {3, 4})}}, rng);
    r.Check({"OnesLike", {R(t, {3, 4})}}, rng);
    r.Check({"OnesLike", {R(t, {0})}}, rng);
  }
  r.Check({"Shape", {R(DType::kFloat32, {3, 4})}}, rng);
  r.Check({"Size", {R(DType::kFloat32, {3, 4})}}, rng);
  r.Check({"Rank", {R(DType::kFloat32, {3, 4})}}, rng);
  r.Check({"BroadcastGradientArgs", {Fixed(Tensor::FromVector(std::vector<int32_t>{3, 1})),
                                     Fixed(Tensor::FromVector(std::vector<int32_t>{1, 4}))}, 2},
          rng);
  r.Check({"Identity", {R(DType::kFloat32, {3, 4})}}, rng);
  r.Check({"Reshape", {R(DType::kFloat32, {3, 4}), Fixed(Tensor::FromVector(std::vector<int32_t>{4, -1}))}}, rng);
  r.Check({"ExpandDims", {R(DType::kFloat64, {3, 4}), Fixed(Tensor::Scalar<int32_t>(1))}}, rng);
  r.Check({"Squeeze", {R(DType::kFloat32, {3, 1, 4})}}, rng);
}

TEST_CASE("a Const placed on the GPU is uploaded once and reads back as on the CPU") {
  Runner r;
  GraphDef g;
  Tensor value = Tensor::FromVector(std::vector<float>{1.5f, -2, 3, 0}, TensorShape({2, 2}));
  g.nodes.push_back({.name = "c", .op = "Const", .attrs = {{"value", value}, {"dtype", DType::kFloat32}}});
  g.nodes.push_back({.name = "sq", .op = "Square", .inputs = {"c"}});
  const auto cpu = r.Run(false, g, {}, {"sq"});
  g.nodes[0].device = g.nodes[1].device = "/device:GPU:0";
  const auto gpu = r.Run(true, g, {}, {"sq"});
  CheckClose(cpu[0], gpu[0], "Square(Const)");
}

TEST_CASE("fetched tensors come back through pinned host memory, reused step after step") {
  Runner r;
  GraphDef g;
  g.nodes.push_back({.name = "x", .op = "Placeholder", .attrs = {{"dtype", DType::kFloat32}}});
  g.nodes.push_back({.name = "sq", .op = "Square", .inputs = {"x"}, .device = "/device:GPU:0"});
  LocalSession session(r.registry_, r.gpu_env_, r.pool_);
  REQUIRE(session.Create(g).ok());
  const Tensor x = Tensor::FromVector(std::vector<float>(1000, 3.0f));
  REQUIRE(session.Run({{"x", x}}, {"sq"}, {}).ok());
  const auto warm = gpu::GpuDevices()[0]->memory_stats();
  CHECK(warm.pinned_allocs >= 1);
  for (int i = 0; i < 10; ++i) {
    auto out = session.Run({{"x", x}}, {"sq"}, {});
    REQUIRE(out.ok());
    CHECK(out->fetches[0].data<float>()[999] == 9.0f);
  }
  const auto after = gpu::GpuDevices()[0]->memory_stats();
  CHECK(after.pinned_allocs == warm.pinned_allocs);
  CHECK(after.device_allocs == warm.device_allocs);
}

// Pushed tensors land in the host pool, whose blocks a GPU process
// page-locks; a copy from page-locked memory reads its source after
// CopyFromHost returns, so the source's block must not go back to the pool
// (and be written by the next tensor) before the copy has run. The stream
// is kept busy so the copy is still queued when the source is dropped.
TEST_CASE("a copy to the GPU keeps its page-locked source until it has run") {
  gpu::GpuDevice& dev = *gpu::GpuDevices()[0];
  constexpr int64_t kSide = 2048, kCount = int64_t{1} << 20;
  auto a = Tensor::AllocateOn(&dev, DType::kFloat32, TensorShape({kSide, kSide}));
  auto c = Tensor::AllocateOn(&dev, DType::kFloat32, TensorShape({kSide, kSide}));
  auto on_device = Tensor::AllocateOn(&dev, DType::kFloat32, TensorShape({kCount}));
  REQUIRE((a.ok() && c.ok() && on_device.ok()));
  for (int i = 0; i < 20; ++i) {
    REQUIRE(dev.MatMul(DType::kFloat32, false, false, kSide, kSide, kSide, a->raw_data(),
                       a->raw_data(), c->raw_data()).ok());
  }
  Tensor source = Tensor::FromVector(std::vector<float>(kCount, 1.0f));
  REQUIRE(dev.CopyFromHost(on_device->raw_data(), source).ok());
  source = Tensor();
  // The pool's next block of this size: the source's, were it not kept.
  Tensor next = *Tensor::Allocate(DType::kFloat32, TensorShape({kCount}));
  std::fill(next.data<float>(), next.data<float>() + kCount, 7.0f);
  Tensor back = *Tensor::Allocate(DType::kFloat32, TensorShape({kCount}));
  REQUIRE(dev.CopyToHost(back.raw_data(), on_device->raw_data(), back.total_bytes()).ok());
  int64_t wrong = 0;
  for (int64_t i = 0; i < kCount; ++i) wrong += back.data<float>()[i] != 1.0f;
  CHECK(wrong == 0);
}

// The optimizer updates, on variables kept on the GPU: initialised from the
// same values, updated once, read back.
TEST_CASE("ApplyGradientDescent, ApplyMomentum and ApplyAdam on GPU variables agree with the CPU") {
  Runner r;
  std::mt19937 rng(8);
  for (DType t : kFloats) {
    for (const char* rule : {"ApplyGradientDescent", "ApplyMomentum", "ApplyAdam"}) {
      for (bool nesterov : {false, true}) {
        if (rule == std::string("ApplyGradientDescent") && nesterov) continue;
        const int vars = rule == std::string("ApplyGradientDescent") ? 1
                         : rule == std::string("ApplyMomentum")      ? 2
                                                                     : 3;
        const std::vector<int64_t> shape = {30, 7};
        GraphDef g;
        LocalSession::Feeds feeds;
        std::vector<std::string> init, fetch;
        NodeDef apply{.name = "apply", .op = rule};
        // Variables outlive sessions: a name per case.
        const std::string prefix = std::string(rule) + std::string(DTypeName(t)) + (nesterov ? "n" : "") + "/";
        for (int v = 0; v < vars; ++v) {
          const std::string name = prefix + "var" + std::to_string(v);
          g.nodes.push_back({.name = name, .op = "VariableV2",
                             .attrs = {{"dtype", t}, {"shape", PartialShape(shape)}}});
          g.nodes.push_back({.name = name + "/value", .op = "Placeholder", .attrs = {{"dtype", t}}});
          g.nodes.push_back({.name = name + "/init", .op = "Assign", .inputs = {name, name + "/value"}});
          // Adam's v must not be negative: its square root is taken.
          feeds.emplace_back(name + "/value", Random(v == 2 ? Pos(t, shape) : R(t, shape), rng));
          init.push_back(name + "/init");
          g.nodes.push_back({.name = name + "/read", .op = "Identity", .inputs = {name}});
          fetch.push_back(name + "/read");
          apply.inputs.push_back(name);
        }
        auto scalar = [&](const std::string& name, double value) {
          Tensor s = *Tensor::Allocate(t, TensorShape());
          if (t == DType::kFloat32) s.scalar<float>() = static_cast<float>(value);
          else s.scalar<double>() = value;
          g.nodes.push_back({.name = name, .op = "Placeholder", .attrs = {{"dtype", t}}});
          feeds.emplace_back(name, s);
          apply.inputs.push_back(name);
        };
        if (vars == 1) {
          scalar("alpha", 0.1);
        } else if (vars == 2) {
          scalar("lr", 0.1);
        } else {
          scalar("beta1_power", 0.9);
          scalar("beta2_power", 0.999);
          scalar("lr", 0.01);
          scalar("beta1", 0.9);
          scalar("beta2", 0.999);
          scalar("epsilon", 1e-8);
        }
        g.nodes.push_back({.name = "grad", .op = "Placeholder", .attrs = {{"dtype", t}}});
        feeds.emplace_back("grad", Random(R(t, shape), rng));
        apply.inputs.push_back("grad");
        if (vars == 2) scalar("momentum", 0.9);
        if (vars > 1) apply.attrs["use_nesterov"] = nesterov;
        g.nodes.push_back(apply);
        const auto cpu = r.Run(false, g, feeds, fetch, init, {"apply"});
        for (NodeDef& n : g.nodes) {
          if (n.op != "Placeholder" && n.name.find("/read") == std::string::npos) {
            n.device = "/device:GPU:0";
          }
        }
        const auto gpu = r.Run(true, g, feeds, fetch, init, {"apply"});
        for (int v = 0; v < vars; ++v) {
          CheckClose(cpu[v], gpu[v], std::string(rule) + (nesterov ? " (Nesterov)" : "") + " " +
                                         std::string(DTypeName(t)) + " var" + std::to_string(v));
        }
      }
    }
  }
}

// The convnet ops' cases: an NHWC input, a window (filter rows and cols,
// or pooling's ksize), strides, dilations and padding.
struct WindowCase {
  std::vector<int64_t> input;
  int64_t k_rows, k_cols, stride_rows, stride_cols, dilation_rows, dilation_cols;
  const char* padding;
};

// 1x1 images, stride above the window, dilations, SAME with odd and even
// totals, VALID leaving one output, an empty batch, and Deep MNIST's shapes.
const std::vector<WindowCase> kWindowCases = {
    {{2, 7, 9, 3}, 3, 3, 1, 1, 1, 1, "SAME"},   {{2, 7, 9, 3}, 3, 2, 2, 3, 1, 1, "VALID"},
    {{2, 8, 7, 2}, 2, 2, 3, 3, 1, 1, "SAME"},   {{2, 9, 7, 2}, 3, 3, 1, 2, 2, 3, "SAME"},
    {{2, 6, 7, 2}, 4, 2, 1, 1, 1, 1, "SAME"},   {{2, 1, 1, 3}, 3, 3, 2, 2, 1, 1, "SAME"},
    {{2, 5, 4, 2}, 5, 4, 1, 1, 1, 1, "VALID"},  {{0, 5, 5, 2}, 3, 3, 1, 1, 1, 1, "SAME"},
    {{10, 28, 28, 1}, 5, 5, 1, 1, 1, 1, "SAME"}, {{10, 14, 14, 32}, 5, 5, 1, 1, 1, 1, "SAME"},
};

AttrMap WindowAttrs(const WindowCase& c, bool pool) {
  AttrMap a = {{"strides", std::vector<int64_t>{1, c.stride_rows, c.stride_cols, 1}},
               {"padding", std::string(c.padding)}};
  if (pool) {
    a["ksize"] = std::vector<int64_t>{1, c.k_rows, c.k_cols, 1};
  } else {
    a["dilations"] = std::vector<int64_t>{1, c.dilation_rows, c.dilation_cols, 1};
  }
  return a;
}

// The output's [batch, rows, cols] for `c`, by TensorFlow's rule.
std::vector<int64_t> WindowedOutput(const WindowCase& c) {
  auto out = [&](int64_t in, int64_t k, int64_t stride, int64_t dilation) {
    if (std::string(c.padding) == "SAME") return (in + stride - 1) / stride;
    return (in - (k - 1) * dilation - 1) / stride + 1;
  };
  return {c.input[0], out(c.input[1], c.k_rows, c.stride_rows, c.dilation_rows),
          out(c.input[2], c.k_cols, c.stride_cols, c.dilation_cols)};
}

Tensor SizesOf(const std::vector<int64_t>& shape) {
  std::vector<int32_t> v(shape.begin(), shape.end());
  return Tensor::FromVector(v, TensorShape({4}));
}

TEST_CASE("Conv2D, DepthwiseConv2dNative and their gradients agree with the CPU") {
  Runner r;
  std::mt19937 rng(10);
  for (DType t : kFloats) {
    for (const WindowCase& c : kWindowCases) {
      const int64_t depth = c.input[3];
      const std::vector<int64_t> o = WindowedOutput(c);
      const int64_t pixels = o[0] * o[1] * o[2], taps = c.k_rows * c.k_cols;
      // Conv2D with 4 output channels (Deep MNIST's own counts for its shapes).
      const int64_t out_depth = depth == 1 ? 32 : depth == 32 ? 64 : 4;
      const std::vector<int64_t> filter = {c.k_rows, c.k_cols, depth, out_depth};
      const std::vector<int64_t> dy = {o[0], o[1], o[2], out_depth};
      AttrMap a = WindowAttrs(c, false);
      r.Check({"Conv2D", {R(t, c.input), R(t, filter)}, 1, a, taps * depth}, rng);
      r.Check({"Conv2DBackpropInput", {Fixed(SizesOf(c.input)), R(t, filter), R(t, dy)}, 1, a,
               taps * out_depth},
              rng);
      r.Check({"Conv2DBackpropFilter", {R(t, c.input), Fixed(SizesOf(filter)), R(t, dy)}, 1, a,
               pixels},
              rng);
      for (int64_t mult : {1, 3}) {
        const std::vector<int64_t> dw_filter = {c.k_rows, c.k_cols, depth, mult};
        const std::vector<int64_t> dw_dy = {o[0], o[1], o[2], depth * mult};
        r.Check({"DepthwiseConv2dNative", {R(t, c.input), R(t, dw_filter)}, 1, a, taps}, rng);
        r.Check({"DepthwiseConv2dNativeBackpropInput",
                 {Fixed(SizesOf(c.input)), R(t, dw_filter), R(t, dw_dy)}, 1, a, taps * mult},
                rng);
        r.Check({"DepthwiseConv2dNativeBackpropFilter",
                 {R(t, c.input), Fixed(SizesOf(dw_filter)), R(t, dw_dy)}, 1, a, pixels},
                rng);
      }
    }
  }
}

TEST_CASE("MaxPool, AvgPool and their gradients agree with the CPU") {
  Runner r;
  std::mt19937 rng(11);
  std::vector<WindowCase> cases;
  for (WindowCase c : kWindowCases) {
    c.dilation_rows = c.dilation_cols = 1;  // pooling has none
    cases.push_back(c);
  }
  // Deep MNIST's poolings: 2x2, stride 2, SAME, over 32 and 64 channels.
  cases.push_back({{10, 28, 28, 32}, 2, 2, 2, 2, 1, 1, "SAME"});
  cases.push_back({{10, 14, 14, 64}, 2, 2, 2, 2, 1, 1, "SAME"});
  for (DType t : kFloats) {
    for (const WindowCase& c : cases) {
      const std::vector<int64_t> o = WindowedOutput(c);
      const std::vector<int64_t> out = {o[0], o[1], o[2], c.input[3]};
      const int64_t taps = c.k_rows * c.k_cols;
      AttrMap a = WindowAttrs(c, true);
      r.Check({"MaxPool", {R(t, c.input)}, 1, a}, rng);
      r.Check({"AvgPool", {R(t, c.input)}, 1, a, taps}, rng);
      // orig_output's values are not read (the maxima are found again).
      r.Check({"MaxPoolGrad", {R(t, c.input), R(t, out), R(t, out)}, 1, a, taps}, rng);
      r.Check({"AvgPoolGrad", {Fixed(SizesOf(c.input)), R(t, out)}, 1, a, taps}, rng);
    }
  }
}

TEST_CASE("NaN and inf go through the convnet ops as on the CPU") {
  Runner r;
  std::mt19937 rng(12);
  const WindowCase c{{1, 4, 4, 2}, 2, 2, 2, 2, 1, 1, "SAME"};
  Tensor x = Random(R(DType::kFloat32, c.input), rng);
  x.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  x.data<float>()[10] = std::numeric_limits<float>::infinity();
  x.data<float>()[17] = -std::numeric_limits<float>::infinity();
  const std::vector<int64_t> out = {1, 2, 2, 2};
  r.Check({"MaxPool", {Fixed(x)}, 1, WindowAttrs(c, true)}, rng);
  r.Check({"AvgPool", {Fixed(x)}, 1, WindowAttrs(c, true), 4}, rng);
  r.Check({"MaxPoolGrad", {Fixed(x), R(DType::kFloat32, out), R(DType::kFloat32, out)}, 1,
           WindowAttrs(c, true), 4},
          rng);
  // A 3x3 SAME filter: the infinities meet the padding's zeros.
  const WindowCase conv{{1, 4, 4, 2}, 3, 3, 1, 1, 1, 1, "SAME"};
  r.Check({"Conv2D", {Fixed(x), R(DType::kFloat32, {3, 3, 2, 2})}, 1, WindowAttrs(conv, false),
           18},
          rng);
  r.Check({"DepthwiseConv2dNative", {Fixed(x), R(DType::kFloat32, {3, 3, 2, 2})}, 1,
           WindowAttrs(conv, false), 9},
          rng);
  r.Check({"Conv2DBackpropFilter",
           {Fixed(x), Fixed(SizesOf({3, 3, 2, 2})), R(DType::kFloat32, {1, 4, 4, 2})}, 1,
           WindowAttrs(conv, false), 16},
          rng);
}

// A whole training step: a two-layer classifier (the classic MNIST model's
// shape) with its variables, gradients and updates on the GPU, and the
// global step on the CPU (AssignAdd has no GPU kernel, so its group stays
// there in every step, the initializing one included). Trained from the
// same weights on the same batches, the losses follow the CPU's.
TEST_CASE("training steps on the GPU follow the CPU's losses") {
  for (const char* optimizer : {"sgd", "adam"}) {
    std::vector<double> losses[2];
    for (bool on_gpu : {false, true}) {
      Runner r;
      Scope root = Scope::NewRootScope(r.registry_);
      Scope model = on_gpu ? root.WithDevice("/device:GPU:0") : root;
      ops::Variable step = ops::GlobalStep(model);
      Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat32);
      Output y = ops::Placeholder(root.WithOpName("y"), DType::kFloat32);
      ops::Variable w1(model.WithOpName("w1"), {784, 100}, DType::kFloat32,
                       ops::Initializer::RandomNormal(0.1, 1));
      ops::Variable b1(model.WithOpName("b1"), {100}, DType::kFloat32, ops::Initializer::Zeros());
      ops::Variable w2(model.WithOpName("w2"), {100, 10}, DType::kFloat32,
                       ops::Initializer::RandomNormal(0.1, 2));
      ops::Variable b2(model.WithOpName("b2"), {10}, DType::kFloat32, ops::Initializer::Zeros());
      Output hidden = ops::Sigmoid(model, ops::BiasAdd(model, ops::MatMul(model, x, w1), b1));
      Output logits = ops::BiasAdd(model, ops::MatMul(model, hidden, w2), b2);
      Output loss = ops::Mean(model.WithOpName("loss"),
                              ops::SoftmaxCrossEntropyWithLogits(model, logits, y).loss, 0);
      std::unique_ptr<train::Optimizer> opt;
      if (optimizer == std::string("sgd")) {
        opt = std::make_unique<train::GradientDescent>(0.5);
      } else {
        opt = std::make_unique<train::Adam>(0.01);
      }
      opt->Minimize(model.WithOpName("train"), loss, step);
      ops::GlobalVariablesInitializer(root.WithOpName("init"));
      REQUIRE(root.status().ok());

      std::mt19937 rng(9);
      LocalSession session(r.registry_, on_gpu ? r.gpu_env_ : r.cpu_env_, r.pool_,
                           {.allow_soft_placement = true});
      REQUIRE(session.Create(root.ToGraphDef()).ok());
      auto init = session.Run({}, {}, {"init"});
      INFO(init.status().ToString());
      REQUIRE(init.ok());
      for (int i = 0; i < 20; ++i) {
        Tensor images = Random(Pos(DType::kFloat32, {100, 784}), rng);
        Tensor labels = *Tensor::Allocate(DType::kFloat32, TensorShape({100, 10}));
        for (int row = 0; row < 100; ++row) labels.data<float>()[row * 10 + (row * 7 + i) % 10] = 1;
        auto out = session.Run({{"x", images}, {"y", labels}}, {"loss"}, {"train"});
        INFO(optimizer << (on_gpu ? " GPU" : " CPU") << " step " << i << ": " << out.status().ToString());
        REQUIRE(out.ok());
        losses[on_gpu].push_back(out->fetches[0].scalar<float>());
      }
      auto global = session.Run({}, {"global_step"}, {});
      REQUIRE(global.ok());
      CHECK(global->fetches[0].scalar<int64_t>() == 20);
    }
    INFO(optimizer << ": first loss " << losses[0].front() << ", last " << losses[0].back());
    CHECK(losses[0].back() < losses[0].front());
    for (size_t i = 0; i < losses[0].size(); ++i) {
      INFO(optimizer << " step " << i << ": CPU " << losses[0][i] << ", GPU " << losses[1][i]);
      CHECK(std::abs(losses[0][i] - losses[1][i]) <= 1e-3 * (1 + std::abs(losses[0][i])));
    }
  }
}

}  // namespace
}  // namespace tfd

int main(int argc, char* argv[]) {
  if (tfd::gpu::GpuDevices().empty()) {
    // TAP's own way to skip a whole file: meson reports SKIP with the reason.
    std::cout << "1..0 # SKIP no GPU here: " << tfd::gpu::GpuUnavailableReason() << std::endl;
    return 0;
  }
  for (const tfd::gpu::GpuDevice* d : tfd::gpu::GpuDevices()) {
    std::cout << "# " << d->name() << ": " << d->description() << std::endl;
  }
  return Catch::Session().run(argc, argv);
}
