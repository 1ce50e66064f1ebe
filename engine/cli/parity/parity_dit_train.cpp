// SPDX-License-Identifier: Apache-2.0
// `parity dit-train DIR`: drives train::ExpertStep (the trainer's own step) with the stored
// steps of each DIR/*/case.json of kind dit-train and judges the quantities of
// tests/data/train/README.md §B against the case's `suggested_tolerance`.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "io/safetensors.h"
#include "models/wan_dit.h"
#include "cli/parity/parity.h"
#include "cli/parity/parity_compare.h"
#include "cli/parity/parity_dit.h"
#include "train/experts/expert_step.h"

namespace ws::cli {
namespace stdfs = std::filesystem;
using nlohmann::json;

namespace {

struct Check {
  std::string group;
  bool ok;
  std::string worst;
  double err, tol;
  std::string extra;  // p99.9 / mean for tensor groups
};

// max / p99.9 / mean of |a − b| (each pair divided by its scale when given) against a
// tolerance object {max_abs, p99_9_abs, mean_abs}; `worst` names the tensor with the largest error.
Check group_check(const std::string& group, const std::vector<std::string>& names, const std::vector<torch::Tensor>& a,
                  const std::vector<torch::Tensor>& b, const std::vector<double>& scale, const json& tol) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].sizes() != b[i].sizes())
      throw Error(names[i] + ": shape " + io::shape_str(a[i].sizes().vec()) + " vs reference " +
                  io::shape_str(b[i].sizes().vec()));
  auto s = group_stats(a, b, scale);
  std::string worst = "-";
  double worst_err = -1;
  for (size_t i = 0; i < a.size(); ++i) {
    double e = (a[i].to(torch::kDouble) - b[i].to(torch::kDouble)).abs().max().item<double>();
    if (i < scale.size()) e /= scale[i];
    if (e > worst_err) worst_err = e, worst = names[i];
  }
  const double tmax = tol.at("max_abs").get<double>(), tp = tol.at("p99_9_abs").get<double>(),
               tm = tol.at("mean_abs").get<double>();
  const bool ok = !a.empty() && s.max <= tmax && s.p999 <= tp && s.mean <= tm && !std::isnan(s.max);
  return {group,
          ok,
          worst,
          s.max,
          tmax,
          " p99.9=" + fmt_num(s.p999) + " (tol " + fmt_num(tp) + ") mean=" + fmt_num(s.mean) + " (tol " + fmt_num(tm) +
              ")"};
}

std::vector<Check> run_case(const json& j, const std::string& base) {
  const json& tol = j.at("suggested_tolerance");
  const json& opt = j.at("optimizer");
  const std::string init_file = fs::join(base, "init.safetensors");
  const std::string steps_file = fs::join(base, "steps.safetensors");
  const std::string expected_file = fs::join(base, "expected.safetensors");

  auto cfg = models::WanConfig::from_json(j.at("config"), fs::join(base, "case.json") + " (config)");
  train::ExpertStepOptions o;
  o.learning_rate = opt.at("lr").get<double>();
  o.adam.beta1 = opt.at("betas").at(0).get<double>();
  o.adam.beta2 = opt.at("betas").at(1).get<double>();
  o.adam.eps = opt.at("eps").get<double>();
  o.adam.weight_decay = opt.at("weight_decay").get<double>();
  o.clip.max_grad_norm =
      opt.contains("max_grad_norm") && opt["max_grad_norm"].is_number() ? opt["max_grad_norm"].get<double>() : 0.0;
  train::ExpertStep step(models::load_wan_model(cfg, init_file), o);

  auto steps = io::read_safetensors(steps_file);
  auto expected = io::read_safetensors(expected_file);
  auto t = need_tensor(steps, "t", steps_file).to(torch::kLong);
  auto sigma = need_tensor(steps, "sigma", steps_file).to(torch::kFloat);
  const int64_t N = t.numel(), seq_len = j.at("seq_len").get<int64_t>();

  std::vector<double> loss, grad_norm;
  double xt_err = 0;
  std::vector<std::string> g_names;
  std::vector<torch::Tensor> g_got, g_ref;
  std::vector<double> g_scale;
  for (int64_t k = 0; k < N; ++k) {
    const std::string s = std::to_string(k);
    train::ExpertStepInput in;
    in.x0 = need_tensor(steps, "x0_" + s, steps_file);
    in.noise = need_tensor(steps, "noise_" + s, steps_file);
    in.context = need_tensor(steps, "context_" + s, steps_file);
    in.sigma = sigma[k].item<float>();
    in.t = static_cast<double>(t[k].item<int64_t>());
    in.seq_len = seq_len;
    auto rec = step.forward_backward(in);
    auto ref_xt = need_tensor(steps, "x_t_" + s, steps_file);
    if (ref_xt.sizes() != rec.x_t.sizes()) throw Error(steps_file + ": x_t_" + s + " has the wrong shape");
    xt_err = std::max(xt_err, (rec.x_t.to(torch::kDouble) - ref_xt.to(torch::kDouble)).abs().max().item<double>());
    loss.push_back(rec.loss);
    grad_norm.push_back(rec.clip.grad_norm);
    if (k == 0) {
      // Raw gradients of step 1, before its update.
      auto params = step.model()->named_parameters();
      for (const auto& [key, ref] : expected) {
        if (key.compare(0, 6, "grad1.") != 0) continue;
        const std::string p = key.substr(6);
        auto* got = params.find(p);
        if (!got || !got->grad().defined()) throw Error("no gradient for parameter '" + p + "'");
        g_names.push_back(key);
        g_got.push_back(got->grad().detach().clone());
        g_ref.push_back(ref);
        g_scale.push_back(std::max(ref.abs().max().item<double>(), 1e-30));
      }
    }
    step.update();
  }

  std::vector<Check> checks;
  auto scalar = [&](const std::string& group, const std::vector<double>& got, double rtol) {
    auto ref = doubles(need_tensor(expected, group, expected_file));
    double err = max_rel_error(got, ref);
    checks.push_back({group, err <= rtol, group, err, rtol, " (max_rel)"});
  };
  scalar("loss", loss, tol.at("loss").at("rtol").get<double>());
  scalar("grad_norm", grad_norm, tol.at("grad_norm").at("rtol").get<double>());
  checks.push_back(group_check("grad1", g_names, g_got, g_ref, g_scale, tol.at("grad1_relative_to_tensor_abs_max")));

  std::vector<std::string> names;
  std::vector<torch::Tensor> a, b;
  for (const auto& kv : step.model()->named_parameters()) {
    names.push_back("model." + kv.key());
    a.push_back(kv.value().detach());
    b.push_back(need_tensor(expected, "model." + kv.key(), expected_file));
  }
  size_t n_model = 0;
  for (const auto& kv : expected) n_model += kv.first.compare(0, 6, "model.") == 0;
  if (n_model != names.size())
    throw Error(expected_file + ": " + std::to_string(n_model) + " model tensors, the model has " +
                std::to_string(names.size()));
  checks.push_back(group_check("model", names, a, b, {}, tol.at("model")));

  names.clear(), a.clear(), b.clear();
  std::vector<double> scale;
  for (const auto& [key, ref] : expected) {
    for (const std::string kind : {"adam.exp_avg.", "adam.exp_avg_sq."}) {
      if (key.compare(0, kind.size(), kind) != 0) continue;
      const std::string p = key.substr(kind.size());
      auto got = kind == "adam.exp_avg." ? step.optimizer().exp_avg(p) : step.optimizer().exp_avg_sq(p);
      if (!got.defined()) throw Error("no optimizer state for '" + p + "'");
      names.push_back(key);
      a.push_back(got);
      b.push_back(ref);
      scale.push_back(std::max(ref.abs().max().item<double>(), 1e-30));
    }
  }
  checks.push_back(group_check("adam", names, a, b, scale, tol.at("adam_relative_to_tensor_abs_max")));
  int64_t want = N;
  if (opt.contains("adam_state_step_final") && opt["adam_state_step_final"].is_object() &&
      !opt["adam_state_step_final"].empty())
    want = static_cast<int64_t>(opt["adam_state_step_final"].begin()->get<double>());
  checks.push_back({"adam_step", step.optimizer().step_count() == want, "step",
                    std::fabs(static_cast<double>(step.optimizer().step_count() - want)), 0, ""});
  const double xt_tol = tol.contains("x_t") ? tol["x_t"].value("max_abs", 0.0) : 0.0;
  checks.push_back({"x_t", xt_err <= xt_tol, "x_t", xt_err, xt_tol, ""});
  return checks;
}

}  // namespace

int parity_dit_train(const std::string& dir) {
  if (!fs::is_dir(dir)) throw Error(dir + ": not a directory");
  std::vector<std::string> cases;
  for (const auto& e : stdfs::directory_iterator(dir)) {
    auto p = e.path() / "case.json";
    if (e.is_directory() && stdfs::exists(p)) cases.push_back(p.string());
  }
  std::sort(cases.begin(), cases.end());
  int failures = 0, found = 0;
  for (const auto& path : cases) {
    std::string name = fs::basename(fs::dirname(path));
    try {
      json j;
      try {
        j = json::parse(fs::read_json_text(path));
      } catch (const json::exception& e) {
        throw Error(path + ": invalid JSON (" + std::string(e.what()) + ")");
      }
      if (!j.is_object() || !j.contains("case")) {
        std::printf("skip %s: no 'case' key\n", path.c_str());
        continue;
      }
      if (j.value("kind", std::string()) != "dit-train") continue;  // other kinds are not ours
      ++found;
      if (j["case"].is_string()) name = j["case"].get<std::string>();
      bool ok = true;
      for (const auto& c : run_case(j, fs::dirname(path))) {
        std::printf("%s %s:%s worst=%s max_abs=%s tol=%s%s\n", c.ok ? "PASS" : "FAIL", name.c_str(), c.group.c_str(),
                    c.worst.c_str(), fmt_num(c.err).c_str(), fmt_num(c.tol).c_str(), c.extra.c_str());
        ok = ok && c.ok;
      }
      if (!ok) ++failures;
    } catch (const std::exception& e) {
      ++failures;
      std::printf("FAIL %s %s\n", name.c_str(), e.what());
    }
    std::fflush(stdout);
  }
  if (found == 0) {
    std::printf("FAIL no dit-train case found in %s\n", dir.c_str());
    return 1;
  }
  return failures ? 1 : 0;
}

}  // namespace ws::cli

WS_PARITY_KIND("dit-train", "Wan DiT training step (fixtures/train layout)", &ws::cli::parity_dit_train);
