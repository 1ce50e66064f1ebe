// SPDX-License-Identifier: Apache-2.0
#include "cli/parity/parity_upsampler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "core/fs.h"
#include "io/safetensors.h"
#include "io/weights.h"
#include "models/latent_upsampler.h"
#include "cli/parity/parity.h"
#include "cli/parity/parity_compare.h"
#include "train/upsampler/upsampler_update.h"

namespace ws::cli {
namespace stdfs = std::filesystem;
using nlohmann::json;

namespace {

// Every DIR/<sub>/case.json, sorted by folder name.
std::vector<std::string> case_files(const std::string& dir) {
  if (!fs::is_dir(dir)) throw Error(dir + ": not a directory");
  std::vector<std::string> out;
  for (const auto& e : stdfs::directory_iterator(dir)) {
    if (!e.is_directory()) continue;
    auto p = e.path() / "case.json";
    if (stdfs::exists(p)) out.push_back(p.string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string case_name(const json& j, const std::string& path) {
  if (j.contains("case") && j["case"].is_string()) return j["case"].get<std::string>();
  return fs::basename(fs::dirname(path));
}

void print_line(bool ok, const std::string& name, const std::string& worst, double err, double tol,
                const std::string& metric = "max_abs") {
  std::printf("%s %s worst=%s %s=%s tol=%s\n", ok ? "PASS" : "FAIL", name.c_str(), worst.c_str(), metric.c_str(),
              fmt_num(err).c_str(), fmt_num(tol).c_str());
  std::fflush(stdout);
}

}  // namespace

// ---------------------------------------------------------------- upsampler model

int parity_upsampler(const std::string& dir) {
  torch::NoGradGuard no_grad;
  auto cases = case_files(dir);
  int failures = 0, found = 0;
  for (const auto& path : cases) {
    std::string name = fs::basename(fs::dirname(path));
    try {
      json j = read_case_json(path);
      if (!j.contains("case")) {
        std::printf("skip %s: no 'case' key\n", path.c_str());
        continue;
      }
      name = case_name(j, path);
      ++found;
      std::string base = fs::dirname(path);
      const json& files = j.at("files");
      std::string weights = fs::join(base, files.at("weights").get<std::string>());
      std::string io_file = fs::join(base, files.at("io").get<std::string>());
      double atol = 1e-4, rtol = 1e-4;
      if (j.contains("suggested_tolerance")) {
        atol = j["suggested_tolerance"].value("atol", atol);
        rtol = j["suggested_tolerance"].value("rtol", rtol);
      }
      // The weights' own folder holds config.json (a loadable checkpoint directory).
      auto model = models::load_latent_upsampler(weights);
      model->eval();
      auto io = io::read_safetensors(io_file);
      std::map<std::string, torch::Tensor> inter;
      auto out = model->forward(need_tensor(io, "input", io_file).to(torch::kFloat), &inter);
      inter["output"] = out;

      std::string worst = "output";
      double worst_ratio = -1, worst_abs = 0;
      bool ok = true;
      for (const auto& [tname, got] : inter) {
        auto it = io.find(tname);
        if (it == io.end()) continue;  // the fixture may store fewer intermediates
        auto r = close_check(got, it->second, atol, rtol);
        if (!r.shape_ok)
          throw Error(tname + ": shape " + io::shape_str(got.sizes().vec()) + " vs reference " +
                      io::shape_str(it->second.sizes().vec()));
        if (r.worst_ratio > 1.0) ok = false;
        if (r.worst_ratio > worst_ratio) {
          worst_ratio = r.worst_ratio;
          worst_abs = r.max_abs;
          worst = tname;
        }
      }
      print_line(ok, name, worst, worst_abs, atol);
      if (!ok) ++failures;
    } catch (const std::exception& e) {
      ++found;
      ++failures;
      std::printf("FAIL %s %s\n", name.c_str(), e.what());
    }
  }
  if (found == 0) {
    std::printf("FAIL no upsampler case found in %s\n", dir.c_str());
    return 1;
  }
  return failures ? 1 : 0;
}

// ---------------------------------------------------------------- upsampler training loop

namespace {

train::UpsamplerUpdateOptions options_from_flags(const json& flags, int64_t processes) {
  train::UpsamplerUpdateOptions o;
  o.learning_rate = flags.value("learning_rate", o.learning_rate);
  o.adam.beta1 = flags.value("adam_beta1", o.adam.beta1);
  o.adam.beta2 = flags.value("adam_beta2", o.adam.beta2);
  o.adam.weight_decay = flags.value("adam_weight_decay", o.adam.weight_decay);
  o.adam.eps = flags.value("adam_epsilon", o.adam.eps);
  if (flags.contains("max_grad_norm") && flags["max_grad_norm"].is_null()) o.clip.max_grad_norm = 0;
  else o.clip.max_grad_norm = flags.value("max_grad_norm", o.clip.max_grad_norm);
  o.clip.abnormal_norm_clip_start = flags.value("abnormal_norm_clip_start", o.clip.abnormal_norm_clip_start);
  o.clip.initial_grad_norm_ratio = flags.value("initial_grad_norm_ratio", o.clip.initial_grad_norm_ratio);
  o.gradient_accumulation_steps = flags.value("gradient_accumulation_steps", int64_t{1});
  o.use_ema = flags.value("use_ema", false);
  if (flags.contains("trainable_modules"))
    o.trainable_modules = flags["trainable_modules"].get<std::vector<std::string>>();
  if (flags.contains("trainable_modules_low_learning_rate"))
    o.trainable_modules_low_learning_rate =
        flags["trainable_modules_low_learning_rate"].get<std::vector<std::string>>();
  o.schedule.name = flags.value("lr_scheduler", o.schedule.name);
  // accelerate multiplies both by the process count.
  o.schedule.warmup_steps = flags.value("lr_warmup_steps", int64_t{0}) * processes;
  o.schedule.training_steps = flags.value("max_train_steps", int64_t{1}) * processes;
  return o;
}

struct GroupCheck {
  std::string group;
  bool ok;
  std::string worst;
  double err, tol;
  std::string metric = "max_abs";
};

}  // namespace

int parity_upsampler_train(const std::string& dir) {
  auto cases = case_files(dir);
  int failures = 0, found = 0;
  for (const auto& path : cases) {
    std::string name = fs::basename(fs::dirname(path));
    std::vector<GroupCheck> checks;
    try {
      json j = read_case_json(path);
      if (!j.contains("case")) {
        std::printf("skip %s: no 'case' key\n", path.c_str());
        continue;
      }
      if (j.value("kind", std::string()) != "upsampler-train") continue;  // other kinds are not ours
      name = case_name(j, path);
      ++found;
      std::string base = fs::dirname(path);
      const json& flags = j.at("flags");
      const json& tol = j.at("suggested_tolerance");
      const int64_t processes = j.value("num_processes", int64_t{1});
      const int64_t K = j.at("micro_batches").get<int64_t>();

      std::string init_dir = fs::join(base, "init/latent_upsampler");
      auto model = models::load_latent_upsampler(init_dir);
      train::UpsamplerUpdater updater(model, options_from_flags(flags, processes));

      std::string batches_file = fs::join(base, "batches.safetensors");
      std::string expected_file = fs::join(base, "expected.safetensors");
      auto batches = io::read_safetensors(batches_file);
      auto expected = io::read_safetensors(expected_file);

      std::vector<double> micro_loss, loss, grad_norm, lr, thr, max_norm, coef, abnormal, ema_decay;
      for (int64_t i = 0; i < K; ++i) {
        std::optional<train::UpdateRecord> rec;
        double l =
            updater.micro_step(need_tensor(batches, "z_lr_" + std::to_string(i), batches_file).to(torch::kFloat),
                               need_tensor(batches, "z_hr_" + std::to_string(i), batches_file).to(torch::kFloat), &rec);
        micro_loss.push_back(static_cast<double>(static_cast<float>(l)));
        if (!rec) continue;
        loss.push_back(rec->loss);
        grad_norm.push_back(rec->clip.grad_norm);
        lr.push_back(rec->lr);
        thr.push_back(rec->clip.threshold);
        max_norm.push_back(rec->clip.max_norm);
        coef.push_back(rec->clip.coef);
        abnormal.push_back(rec->clip.abnormal ? 1.0 : 0.0);
        ema_decay.push_back(rec->ema_decay);
      }

      auto scalar = [&](const std::string& group, const std::string& key, const std::vector<double>& got, double rtol) {
        auto it = expected.find(key);  // F64 in the file: read without the float cast of need_tensor()
        if (it == expected.end()) throw Error(expected_file + ": has no tensor '" + key + "'");
        auto ref = doubles(it->second);
        double err = max_rel_error(got, ref);
        checks.push_back({group, err <= rtol, key, err, rtol, "max_rel"});
      };
      scalar("loss", "loss", loss, tol.at("loss").at("rtol").get<double>());
      scalar("micro_loss", "micro_loss", micro_loss, tol.at("micro_loss").at("rtol").get<double>());
      scalar("grad_norm", "grad_norm", grad_norm, tol.at("grad_norm").at("rtol").get<double>());
      scalar("lr", "lr", lr, tol.at("lr").at("rtol").get<double>());
      double clip_rtol = tol.at("clip_max_norm_and_clip_coef").at("rtol").get<double>();
      scalar("clip", "clip_threshold", thr, clip_rtol);
      scalar("clip", "clip_max_norm", max_norm, clip_rtol);
      scalar("clip", "clip_coef", coef, clip_rtol);
      scalar("abnormal", "abnormal", abnormal, 0.0);
      if (updater.ema()) scalar("ema_decay", "ema_decay", ema_decay, 1e-12);

      const auto plain = updater.plain_weights();  // compared by position with the reference's
      // Weights: non-gauge group statistics; gauge parameters against their bound only.
      std::set<std::string> gauge;
      if (j.contains("gauge_parameters")) {
        for (const auto& g : j["gauge_parameters"].at("names")) gauge.insert(g.get<std::string>());
      }
      const double gauge_bound = tol.at("gauge_parameters").at("max_abs").get<double>();
      auto weights_group = [&](const std::string& group, const std::string& prefix, const io::StateDict& got,
                               const json& t) {
        std::vector<torch::Tensor> a, b;
        double gauge_err = 0;
        std::string gauge_worst = "-";
        for (const auto& [key, value] : got) {
          auto ref = need_tensor(expected, prefix + key, expected_file).to(torch::kFloat);
          if (ref.sizes() != value.sizes()) throw Error(prefix + key + ": shape mismatch");
          if (gauge.count(key)) {
            double e = (value.to(torch::kDouble) - ref.to(torch::kDouble)).abs().max().item<double>();
            if (e >= gauge_err) {
              gauge_err = e;
              gauge_worst = prefix + key;
            }
            continue;
          }
          a.push_back(value);
          b.push_back(ref);
        }
        auto s = group_stats(a, b);
        double tmax = t.at("max_abs").get<double>(), tp = t.at("p99_9_abs").get<double>(),
               tm = t.at("mean_abs").get<double>();
        bool ok = s.max <= tmax && s.p999 <= tp && s.mean <= tm;
        checks.push_back({group, ok, "max/p99.9/mean " + fmt_num(s.p999) + "/" + fmt_num(s.mean), s.max, tmax});
        if (!gauge.empty())
          checks.push_back({group + "_gauge", gauge_err <= gauge_bound, gauge_worst, gauge_err, gauge_bound});
      };
      io::StateDict final_weights;
      for (const auto& kv : updater.model()->named_parameters()) final_weights[kv.key()] = kv.value().detach();
      for (const auto& kv : updater.model()->named_buffers()) final_weights[kv.key()] = kv.value().detach();
      weights_group("model", "model.", final_weights, tol.at("model_excluding_gauge"));
      if (updater.ema()) {
        const json& et =
            tol.contains("ema_excluding_gauge") ? tol.at("ema_excluding_gauge") : tol.at("model_excluding_gauge");
        weights_group("ema", "ema.", updater.ema()->shadow(), et);
      }

      // Adam moments, relative to each reference tensor's abs max.
      std::vector<torch::Tensor> a, b;
      std::vector<double> scale;
      for (const auto& [key, ref] : expected) {
        for (const char* kind : {"adam.exp_avg.", "adam.exp_avg_sq."}) {
          std::string k = kind;
          if (key.compare(0, k.size(), k) != 0) continue;
          std::string pname = key.substr(k.size());
          auto got = k == "adam.exp_avg." ? updater.optimizer().exp_avg(pname) : updater.optimizer().exp_avg_sq(pname);
          if (!got.defined()) throw Error("no optimizer state for '" + pname + "'");
          a.push_back(got);
          b.push_back(ref);
          scale.push_back(std::max(ref.abs().max().item<double>(), 1e-30));
        }
      }
      const json& at = tol.at("adam_relative_to_tensor_abs_max");
      auto s = group_stats(a, b, scale);
      bool ok = !a.empty() && s.max <= at.at("max_abs").get<double>() && s.p999 <= at.at("p99_9_abs").get<double>() &&
                s.mean <= at.at("mean_abs").get<double>();
      checks.push_back({"adam", ok, "rel max/p99.9/mean " + fmt_num(s.p999) + "/" + fmt_num(s.mean), s.max,
                        at.at("max_abs").get<double>(), "max_rel"});
      int64_t want_steps = j.at("optimizer_steps").get<int64_t>();
      checks.push_back({"adam_step", updater.optimizer().step_count() == want_steps, "step",
                        std::fabs(static_cast<double>(updater.optimizer().step_count() - want_steps)), 0});
    } catch (const std::exception& e) {
      ++failures;
      std::printf("FAIL %s %s\n", name.c_str(), e.what());
      continue;
    }
    bool case_ok = true;
    for (const auto& c : checks) {
      print_line(c.ok, name + ":" + c.group, c.worst, c.err, c.tol, c.metric);
      case_ok = case_ok && c.ok;
    }
    if (!case_ok) ++failures;
  }
  if (found == 0) {
    std::printf("FAIL no upsampler-train case found in %s\n", dir.c_str());
    return 1;
  }
  return failures ? 1 : 0;
}

}  // namespace ws::cli

WS_PARITY_KIND("upsampler", "latent upsampler forward (DIR/*/case.json)", &ws::cli::parity_upsampler);
WS_PARITY_KIND("upsampler-train", "upsampler training loop (fixtures/train layout)", &ws::cli::parity_upsampler_train);
