// SPDX-License-Identifier: Apache-2.0
#include "sampling/flow_solvers.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace ws::sampling {
namespace {

// log signal-to-noise of σ: ln(1 − σ) − ln σ; −∞ at σ = 1, +∞ at σ = 0 (IEEE).
double lambda_of(double sigma) { return std::log(1.0 - sigma) - std::log(sigma); }

class SolverBase : public FlowSolver {
 protected:
  explicit SolverBase(std::vector<float> sigmas) : sig_(std::move(sigmas)) {
    if (sig_.size() < 2) throw Error("a sampling schedule needs at least one step");
    for (float s : sig_) lam_.push_back(lambda_of(s));
  }
  double sigma(int64_t i) const { return sig_.at(static_cast<size_t>(i)); }
  double alpha(int64_t i) const { return 1.0 - sigma(i); }
  double lambda(int64_t i) const { return lam_.at(static_cast<size_t>(i)); }
  int64_t steps() const { return static_cast<int64_t>(sig_.size()) - 1; }
  std::vector<float> sig_;
  std::vector<double> lam_;
};

// UniPC, docs/design/sampling.md §4: predictor orders 1, 2, …, 2, 1; corrector from step 1 on, of
// the previous step's predictor order, rebuilding x_i from the previous corrected sample.
class UniPc final : public SolverBase {
 public:
  explicit UniPc(std::vector<float> sigmas) : SolverBase(std::move(sigmas)) {}

  torch::Tensor step(int64_t i, const torch::Tensor& v, const torch::Tensor& x_in) override {
    const int64_t n = steps();
    torch::Tensor m = x_in - sigma(i) * v;  // data prediction x0̂
    torch::Tensor x = x_in;
    if (i >= 1) {
      const double h = lambda(i) - lambda(i - 1), phi = std::expm1(-h), a = alpha(i);
      const torch::Tensor& m1 = ms_.back();
      torch::Tensor base = (sigma(i) / sigma(i - 1)) * xc_prev_ - (a * phi) * m1;
      torch::Tensor dt = m - m1;
      if (p_prev_ == 1) {
        x = base - (a * phi * 0.5) * dt;
      } else {
        const double r = (lambda(i - 2) - lambda(i - 1)) / h;
        torch::Tensor d = (ms_.front() - m1) / r;
        const double b1 = (phi / (-h) - 1.0) / phi;
        const double b2 = 2.0 * ((phi / (-h) - 1.0) / (-h) - 0.5) / phi;
        const double rho0 = (b1 - b2) / (1.0 - r), rho1 = b1 - rho0;
        x = base - (a * phi) * (rho0 * d + rho1 * dt);
      }
    }
    const int64_t p = std::min<int64_t>({2, n - i, i + 1});
    xc_prev_ = x;
    p_prev_ = p;
    ms_.push_back(m);
    if (ms_.size() > 2) ms_.pop_front();
    // The last step lands on σ = 0: the result is the data prediction itself.
    if (sigma(i + 1) == 0.0) return m;
    const double h = lambda(i + 1) - lambda(i), phi = std::expm1(-h), a = alpha(i + 1);
    torch::Tensor next = (sigma(i + 1) / sigma(i)) * x - (a * phi) * m;
    if (p == 2) {
      const double r = (lambda(i - 1) - lambda(i)) / h;
      next = next - (a * phi * 0.5 / r) * (ms_.front() - m);
    }
    return next;
  }

 private:
  std::deque<torch::Tensor> ms_;  // the last two data predictions, oldest first
  torch::Tensor xc_prev_;
  int64_t p_prev_ = 1;
};

// DPM++ 2M, docs/design/sampling.md §5 (no corrector; first order at the first and last step).
class DpmPp final : public SolverBase {
 public:
  explicit DpmPp(std::vector<float> sigmas) : SolverBase(std::move(sigmas)) {}

  torch::Tensor step(int64_t i, const torch::Tensor& v, const torch::Tensor& x) override {
    const int64_t n = steps();
    torch::Tensor m = x - sigma(i) * v;
    torch::Tensor prev = m_prev_;
    m_prev_ = m;
    if (sigma(i + 1) == 0.0) return m;
    const double h = lambda(i + 1) - lambda(i);
    const double c = alpha(i + 1) * (std::exp(-h) - 1.0);  // σ_0 = 1: h = ∞, c = −α_1
    torch::Tensor next = (sigma(i + 1) / sigma(i)) * x - c * m;
    if (i > 0 && i < n - 1) {
      const double r0 = (lambda(i) - lambda(i - 1)) / h;
      // After σ_0 = 1, λ_0 = −∞ makes r0 infinite and the second-order term vanish.
      if (std::isfinite(r0)) next = next - (0.5 * c / r0) * (m - prev);
    }
    return next;
  }

 private:
  torch::Tensor m_prev_;
};

}  // namespace

std::unique_ptr<FlowSolver> make_solver(Solver solver, std::vector<float> sigmas) {
  if (solver == Solver::UniPC) return std::make_unique<UniPc>(std::move(sigmas));
  return std::make_unique<DpmPp>(std::move(sigmas));
}

}  // namespace ws::sampling
