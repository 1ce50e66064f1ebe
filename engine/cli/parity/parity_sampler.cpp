// SPDX-License-Identifier: Apache-2.0
// `parity sampler DIR` (docs/design/sampling.md §12.2): for each case, the schedule (timesteps
// and float32 sigmas exactly), i2v's y (exactly), then the loop from the case's noise and
// embeddings in fp32 on the CPU, every step's latent against its own tolerance.
#include <c10/util/Exception.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "cli/parity/parity.h"
#include "cli/parity/parity_compare.h"
#include "core/error.h"
#include "core/fs.h"
#include "io/safetensors.h"
#include "models/dit_conditioning.h"
#include "models/wan_dit.h"
#include "sampling/expert_sampler.h"

namespace ws::cli {
namespace {

using json = nlohmann::json;

std::string file_field(const json& files, const char* key, const std::string& dir, const std::string& where) {
  if (!files.contains(key) || !files[key].is_string()) throw Error(where + ": files." + key + " missing");
  const std::string name = files[key].get<std::string>();
  const std::string path = std::filesystem::path(name).is_absolute() ? name : fs::join(dir, name);
  if (!fs::exists(path)) throw Error(path + ": not found");
  return path;
}

std::string run_case(const std::string& json_path) {
  const json j = read_case_json(json_path);
  const std::string name = j["case"].is_string() ? j["case"].get<std::string>() : fs::basename(json_path);
  if (j.value("kind", "sampler") != "sampler") throw Error(json_path + ": kind is not sampler");
  const std::string dir = fs::dirname(json_path);
  const json& files = j.at("files");
  const json& smp = j.at("sampling");
  const json& tol = j.at("suggested_tolerance").at("fp32");

  sampling::SamplerOptions o;
  o.solver = sampling::parse_solver(smp.at("sample_solver").get<std::string>());
  o.steps = smp.at("sampling_steps").get<int64_t>();
  o.shift = smp.at("shift").get<double>();
  const json& g = smp.at("guide_scale");
  // (low, high), or one scale for both.
  o.guide_low = g.is_array() ? g.at(0).get<double>() : g.get<double>();
  o.guide_high = g.is_array() ? g.at(1).get<double>() : g.get<double>();
  if (smp.contains("boundary") && smp["boundary"].is_number()) o.boundary = smp["boundary"].get<double>();

  const std::string case_file = file_field(files, "case_file", dir, json_path);
  const io::StateDict ref = io::read_safetensors(case_file);
  std::string failures;
  auto fail = [&](const std::string& f) { failures += (failures.empty() ? "" : "; ") + f; };

  // The schedule: exact.
  const sampling::FlowSchedule s = sampling::flow_schedule(o.solver, o.steps, o.shift);
  const torch::Tensor ts = need_tensor(ref, "timesteps", case_file).to(torch::kLong);
  const torch::Tensor sg = need_tensor(ref, "sigmas", case_file).to(torch::kFloat);
  if (!torch::equal(torch::tensor(s.timesteps, torch::kLong), ts)) fail("timesteps differ");
  if (!torch::equal(torch::tensor(s.sigmas, torch::kFloat), sg)) fail("sigmas differ");

  const models::WanConfig cfg = models::WanConfig::from_json(j.at("model_config"), json_path + " model_config");
  sampling::SamplerModels m;
  if (files.contains("model")) {
    m.low = models::load_wan_model(cfg, file_field(files, "model", dir, json_path));
  } else {
    m.high = models::load_wan_model(cfg, file_field(files, "high_noise_model", dir, json_path));
    m.low = models::load_wan_model(cfg, file_field(files, "low_noise_model", dir, json_path));
  }
  sampling::SamplerInputs in;
  in.noise = need_tensor(ref, "noise", case_file).to(torch::kFloat);
  in.context = need_tensor(ref, "context", case_file).to(torch::kFloat);
  in.context_null = need_tensor(ref, "context_null", case_file).to(torch::kFloat);
  if (cfg.model_type == "i2v") {
    in.y = models::i2v_y(need_tensor(ref, "image_latent", case_file).to(torch::kFloat));
    if (ref.count("y") && !torch::equal(in.y, ref.at("y").to(torch::kFloat))) fail("y differs from the case's");
  } else if (ref.count("image_latent")) {
    in.first_frame = need_tensor(ref, "image_latent", case_file).to(torch::kFloat);  // ti2v
  }
  // The seed rule: the case's noise is the first draw of a CPU generator seeded noise_seed.
  if (smp.contains("noise_seed")) {
    auto noise = sampling::seeded_noise(in.noise.sizes().vec(), smp["noise_seed"].get<uint64_t>());
    if (!torch::equal(noise, in.noise)) fail("the noise is not the seed's first CPU draw");
  }

  const torch::Tensor per_step =
      ref.count("latents_per_step") ? ref.at("latents_per_step").to(torch::kFloat) : torch::Tensor();
  const json& step_tol = tol.at("per_step_max_abs");
  double worst_ratio = -1, worst_err = 0, worst_tol = 0;
  std::string worst = "final";
  auto judge = [&](const std::string& what, const torch::Tensor& got, const torch::Tensor& want, double t) {
    const double e = max_abs_diff(got, want, what);
    const double ratio = t > 0 ? e / t : (e > 0 ? INFINITY : 0);
    if (ratio > worst_ratio) worst_ratio = ratio, worst_err = e, worst_tol = t, worst = what;
    if (!(e <= t)) fail(what + " max_abs=" + fmt_num(e) + " > tol=" + fmt_num(t));
  };
  torch::Tensor final_latent = sampling::sample_latents(m, in, o, [&](const sampling::SamplerStep& st) {
    if (!per_step.defined() || st.index >= per_step.size(0)) return;
    judge("step" + std::to_string(st.index), st.latent, per_step[st.index], step_tol.at(st.index).get<double>());
  });
  judge("final", final_latent, need_tensor(ref, "final", case_file).to(torch::kFloat),
        tol.at("final_max_abs").get<double>());
  if (!failures.empty()) return "FAIL " + name + " " + failures;
  return "PASS " + name + " worst=" + worst + " max_abs=" + fmt_num(worst_err) + " tol=" + fmt_num(worst_tol);
}

int parity_sampler(const std::string& dir) {
  return for_each_case(dir, "sampler", [](const std::string& path) {
    try {
      return run_case(path);
    } catch (const c10::Error& e) {
      std::string msg = e.what_without_backtrace();
      return "FAIL " + std::filesystem::path(path).stem().string() + " " + msg.substr(0, msg.find('\n'));
    }
  });
}

}  // namespace

WS_PARITY_KIND("sampler", "dual-expert sampling (fixtures/sampler: schedule, solvers, CFG, routing, every step)",
               &parity_sampler);

}  // namespace ws::cli
