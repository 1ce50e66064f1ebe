// SPDX-License-Identifier: Apache-2.0
#include "cli/parity/parity_vae.h"

#include <c10/util/Exception.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "core/error.h"
#include "core/fs.h"
#include "io/safetensors.h"
#include "io/weights.h"
#include "models/wan_vae.h"
#include "models/wan_vae_ops.h"
#include "cli/parity/parity.h"
#include "cli/parity/parity_compare.h"

namespace ws::cli {
namespace {

using json = nlohmann::json;
namespace fsys = std::filesystem;

const char* const kEncoderSide[] = {"x_patch", "enc_raw", "mu", "log_var", "latent"};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string str_field(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j.at(key).is_string() || j.at(key).get<std::string>().empty())
    throw Error(where + ": missing string field '" + key + "'");
  return j.at(key).get<std::string>();
}

std::vector<double> number_list(const json& j, const char* key, const std::string& where) {
  const auto& v = j.at(key);
  if (!v.is_array()) throw Error(where + ": '" + std::string(key) + "' must be a list of numbers");
  std::vector<double> out;
  for (const auto& e : v) {
    if (!e.is_number()) throw Error(where + ": '" + std::string(key) + "' must be a list of numbers");
    out.push_back(e.get<double>());
  }
  return out;
}

// The .pth must hold exactly the .safetensors tensors: same keys, shapes, dtypes and values.
void check_pth(const std::string& pth, const io::StateDict& ref) {
  io::StateDict sd = io::load_weights(pth);
  for (const auto& [k, t] : ref) {
    auto it = sd.find(k);
    if (it == sd.end()) throw Error(pth + ": lacks '" + k + "' of the .safetensors");
    if (it->second.scalar_type() != t.scalar_type() || it->second.sizes() != t.sizes() || !torch::equal(it->second, t))
      throw Error(pth + ": '" + k + "' differs from the .safetensors");
  }
  for (const auto& kv : sd)
    if (!ref.count(kv.first)) throw Error(pth + ": has '" + kv.first + "' that the .safetensors lacks");
}

void run_case(const std::string& json_path, const json& j, models::VaeType kind, VaeParityCase& c) {
  // The case says which VAE it is for (no vae_type: a Wan2.2 case of the first fixture set).
  models::VaeType type = models::VaeType::Wan22;
  if (j.contains("vae_type")) {
    if (!j["vae_type"].is_string()) throw Error(json_path + ": 'vae_type' must be a string");
    type = models::parse_vae_type(j["vae_type"].get<std::string>(), json_path);
  }
  if (type != kind)
    throw Error(json_path + ": a " + models::vae_type_name(type) + " case, but this parity kind checks the " +
                models::vae_type_name(kind) + " VAE (use parity " + (type == models::VaeType::Wan21 ? "vae21" : "vae") +
                ")");
  const std::string dir = fs::dirname(json_path);
  auto rel = [&](const std::string& name) { return fsys::path(name).is_absolute() ? name : fs::join(dir, name); };
  const std::string case_path = rel(str_field(j, "case_file", json_path));
  if (!j.contains("weights") || !j["weights"].is_object()) throw Error(json_path + ": missing object 'weights'");
  const std::string st_path = rel(str_field(j["weights"], "safetensors", json_path + " weights"));
  if (!j.contains("tolerance") || !j["tolerance"].is_object() || j["tolerance"].empty())
    throw Error(json_path + ": missing object 'tolerance'");

  // What to compare and how closely, before any work.
  std::map<std::string, double> tol;
  for (const auto& [name, t] : j["tolerance"].items()) {
    if (!t.is_object() || !t.contains("suggested_atol") || !t["suggested_atol"].is_number())
      throw Error(json_path + ": tolerance." + name + " has no numeric 'suggested_atol'");
    double v = t["suggested_atol"].get<double>();
    if (!(v >= 0)) throw Error(json_path + ": tolerance." + name + ".suggested_atol must be >= 0");
    tol[name] = v;
  }
  std::vector<std::string> known{"enc_raw", "mu", "log_var", "latent", "decoded", "decoded_clamped", "dec_chunk0"};
  if (kind == models::VaeType::Wan22) known.push_back("x_patch");  // the Wan2.1 VAE has no patchify
  for (const auto& kv : tol)
    if (std::find(known.begin(), known.end(), kv.first) == known.end())
      throw Error(json_path + ": tolerance names '" + kv.first + "', which the VAE does not produce");

  if (!fs::exists(case_path)) throw Error(case_path + ": case file not found");
  if (!fs::exists(st_path)) throw Error(st_path + ": weights file not found");
  io::StateDict ref = io::read_safetensors(case_path);
  auto need = [&](const std::string& name) -> const torch::Tensor& {
    auto it = ref.find(name);
    if (it == ref.end()) throw Error(case_path + ": no tensor '" + name + "'");
    return it->second;
  };

  json cfg = j.contains("config") ? j["config"] : json::object();
  if (!cfg.is_object()) throw Error(json_path + ": 'config' must be an object");
  cfg["vae_type"] = models::vae_type_name(kind);  // weights of the other VAE fail, naming both
  io::StateDict weights = io::read_safetensors(st_path);
  auto vae = models::WanVae::from_state_dict(weights, models::WanVae::resolve_config(st_path, cfg), st_path);
  if (j.contains("latent_mean") != j.contains("latent_std"))
    throw Error(json_path + ": 'latent_mean' and 'latent_std' come together");
  if (j.contains("latent_mean"))
    vae->set_latent_stats(number_list(j, "latent_mean", json_path), number_list(j, "latent_std", json_path));

  std::map<std::string, torch::Tensor> got;
  bool enc = false, dec = false;
  for (const auto& kv : tol) {
    enc |= std::find(std::begin(kEncoderSide), std::end(kEncoderSide), kv.first) != std::end(kEncoderSide);
    dec |= kv.first == "decoded" || kv.first == "decoded_clamped";
  }
  const bool chunk0 = tol.count("dec_chunk0") > 0;
  if (enc) {
    const torch::Tensor x = need("x").to(torch::kFloat);
    vae->check_video(x, case_path + " x");
    if (kind == models::VaeType::Wan22) got["x_patch"] = models::vae::patchify(x);
    auto e = vae->encode_full(x);
    got["enc_raw"] = e.enc_raw;
    got["mu"] = e.mu;
    got["log_var"] = e.log_var;
    got["latent"] = e.latent;
  }
  if (dec) {
    // Decoding starts from the case's own latent, so encoder noise does not leak into it.
    const torch::Tensor z = need("latent").to(torch::kFloat);
    vae->check_latent(z, case_path + " latent");
    got["decoded"] = vae->decode(z, /*clamp=*/false);
    got["decoded_clamped"] = got["decoded"].clamp(-1.0, 1.0);
  }
  if (chunk0) {
    // The first decoder chunk on its own (latent frame 0, empty caches).
    const torch::Tensor z = need("latent").to(torch::kFloat);
    vae->check_latent(z, case_path + " latent");
    got["dec_chunk0"] = vae->decode(z.narrow(2, 0, 1), /*clamp=*/false);
  }

  if (j["weights"].contains("pth") && j["weights"]["pth"].is_string()) {
    const std::string pth = rel(j["weights"]["pth"].get<std::string>());
    if (fs::exists(pth)) {
      check_pth(pth, weights);
      c.pth_checked = true;
    }
  }

  std::string failures;
  for (const auto& [name, t] : tol) {
    const torch::Tensor& r = need(name);
    VaeParityTensor pt{name, 0, t, false};
    const torch::Tensor& a = got.at(name);
    if (a.sizes() != r.sizes()) {  // max_abs_diff would throw: report it as this case's failure
      failures += (failures.empty() ? "" : "; ") + name + " shape " + io::shape_str(a.sizes().vec()) +
                  " != reference " + io::shape_str(r.sizes().vec());
      pt.max_abs = INFINITY;
    } else {
      pt.max_abs = max_abs_diff(a, r, name);
      pt.pass = pt.max_abs <= t;
      if (!pt.pass)
        failures += (failures.empty() ? "" : "; ") + name + " max_abs=" + num(pt.max_abs) + " > tol=" + num(t);
    }
    c.tensors.push_back(pt);
  }
  c.pass = failures.empty();
  c.reason = failures;
}

}  // namespace

std::string VaeParityCase::line() const {
  if (skipped) return "SKIP " + name + " " + reason;
  if (!pass) return "FAIL " + name + " " + reason;
  // The worst tensor is the one closest to (or furthest over) its tolerance.
  const VaeParityTensor* worst = nullptr;
  double worst_ratio = -1;
  for (const auto& t : tensors) {
    double ratio = t.tol > 0 ? t.max_abs / t.tol : (t.max_abs > 0 ? INFINITY : 0.0);
    if (ratio > worst_ratio) worst_ratio = ratio, worst = &t;
  }
  if (!worst) return "PASS " + name;
  return "PASS " + name + " worst=" + worst->name + " max_abs=" + num(worst->max_abs) + " tol=" + num(worst->tol);
}

VaeParityCase check_vae_parity_case(const std::string& json_path, models::VaeType kind) {
  VaeParityCase c;
  c.name = fsys::path(json_path).stem().string();
  json j;
  try {
    j = json::parse(fs::read_json_text(json_path));
  } catch (const json::exception& e) {
    c.reason = json_path + ": not valid JSON (" + std::string(e.what()) + ")";
    return c;
  } catch (const std::exception& e) {
    c.reason = e.what();
    return c;
  }
  if (!j.is_object() || !j.contains("case")) {
    c.skipped = true;
    c.reason = json_path + ": no 'case' key, not a case";
    return c;
  }
  if (j["case"].is_string() && !j["case"].get<std::string>().empty()) c.name = j["case"].get<std::string>();
  try {
    run_case(json_path, j, kind, c);
  } catch (const c10::Error& e) {
    std::string msg = e.what_without_backtrace();
    c.pass = false;
    c.reason = msg.substr(0, msg.find('\n'));
  } catch (const std::exception& e) {
    c.pass = false;
    c.reason = e.what();
  }
  return c;
}

int parity_vae(const std::string& dir, models::VaeType kind) {
  return for_each_case(dir, "VAE",
                       [kind](const std::string& path) { return check_vae_parity_case(path, kind).line(); });
}

namespace {
int parity_vae22(const std::string& dir) { return parity_vae(dir, models::VaeType::Wan22); }
int parity_vae21(const std::string& dir) { return parity_vae(dir, models::VaeType::Wan21); }
}  // namespace

WS_PARITY_KIND("vae", "Wan2.2 VAE (fixtures/vae: encode, decode, .pth = .safetensors)", &parity_vae22);
WS_PARITY_KIND("vae21", "Wan2.1 VAE (fixtures/vae21: encode, decode, first chunk, .pth = .safetensors)", &parity_vae21);

}  // namespace ws::cli
