// SPDX-License-Identifier: Apache-2.0
#include "cli/parity_dit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "io/safetensors.h"
#include "models/wan_dit.h"
#include "cli/parity.h"
#include "cli/parity_compare.h"

namespace ws::cli {
namespace stdfs = std::filesystem;
using nlohmann::json;

int parity_dit(const std::string& dir) {
  if (!fs::is_dir(dir)) throw Error(dir + ": not a directory");
  std::vector<std::string> files;
  for (const auto& e : stdfs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());

  torch::NoGradGuard no_grad;
  int failures = 0, found = 0;
  for (const auto& path : files) {
    std::string name = fs::basename(path);
    try {
      json j = read_case_json(path);
      if (!j.is_object() || !j.contains("case")) {
        std::printf("skip %s: no 'case' key\n", path.c_str());
        continue;
      }
      ++found;
      if (j["case"].is_string()) name = j["case"].get<std::string>();
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

      // Intermediates are diagnostics only.
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
      const bool ok = err <= tol;
      std::printf("%s %s worst=out max_abs=%s tol=%s\n", ok ? "PASS" : "FAIL", name.c_str(), fmt_num(err).c_str(),
                  fmt_num(tol).c_str());
      if (!ok) ++failures;
    } catch (const std::exception& e) {
      ++failures;
      std::printf("FAIL %s %s\n", name.c_str(), e.what());
    }
    std::fflush(stdout);
  }
  if (found == 0) {
    std::printf("FAIL no dit case found in %s\n", dir.c_str());
    return 1;
  }
  return failures ? 1 : 0;
}

}  // namespace ws::cli

WS_PARITY_KIND("dit", "Wan DiT forward (DIR/*.json)", &ws::cli::parity_dit);
