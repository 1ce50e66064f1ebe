// SPDX-License-Identifier: Apache-2.0
#include "cli/parity/parity_dit.h"

#include <cstdio>

#include "core/error.h"
#include "core/fs.h"
#include "io/safetensors.h"
#include "models/wan_dit.h"
#include "cli/parity/parity.h"
#include "cli/parity/parity_compare.h"

namespace ws::cli {
using nlohmann::json;

int parity_dit(const std::string& dir) {
  return for_each_case(dir, "dit", [](const std::string& path) {
    torch::NoGradGuard no_grad;
    const json j = read_case_json(path);
    const std::string name = j.at("case").is_string() ? j.at("case").get<std::string>() : fs::basename(path);
    const std::string base = fs::dirname(path);
    const std::string weights = fs::join(base, j.at("weights_file").get<std::string>());
    const std::string case_file = fs::join(base, j.at("case_file").get<std::string>());
    const double tol = j.at("suggested_tolerance").at("fp32").at("max_abs").get<double>();
    const int64_t seq_len = j.at("seq_len").get<int64_t>();
    auto cfg = models::WanConfig::from_json(j.at("config"), path + " (config)");

    auto model = models::load_wan_model(cfg, weights);
    model->eval();
    auto io = io::read_safetensors(case_file);
    auto f32 = [&](const char* k) { return need_tensor(io, k, case_file).to(torch::kFloat); };
    models::DitInter inter;
    auto out = model->forward(f32("x"), f32("t"), f32("context"), seq_len, {}, &inter);

    // Intermediates are diagnostics only: printed before the case's line.
    for (const auto& [k, ref] : io) {
      if (k.compare(0, 6, "inter.") != 0) continue;
      auto it = inter.find(k);
      if (it == inter.end()) continue;
      std::string e;
      try {
        e = fmt_num(max_abs_diff(it->second, ref, k));
      } catch (const Error& err) {
        e = err.what();
      }
      std::printf("info %s %s max_abs=%s\n", name.c_str(), k.c_str(), e.c_str());
    }
    const double err = max_abs_diff(out, need_tensor(io, "out", case_file), "out");
    return std::string(err <= tol ? "PASS " : "FAIL ") + name + " worst=out max_abs=" + fmt_num(err) +
           " tol=" + fmt_num(tol);
  });
}

}  // namespace ws::cli

WS_PARITY_KIND("dit", "Wan DiT forward (DIR/*.json)", &ws::cli::parity_dit);
