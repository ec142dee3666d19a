#include "tests/api/api_test_util.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "common/gradients.h"
#include "kernels/register_all.h"

namespace tfd::testing {

const OpRegistry& AllOps() {
  static OpRegistry registry;
  static const Status status = kernels::RegisterAll(registry);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return registry;
}

ApiEnv::ApiEnv() { env_.resources = &resources_; }

std::unique_ptr<LocalSession> ApiEnv::Session(const Scope& root) {
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  auto session = EmptySession();
  const Status s = session->Create(root.ToGraphDef());
  INFO(s.ToString());
  REQUIRE(s.ok());
  return session;
}

std::unique_ptr<LocalSession> ApiEnv::EmptySession() {
  return std::make_unique<LocalSession>(AllOps(), env_, pool_);
}

StatusOr<std::vector<Tensor>> ApiEnv::Run(const Scope& root, const LocalSession::Feeds& feeds,
                                          const std::vector<std::string>& fetches,
                                          const std::vector<std::string>& targets) {
  auto session = Session(root);
  TFD_ASSIGN_OR_RETURN(auto out, session->Run(feeds, fetches, targets));
  return out.fetches;
}

Tensor RandomTensor(const TensorShape& shape, uint32_t seed, double lo, double hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(shape.num_elements());
  for (double& x : v) x = dist(gen);
  return Tensor::FromVector<double>(v, shape);
}

namespace {

PartialShape Declared(const TensorShape& s, ShapeMode mode) {
  switch (mode) {
    case ShapeMode::kKnown: return s;
    case ShapeMode::kUnknownDims: return PartialShape::UnknownOfRank(s.rank());
    case ShapeMode::kUnknownRank: break;
  }
  return PartialShape::Unknown();
}

const char* ModeName(ShapeMode mode) {
  switch (mode) {
    case ShapeMode::kKnown: return "known shapes";
    case ShapeMode::kUnknownDims: return "unknown dims";
    case ShapeMode::kUnknownRank: return "unknown rank";
  }
  return "?";
}

double LossAt(LocalSession& session, const LocalSession::Feeds& feeds) {
  auto out = session.Run(feeds, {"loss"}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return out->fetches[0].scalar<double>();
}

}  // namespace

void CheckGradients(const std::string& what, const GradTestFn& f, const std::vector<Tensor>& xs,
                    ShapeMode mode, int inputs_checked) {
  INFO(what << " with " << ModeName(mode));
  ApiEnv env;
  const Scope root = env.Root();
  std::vector<Output> inputs;
  LocalSession::Feeds feeds;
  for (size_t i = 0; i < xs.size(); ++i) {
    const std::string name = "x" + std::to_string(i);
    inputs.push_back(ops::Placeholder(root.WithOpName(name), xs[i].dtype(),
                                      Declared(xs[i].shape(), mode)));
    feeds.emplace_back(name, xs[i]);
  }
  const Output y = f(root.WithName("f"), inputs);
  const Output w = ops::Placeholder(root.WithOpName("w"), DType::kFloat64);
  ops::Sum(root.WithOpName("loss"), ops::Reshape(root, ops::Mul(root, y, w), {-1}), 0);
  const size_t n = inputs_checked < 0 ? xs.size() : static_cast<size_t>(inputs_checked);
  const std::vector<Output> checked(inputs.begin(), inputs.begin() + n);
  auto grads = AddGradients(root, {root.OutputOf("loss", 0)}, checked);
  INFO(grads.status().ToString());
  REQUIRE(grads.ok());
  std::vector<std::string> fetches{"loss"};
  for (const Output& g : *grads) {
    REQUIRE(g.valid());
    fetches.push_back(g.name());
  }
  auto session = env.Session(root);

  // The weights follow y's run-time shape, which the graph may not know.
  auto y_value = session->Run(feeds, {y.name()}, {});
  INFO(y_value.status().ToString());
  REQUIRE(y_value.ok());
  feeds.emplace_back("w", RandomTensor(y_value->fetches[0].shape(), 7, 0.5, 1.5));
  auto base = session->Run(feeds, fetches, {});
  INFO(base.status().ToString());
  REQUIRE(base.ok());

  const double h = 1e-6;
  for (size_t i = 0; i < n; ++i) {
    const Tensor& analytic = base->fetches[1 + i];
    REQUIRE(analytic.shape() == xs[i].shape());
    for (int64_t k = 0; k < xs[i].num_elements(); ++k) {
      double at[2];
      for (int side = 0; side < 2; ++side) {
        auto moved = xs[i].DeepCopy();
        REQUIRE(moved.ok());
        moved->data<double>()[k] += side == 0 ? h : -h;
        LocalSession::Feeds f2 = feeds;
        f2[i].second = *moved;
        at[side] = LossAt(*session, f2);
      }
      const double numeric = (at[0] - at[1]) / (2 * h);
      const double got = analytic.data<double>()[k];
      INFO("d loss / d x" << i << "[" << k << "]: analytic " << got << ", numeric " << numeric);
      CHECK(std::abs(got - numeric) <= 1e-6 + 1e-6 * std::abs(numeric));
    }
  }
}

void CheckGradientsAllModes(const std::string& what, const GradTestFn& f,
                            const std::vector<Tensor>& xs, std::vector<ShapeMode> modes) {
  for (ShapeMode mode : modes) CheckGradients(what, f, xs, mode);
}

}  // namespace tfd::testing
