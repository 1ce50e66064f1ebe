// SPDX-License-Identifier: Apache-2.0
#include "models/wan_lora.h"

#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "core/error.h"
#include "core/fs.h"
#include "io/safetensors.h"
#include "io/weights.h"
#include "models/cpu_gemm.h"
#include "models/wan_dit.h"

namespace ws::models {
namespace {

// Official block paths and their diffusers (WanTransformer3DModel) names.
const std::vector<std::pair<std::string, std::string>>& diffusers_names() {
  static const std::vector<std::pair<std::string, std::string>> t = {
      {"self_attn.q", "attn1.to_q"},  {"self_attn.k", "attn1.to_k"},
      {"self_attn.v", "attn1.to_v"},  {"self_attn.o", "attn1.to_out.0"},
      {"cross_attn.q", "attn2.to_q"}, {"cross_attn.k", "attn2.to_k"},
      {"cross_attn.v", "attn2.to_v"}, {"cross_attn.o", "attn2.to_out.0"},
      {"ffn.0", "ffn.net.0.proj"},    {"ffn.2", "ffn.net.2"}};
  return t;
}

// The model's Linear at "blocks.N.<inner>" and the adapter slot it reads; nullptr if none.
struct Site {
  torch::nn::Linear* linear = nullptr;
  LoraAdapter* slot = nullptr;
};
Site find_site(WanModelImpl& m, const std::string& path) {
  static const std::regex re(R"(blocks\.(\d+)\.(.+))");
  std::smatch mt;
  if (!std::regex_match(path, mt, re)) return {};
  const size_t n = std::stoul(mt[1].str());
  if (n >= m.blocks->size()) return {};
  auto& b = *m.blocks[n]->as<WanBlockImpl>();
  const std::string inner = mt[2].str();
  const std::string names[] = {"q", "k", "v", "o"};
  for (auto* attn : {b.self_attn.get(), b.cross_attn.get()}) {
    const std::string pre = attn == b.self_attn.get() ? "self_attn." : "cross_attn.";
    for (int i = 0; i < 4; ++i)
      if (inner == pre + names[i]) {
        torch::nn::Linear* l[] = {&attn->q, &attn->k, &attn->v, &attn->o};
        return {l[i], &attn->lora[i]};
      }
  }
  if (inner == "ffn.0") return {&b.ffn->l0, &b.ffn->lora[0]};
  if (inner == "ffn.2") return {&b.ffn->l2, &b.ffn->lora[1]};
  return {};
}

// Kaiming-uniform with a = √5 on [r, in]: U(±1/√in), PyTorch's default Linear init.
torch::Tensor fresh_down(int64_t r, int64_t in) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  return torch::empty({r, in}).uniform_(-bound, bound);
}

// The entry's site in `m`, checked: the model has the Linear and its shape is the adapter's.
Site fitting_site(WanModelImpl& m, const WanLora::Entry& e) {
  Site s = find_site(m, e.path);
  if (!s.linear) throw Error("the LoRA adapts " + e.path + ", which this model does not have");
  const auto& w = (*s.linear)->weight;
  if (e.down.size(1) != w.size(1) || e.up.size(0) != w.size(0))
    throw Error("the LoRA for " + e.path + " is " + io::shape_str({e.up.size(0), e.down.size(1)}) + ", the weight " +
                io::shape_str(w.sizes().vec()));
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

const std::vector<std::string>& wan_lora_block_linears() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> out;
    for (const auto& [official, diffusers] : diffusers_names()) out.push_back(official);
    return out;
  }();
  return v;
}

torch::Tensor LoraAdapter::delta(const torch::Tensor& x, bool training, torch::ScalarType out_dtype) const {
  auto h = gemm_linear(x.to(down.scalar_type()), down, {});
  if (training && dropout > 0) h = torch::dropout(h, dropout, true);
  return (gemm_linear(h, up, {}) * scale).to(out_dtype);
}

std::string WanLora::musubi_name(const std::string& path) {
  std::string s = "lora_unet_" + path;
  for (char& c : s)
    if (c == '.') c = '_';
  return s;
}

WanLora WanLora::create(const WanModelImpl& model_const, const LoraSpec& spec) {
  if (spec.rank < 1) throw Error("LoRA rank must be at least 1");
  auto& model = const_cast<WanModelImpl&>(model_const);
  const std::vector<std::string>& targets = spec.targets.empty() ? wan_lora_block_linears() : spec.targets;
  for (const auto& t : targets)
    if (std::find(wan_lora_block_linears().begin(), wan_lora_block_linears().end(), t) ==
        wan_lora_block_linears().end()) {
      std::string all;
      for (const auto& n : wan_lora_block_linears()) all += (all.empty() ? "" : ", ") + n;
      throw Error("unknown LoRA target '" + t + "' (one of: " + all + ")");
    }
  WanLora l;
  const double alpha = spec.alpha > 0 ? spec.alpha : static_cast<double>(spec.rank);
  for (size_t n = 0; n < model.blocks->size(); ++n)
    for (const auto& t : targets) {
      const std::string path = "blocks." + std::to_string(n) + "." + t;
      Site s = find_site(model, path);
      const auto& w = (*s.linear)->weight;
      torch::NoGradGuard ng;
      Entry e{path, fresh_down(spec.rank, w.size(1)).to(w.device()), torch::zeros({w.size(0), spec.rank}, w.device()),
              alpha};
      e.down.requires_grad_(true);
      e.up.requires_grad_(true);
      l.entries_.push_back(std::move(e));
    }
  return l;
}

bool WanLora::looks_like_lora(const io::StateDict& sd, LoraFormat* format) {
  for (const auto& [k, v] : sd) {
    if (k.rfind("lora_unet_", 0) == 0 && ends_with(k, ".lora_down.weight")) {
      if (format) *format = LoraFormat::Musubi;
      return true;
    }
    if (ends_with(k, ".lora_A.weight")) {
      if (format) *format = LoraFormat::Peft;
      return true;
    }
  }
  return false;
}

WanLora WanLora::from_state_dict(const io::StateDict& sd, const std::string& source) {
  LoraFormat fmt{};
  if (!looks_like_lora(sd, &fmt))
    throw Error(source + ": not a LoRA file (no lora_unet_*.lora_down.weight or *.lora_A.weight keys)");
  // Musubi names back to paths: every candidate path of the blocks named in the file.
  std::map<std::string, std::string> musubi_paths;
  std::map<std::string, std::string> diffusers_to_official;
  for (const auto& [o, d] : diffusers_names()) diffusers_to_official[d] = o;
  WanLora l;
  std::set<std::string> used;
  static const std::regex block_re(R"(blocks[._](\d+)[._])");
  for (const auto& [k, v] : sd) {
    std::string path, down_key, up_key, alpha_key;
    if (fmt == LoraFormat::Musubi) {
      if (!ends_with(k, ".lora_down.weight")) continue;
      const std::string base = k.substr(0, k.size() - std::string(".lora_down.weight").size());
      std::smatch mt;
      if (!std::regex_search(base, mt, block_re)) throw Error(source + ": " + k + " names no block");
      const std::string n = mt[1].str();
      for (const auto& inner : wan_lora_block_linears())
        if (musubi_name("blocks." + n + "." + inner) == base) path = "blocks." + n + "." + inner;
      if (path.empty()) throw Error(source + ": " + k + " is not on a block Linear this engine adapts");
      down_key = k;
      up_key = base + ".lora_up.weight";
      alpha_key = base + ".alpha";
    } else {
      if (!ends_with(k, ".lora_A.weight")) continue;
      const std::string base = k.substr(0, k.size() - std::string(".lora_A.weight").size());
      const size_t at = base.find("blocks.");
      if (at == std::string::npos) throw Error(source + ": " + k + " names no block");
      std::string rest = base.substr(at);  // blocks.N.<module>
      std::smatch mt;
      static const std::regex re(R"(blocks\.(\d+)\.(.+))");
      if (!std::regex_match(rest, mt, re)) throw Error(source + ": " + k + " names no block");
      std::string inner = mt[2].str();
      if (diffusers_to_official.count(inner)) inner = diffusers_to_official[inner];
      if (std::find(wan_lora_block_linears().begin(), wan_lora_block_linears().end(), inner) ==
          wan_lora_block_linears().end())
        throw Error(source + ": " + k + " is not on a block Linear this engine adapts");
      path = "blocks." + mt[1].str() + "." + inner;
      down_key = k;
      up_key = base + ".lora_B.weight";
      alpha_key = base + ".alpha";
    }
    if (!sd.count(up_key)) throw Error(source + ": " + down_key + " has no " + up_key);
    Entry e;
    e.path = path;
    e.down = sd.at(down_key).to(torch::kFloat).clone();
    e.up = sd.at(up_key).to(torch::kFloat).clone();
    if (e.down.dim() != 2 || e.up.dim() != 2 || e.up.size(1) != e.down.size(0))
      throw Error(source + ": " + down_key + " " + io::shape_str(e.down.sizes().vec()) + " and " + up_key + " " +
                  io::shape_str(e.up.sizes().vec()) + " are not a rank-r pair");
    // No alpha (PEFT files fold it into B): scale 1.
    e.alpha =
        sd.count(alpha_key) ? sd.at(alpha_key).to(torch::kDouble).item<double>() : static_cast<double>(e.down.size(0));
    if (!(e.alpha > 0)) e.alpha = static_cast<double>(e.down.size(0));
    used.insert(down_key);
    used.insert(up_key);
    used.insert(alpha_key);
    l.entries_.push_back(std::move(e));
  }
  for (const auto& [k, v] : sd)
    if (!used.count(k)) throw Error(source + ": " + k + " is not part of an adapter this engine applies");
  std::sort(l.entries_.begin(), l.entries_.end(), [](const Entry& a, const Entry& b) { return a.path < b.path; });
  return l;
}

WanLora WanLora::load(const std::string& path) { return from_state_dict(io::load_weights(path), path); }

void WanLora::attach(WanModelImpl& model, double multiplier, double dropout) const {
  for (const Entry& e : entries_) {
    Site s = fitting_site(model, e);
    // Multiplier 0 is the base model exactly: no adapter at all.
    *s.slot = multiplier == 0
                  ? LoraAdapter{}
                  : LoraAdapter{e.down, e.up, multiplier * e.alpha / static_cast<double>(e.down.size(0)), dropout};
  }
}

void WanLora::detach(WanModelImpl& model) {
  for (size_t n = 0; n < model.blocks->size(); ++n)
    for (const auto& inner : wan_lora_block_linears())
      if (LoraAdapter* slot = find_site(model, "blocks." + std::to_string(n) + "." + inner).slot) *slot = LoraAdapter{};
}

void WanLora::merge_into(WanModelImpl& model, double multiplier) const {
  torch::NoGradGuard ng;
  for (const Entry& e : entries_) {
    Site s = fitting_site(model, e);
    auto& w = (*s.linear)->weight;
    const double scale = multiplier * e.alpha / static_cast<double>(e.down.size(0));
    w.add_((torch::matmul(e.up.to(w.device(), torch::kFloat), e.down.to(w.device(), torch::kFloat)) * scale)
               .to(w.scalar_type()));
  }
  if (model.fp8()) model.refresh_fp8();
}

io::StateDict WanLora::state_dict(LoraFormat format) const {
  io::StateDict sd;
  std::map<std::string, std::string> to_diffusers(diffusers_names().begin(), diffusers_names().end());
  for (const Entry& e : entries_) {
    const auto down = e.down.detach().to(torch::kCPU, torch::kFloat).contiguous();
    const auto up = e.up.detach().to(torch::kCPU, torch::kFloat).contiguous();
    if (format == LoraFormat::Musubi) {
      const std::string base = musubi_name(e.path);
      sd[base + ".lora_down.weight"] = down;
      sd[base + ".lora_up.weight"] = up;
      sd[base + ".alpha"] = torch::tensor(static_cast<float>(e.alpha));
    } else {
      // blocks.N.<official> -> transformer.blocks.N.<diffusers>; α/r folded into B.
      const size_t dot = e.path.find('.', 7);
      const std::string block = e.path.substr(0, dot), inner = e.path.substr(dot + 1);
      const std::string base = "transformer." + block + "." + to_diffusers.at(inner);
      sd[base + ".lora_A.weight"] = down;
      sd[base + ".lora_B.weight"] = up * (e.alpha / static_cast<double>(e.down.size(0)));
    }
  }
  return sd;
}

void WanLora::save(const std::string& path, LoraFormat format) const {
  std::map<std::string, std::string> meta = {
      {"format", "pt"},
      {"ss_network_module", "networks.lora_wan"},
      {"ss_network_dim", std::to_string(rank())},
      {"ss_network_alpha", std::to_string(alpha())},
      {"wanstudio_lora_format", format == LoraFormat::Musubi ? "musubi" : "peft"}};
  io::write_safetensors(path, state_dict(format), meta);
}

std::vector<std::pair<std::string, torch::Tensor>> WanLora::named_parameters() const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const Entry& e : entries_) {
    const std::string base = musubi_name(e.path);
    out.emplace_back(base + ".lora_down.weight", e.down);
    out.emplace_back(base + ".lora_up.weight", e.up);
  }
  return out;
}

void WanLora::to(const torch::Device& device) {
  torch::NoGradGuard ng;
  for (Entry& e : entries_) {
    // In place: the optimizer and the attached model keep the same tensors.
    e.down.set_data(e.down.data().to(device));
    e.up.set_data(e.up.data().to(device));
  }
}

int64_t WanLora::rank() const { return entries_.empty() ? 0 : entries_.front().down.size(0); }
double WanLora::alpha() const { return entries_.empty() ? 0 : entries_.front().alpha; }

int64_t WanLora::parameter_count() const {
  int64_t n = 0;
  for (const Entry& e : entries_) n += e.down.numel() + e.up.numel();
  return n;
}

}  // namespace ws::models
