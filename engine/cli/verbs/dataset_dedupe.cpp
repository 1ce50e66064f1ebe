// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine dataset dedupe METADATA.json [--threshold X] [--json]`: pairs of rows whose
// clips are copies of each other.
#include <cmath>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/verbs/dataset_verbs.h"
#include "core/error.h"
#include "dataset/metadata.h"
#include "dataset/near_duplicates.h"
#include "io/printable.h"
#include "runtime/cancel.h"
#include "runtime/progress.h"

namespace ws::cli {

int run_dataset_dedupe(const std::vector<std::string>& argv) {
  Args args("dataset dedupe", "dataset dedupe METADATA.json [--threshold X] [--samples N] [--json]",
            "Finds rows whose files are copies of each other (re-encoded, rescaled): a perceptual\n"
            "hash of --samples frames spread over each clip, every frame matched with the closest\n"
            "of the other clip. Pairs at or above --threshold (0..1, default 0.85) are printed, most\n"
            "similar first; --json prints only a JSON list of {\"a\", \"b\", \"similarity\"} (file_path\n"
            "values). A row whose file cannot be read is reported on stderr and skipped.");
  args.positional("METADATA.json", "the dataset");
  args.value("threshold", "X", "smallest similarity reported as a copy (default 0.85)", real_range(0, 1));
  args.value("samples", "N", "frames hashed per clip (default 8)", int_range(1, 64));
  args.value("train_data_dir", "DIR", "folder file_path is relative to (default: the metadata.json's folder)");
  args.flag("json", "print only the JSON list");
  if (!args.parse(argv)) return 0;
  require_video("dataset dedupe");
  const double threshold = args.real("threshold", 0.85);
  if (!std::isfinite(threshold) || threshold < 0 || threshold > 1)
    throw UsageError("--threshold must be a number in 0..1, got " + args.str("threshold"));
  const int64_t samples = args.integer("samples", 8);
  if (samples < 1 || samples > 256) throw UsageError("--samples must be 1..256");

  const auto meta = dataset::read_metadata(args.pos(0), args.str("train_data_dir"));
  std::vector<dataset::ClipHashes> hashes;
  std::vector<size_t> row_of;  // hashes[i] belongs to meta.rows[row_of[i]]
  {
    runtime::ProgressBar bar("hash", meta.rows.size());
    for (size_t i = 0; i < meta.rows.size(); ++i) {
      if (runtime::cancel_requested()) throw Error("dedupe: cancelled");
      const auto& row = meta.rows[i];
      try {
        if (row.file_path.empty()) throw Error("no file_path");
        hashes.push_back(dataset::hash_clip(meta.resolve(row), static_cast<int>(samples)));
        row_of.push_back(i);
      } catch (const Error& e) {
        std::fprintf(stderr, "row %zu: %s (skipped)\n", i, io::printable(e.what(), 4096).c_str());
      }
      bar.update(i + 1);
    }
  }
  const auto pairs = dataset::find_duplicates(hashes, threshold);
  if (args.boolean("json")) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& p : pairs)
      out.push_back({{"a", meta.rows[row_of[p.a]].file_path},
                     {"b", meta.rows[row_of[p.b]].file_path},
                     {"similarity", std::round(p.similarity * 1e4) / 1e4}});
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  for (const auto& p : pairs)
    std::printf("%.3f  %s  %s\n", p.similarity, io::printable(meta.rows[row_of[p.a]].file_path, 4096).c_str(),
                io::printable(meta.rows[row_of[p.b]].file_path, 4096).c_str());
  std::printf("%zu pairs at or above %.3f among %zu clips\n", pairs.size(), threshold, hashes.size());
  return 0;
}

}  // namespace ws::cli
