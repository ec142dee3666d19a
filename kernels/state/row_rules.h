// The arithmetic of the optimizers that update a variable row by row:
// Adagrad, FTRL-Proximal (with FtrlV2's l2_shrinkage), Momentum, RMSProp and
// lazy Adam,
// each as TensorFlow 1's training_ops computes it. One rule updates `n`
// consecutive elements of the variable and of its slots from `n` gradient
// elements, so the dense Apply* kernels run it once over the whole tensor
// and the SparseApply* kernels once per index, in index order.
//
//   RuleArgs<float, 1> a{{lr}, /*flag=*/true};
//   float* rows[] = {var_row, accum_row};
//   AdagradRule::Apply(a, rows, grad_row, width);
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

namespace tfd::kernels::state {

// Each rule names its variables (kVarNames: var, then its slots, as TF's
// inputs are named), its scalar inputs (kScalars) and its bool attr (kFlag).

// A rule's scalar hyper-parameters (in input order) and its one bool attr.
template <typename T, int kScalars>
struct RuleArgs {
  std::array<T, kScalars> s;
  bool flag = false;
};

// accum += grad^2 (when flag: update_slots); var -= lr * grad / sqrt(accum).
struct AdagradRule {
  static constexpr int kVars = 2;
  static constexpr std::array<const char*, kVars> kVarNames = {"var", "accum"};
  static constexpr std::array<const char*, 1> kScalars = {"lr"};
  static constexpr const char* kFlag = "update_slots";
  template <typename T>
  static void Apply(const RuleArgs<T, 1>& a, T* const* r, const T* g, int64_t n) {
    const T lr = a.s[0];
    for (int64_t k = 0; k < n; ++k) {
      if (a.flag) r[1][k] += g[k] * g[k];
      r[0][k] -= lr * g[k] / std::sqrt(r[1][k]);
    }
  }
};

// accum = accum * momentum + grad; var -= lr * accum (when flag: Nesterov,
// var -= grad * lr + accum * momentum * lr). Scalars: lr, momentum.
struct MomentumRule {
  static constexpr int kVars = 2;
  static constexpr std::array<const char*, kVars> kVarNames = {"var", "accum"};
  static constexpr std::array<const char*, 2> kScalars = {"lr", "momentum"};
  static constexpr const char* kFlag = "use_nesterov";
  template <typename T>
  static void Apply(const RuleArgs<T, 2>& a, T* const* r, const T* g, int64_t n) {
    const T lr = a.s[0], momentum = a.s[1];
    for (int64_t k = 0; k < n; ++k) {
      r[1][k] = r[1][k] * momentum + g[k];
      if (a.flag) {
        r[0][k] -= g[k] * lr + r[1][k] * momentum * lr;
      } else {
        r[0][k] -= lr * r[1][k];
      }
    }
  }
};

// ms += (grad^2 - ms) * (1 - rho); mom = mom * momentum + lr * grad /
// sqrt(ms + epsilon); var -= mom. Slots: ms, mom.
struct RmsPropRule {
  static constexpr int kVars = 3;
  static constexpr std::array<const char*, kVars> kVarNames = {"var", "ms", "mom"};
  static constexpr std::array<const char*, 4> kScalars = {"lr", "rho", "momentum", "epsilon"};
  static constexpr const char* kFlag = nullptr;
  template <typename T>
  static void Apply(const RuleArgs<T, 4>& a, T* const* r, const T* g, int64_t n) {
    const T lr = a.s[0], rho = a.s[1], momentum = a.s[2], epsilon = a.s[3];
    for (int64_t k = 0; k < n; ++k) {
      r[1][k] += (g[k] * g[k] - r[1][k]) * (T(1) - rho);
      r[2][k] = r[2][k] * momentum + lr * g[k] / std::sqrt(r[1][k] + epsilon);
      r[0][k] -= r[2][k];
    }
  }
};

// Adam on the rows given (TF contrib's LazyAdamOptimizer): with
// alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power),
//   m += (grad - m) * (1 - beta1); v += (grad^2 - v) * (1 - beta2);
//   var -= alpha * m / (sqrt(v) + epsilon)
// — ApplyAdam's arithmetic, but rows not given keep their moments.
struct LazyAdamRule {
  static constexpr int kVars = 3;
  static constexpr std::array<const char*, kVars> kVarNames = {"var", "m", "v"};
  static constexpr std::array<const char*, 6> kScalars = {"beta1_power", "beta2_power", "lr",
                                                          "beta1", "beta2", "epsilon"};
  static constexpr const char* kFlag = nullptr;
  template <typename T>
  static void Apply(const RuleArgs<T, 6>& a, T* const* r, const T* g, int64_t n) {
    const T beta1_power = a.s[0], beta2_power = a.s[1], lr = a.s[2];
    const T beta1 = a.s[3], beta2 = a.s[4], epsilon = a.s[5];
    const T alpha = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    for (int64_t k = 0; k < n; ++k) {
      r[1][k] += (g[k] - r[1][k]) * (T(1) - beta1);
      r[2][k] += (g[k] * g[k] - r[2][k]) * (T(1) - beta2);
      r[0][k] -= alpha * r[1][k] / (std::sqrt(r[2][k]) + epsilon);
    }
  }
};

// FTRL-Proximal (McMahan et al. 2013) as TensorFlow writes it, p = lr_power:
//   g' = grad + 2 * l2_shrinkage * var            (FtrlV2; grad otherwise)
//   new_accum = accum + grad^2
//   linear += g' - (new_accum^-p - accum^-p) / lr * var
//   var = |linear| > l1 ? (sign(linear) * l1 - linear) / (new_accum^-p / lr + 2 * l2) : 0
//   accum = new_accum
// With flag (multiply_linear_by_lr), linear holds lr times TF's linear:
//   linear += g' * lr - (new_accum^-p - accum^-p) * var
//   var = |linear| > l1 * lr ? (sign(linear) * l1 * lr - linear) / (new_accum^-p + 2 * l2 * lr) : 0
// p = -0.5 (the usual value) takes sqrt, as TF does, rather than pow.
template <bool kShrinkage>
struct FtrlRule {
  static constexpr int kVars = 3;
  static constexpr std::array<const char*, kVars> kVarNames = {"var", "accum", "linear"};
  static constexpr int kNumScalars = kShrinkage ? 5 : 4;
  static constexpr std::array<const char*, kNumScalars> kScalars = [] {
    if constexpr (kShrinkage) {
      return std::array<const char*, 5>{"lr", "l1", "l2", "l2_shrinkage", "lr_power"};
    } else {
      return std::array<const char*, 4>{"lr", "l1", "l2", "lr_power"};
    }
  }();
  static constexpr const char* kFlag = "multiply_linear_by_lr";

  template <typename T>
  static T Power(T accum, T lr_power) {
    return lr_power == T(-0.5) ? std::sqrt(accum) : std::pow(accum, -lr_power);
  }

  template <typename T>
  static void Apply(const RuleArgs<T, kNumScalars>& a, T* const* r, const T* g, int64_t n) {
    const T lr = a.s[0], l1 = a.s[1], l2 = a.s[2];
    const T shrinkage = kShrinkage ? a.s[3] : T(0);
    const T lr_power = a.s[kNumScalars - 1];
    T *var = r[0], *accum = r[1], *linear = r[2];
    for (int64_t k = 0; k < n; ++k) {
      const T grad = kShrinkage ? g[k] + T(2) * shrinkage * var[k] : g[k];
      const T new_accum = accum[k] + g[k] * g[k];
      const T sigma = Power(new_accum, lr_power) - Power(accum[k], lr_power);
      const T l1_eff = a.flag ? l1 * lr : l1;
      if (a.flag) {
        linear[k] += grad * lr - sigma * var[k];
      } else {
        linear[k] += grad - sigma / lr * var[k];
      }
      const T quadratic = a.flag ? Power(new_accum, lr_power) + T(2) * l2 * lr
                                 : Power(new_accum, lr_power) / lr + T(2) * l2;
      const T sign = T((linear[k] > T(0)) - (linear[k] < T(0)));
      var[k] = std::abs(linear[k]) > l1_eff ? (sign * l1_eff - linear[k]) / quadratic : T(0);
      accum[k] = new_accum;
    }
  }
};

}  // namespace tfd::kernels::state
