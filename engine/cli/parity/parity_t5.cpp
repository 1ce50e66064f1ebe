// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine parity t5 DIR` (docs/design/umt5.md §8): every DIR/*.json with `case` and
// kind "encoder" (the forward and its intermediates against the fp32 reference; the bf16 .pth
// equal to the .safetensors) or kind "tokenizer" (cleaned text, ids and mask exactly).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli/parity/parity.h"
#include "cli/parity/parity_compare.h"
#include "core/error.h"
#include "core/fs.h"
#include "io/safetensors.h"
#include "io/weights.h"
#include "models/umt5.h"
#include "text/umt5_tokenizer.h"

namespace ws::cli {
namespace {
namespace stdfs = std::filesystem;
using nlohmann::json;

// The real rows of out [B, L, D] (mask 1), packed: what Wan keeps.
torch::Tensor real_rows(const torch::Tensor& out, const torch::Tensor& mask) {
  return out.reshape({-1, out.size(-1)}).index({mask.reshape({-1}).to(torch::kBool)});
}

bool encoder_case(const json& j, const std::string& path, const std::string& name) {
  const std::string base = fs::dirname(path);
  const std::string st = fs::join(base, j.at("weights").at("safetensors").get<std::string>());
  const std::string case_file = fs::join(base, j.at("case_file").get<std::string>());
  const auto cfg = models::Umt5Config::from_json(j.at("config"), path + " (config)");
  const auto enc = models::Umt5Encoder::load(st, cfg);
  const auto io = io::read_safetensors(case_file);
  const torch::Tensor ids = need_tensor(io, "ids", case_file), mask = need_tensor(io, "mask", case_file);
  models::Umt5Trace trace;
  const torch::Tensor out = enc.forward(ids, mask, &trace);
  bool ok = true;
  std::string worst = "out";
  double worst_ratio = 0;
  auto check = [&](const std::string& key, const torch::Tensor& got, const torch::Tensor& ref) {
    const double tol = j.at("tolerance").contains(key) ? j["tolerance"][key].value("suggested_atol", 2e-5) : 2e-5;
    const double e = max_abs_diff(got, ref, key);
    const bool pass = e <= tol;
    std::printf("info %s %s max_abs=%s tol=%s%s\n", name.c_str(), key.c_str(), fmt_num(e).c_str(), fmt_num(tol).c_str(),
                pass ? "" : " FAIL");
    const double ratio = tol > 0 ? e / tol : (e > 0 ? INFINITY : 0);
    if (ratio > worst_ratio) worst_ratio = ratio, worst = key;
    ok = ok && pass;
  };
  // The real rows of the output (padded rows are discarded by every caller), then every intermediate.
  check("out", real_rows(out.to(torch::kFloat), mask),
        real_rows(need_tensor(io, "out", case_file).to(torch::kFloat), mask));
  for (const auto& [k, ref] : io) {
    if (k.compare(0, 6, "inter.") != 0) continue;
    auto it = trace.tensors.find(k);
    if (it == trace.tensors.end()) throw Error(case_file + ": the engine has no intermediate " + k);
    check(k, it->second, ref);
  }
  // The bf16 .pth (the released checkpoint's format) holds the same values as the .safetensors.
  if (j.at("weights").contains("pth")) {
    const std::string pth = fs::join(base, j["weights"]["pth"].get<std::string>());
    const io::StateDict a = io::load_weights(pth), b = io::load_weights(st);
    if (a.size() != b.size())
      throw Error(pth + ": " + std::to_string(a.size()) + " tensors, the .safetensors has " + std::to_string(b.size()));
    for (const auto& [k, v] : b) {
      auto it = a.find(k);
      if (it == a.end() || !torch::equal(it->second.to(torch::kFloat), v.to(torch::kFloat))) {
        std::printf("info %s pth differs at %s FAIL\n", name.c_str(), k.c_str());
        ok = false;
      }
    }
    std::printf("info %s pth %zu tensors, %s\n", name.c_str(), a.size(),
                c10::toString(a.begin()->second.scalar_type()));
  }
  std::printf("%s %s worst=%s (%s of its tolerance)\n", ok ? "PASS" : "FAIL", name.c_str(), worst.c_str(),
              fmt_num(worst_ratio).c_str());
  return ok;
}

bool tokenizer_case(const json& j, const std::string& path, const std::string& name) {
  const std::string base = fs::dirname(path);
  const text::Umt5Tokenizer tok(fs::join(base, j.at("tokenizer_model").get<std::string>()));
  const int64_t L = j.value("text_len", int64_t{512});
  const auto io = io::read_safetensors(fs::join(base, j.at("case_file").get<std::string>()));
  const torch::Tensor ids = io.at("input_ids").to(torch::kInt64), mask = io.at("attention_mask").to(torch::kInt64);
  bool ok = true;
  int64_t b = 0;
  for (const auto& item : j.at("items")) {
    const auto t = tok.encode(item.at("caption").get<std::string>(), L);
    std::vector<int64_t> padded, m;
    text::pad_tokens(t.ids, L, tok.pad_id(), &padded, &m);
    const bool same_text = t.cleaned == item.at("cleaned").get<std::string>();
    const bool same_ids = t.ids == item.at("ids").get<std::vector<int64_t>>() &&
                          torch::equal(torch::tensor(padded), ids[b]) && torch::equal(torch::tensor(m), mask[b]);
    const bool same_trunc = t.truncated == item.value("truncated", false);
    if (!same_text || !same_ids || !same_trunc) {
      ok = false;
      std::printf("info %s item %lld:%s%s%s FAIL\n", name.c_str(), static_cast<long long>(b),
                  same_text ? "" : " cleaned text differs", same_ids ? "" : " ids differ",
                  same_trunc ? "" : " truncation differs");
    }
    ++b;
  }
  std::printf("%s %s %lld captions (cleaned text, ids, mask exact)\n", ok ? "PASS" : "FAIL", name.c_str(),
              static_cast<long long>(b));
  return ok;
}

}  // namespace

int parity_t5(const std::string& dir) {
  if (!fs::is_dir(dir)) throw Error(dir + ": not a directory");
  std::vector<std::string> files;
  for (const auto& e : stdfs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  int failures = 0, found = 0;
  for (const auto& path : files) {
    std::string name = fs::basename(path);
    try {
      const json j = read_case_json(path);
      if (!j.is_object() || !j.contains("case") || !j.contains("kind")) {
        std::printf("skip %s: no 'case' and 'kind'\n", path.c_str());
        continue;
      }
      if (j["case"].is_string()) name = j["case"].get<std::string>();
      const std::string kind = j["kind"].is_string() ? j["kind"].get<std::string>() : "";
      if (kind != "encoder" && kind != "tokenizer") {
        std::printf("skip %s: kind '%s'\n", name.c_str(), kind.c_str());
        continue;
      }
      ++found;
      if (!(kind == "encoder" ? encoder_case(j, path, name) : tokenizer_case(j, path, name))) ++failures;
    } catch (const std::exception& e) {
      ++failures;
      std::printf("FAIL %s %s\n", name.c_str(), e.what());
    }
    std::fflush(stdout);
  }
  if (found == 0) {
    std::printf("FAIL no t5 case found in %s\n", dir.c_str());
    return 1;
  }
  return failures ? 1 : 0;
}

}  // namespace ws::cli

WS_PARITY_KIND("t5", "UMT5 text encoder and tokenizer (fixtures/t5: encoder, tokenizer)", &ws::cli::parity_t5);
