// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine dataset import DIR --output METADATA.json`: a dataset from a folder of clips
// with sidecar captions.
#include <cstdio>
#include <optional>

#include "cli/args.h"
#include "cli/verbs/dataset_verbs.h"
#include "core/error.h"
#include "core/fs.h"
#include "dataset/import_folder.h"
#include "io/printable.h"
#include "runtime/cancel.h"
#include "runtime/progress.h"

namespace ws::cli {

int run_dataset_import(const std::vector<std::string>& argv) {
  Args args("dataset import", "dataset import DIR --output METADATA.json [--min_frames N] [--quick]",
            "A metadata.json with a row for every video and picture under DIR (recursive; hidden\n"
            "names and linked folders skipped), the same-named .txt or .caption beside each as its\n"
            "caption, and width/height/frames/fps/duration probed. Problems (unreadable, too short,\n"
            "no caption) go to stderr. Written atomically; a previous file is kept as .bak.\n"
            "Exit 0 when the metadata.json was written.");
  args.positional("DIR", "the folder of clips");
  args.value("output", "METADATA.json", "where to write (file_path values are relative to its folder)");
  args.value("min_frames", "N", "leave out videos with fewer frames (e.g. the run's video_sample_n_frames)",
             int_range(0, 1000000));
  args.flag("quick", "trust the containers' frame counts instead of reading every packet");
  if (!args.parse(argv)) return 0;
  require_video("dataset import");
  if (!args.has("output")) throw UsageError("dataset import: --output METADATA.json is required");
  dataset::ImportOptions opts;
  opts.root = args.pos(0);
  opts.metadata_path = args.str("output");
  opts.min_frames = args.integer("min_frames", 0);
  if (opts.min_frames < 0) throw UsageError("--min_frames must be >= 0, got " + std::to_string(opts.min_frames));
  opts.count_frames = !args.boolean("quick");
  if (fs::is_dir(opts.metadata_path)) throw UsageError("--output " + opts.metadata_path + " is a folder");

  dataset::ImportResult result;
  {
    std::optional<runtime::ProgressBar> bar;  // made once the number of files is known
    result = dataset::import_folder(opts, [&](size_t done, size_t total) {
      if (!bar) bar.emplace("import", total);
      bar->update(done);
      return !runtime::cancel_requested();
    });
  }
  for (const auto& p : result.problems)
    std::fprintf(stderr, "%s: %s%s\n", io::printable(p.file, 4096).c_str(), io::printable(p.message, 4096).c_str(),
                 p.excluded ? " (left out)" : "");
  if (result.rows.empty())
    throw Error(opts.root + ": no usable video or picture found (" + std::to_string(result.media_files) +
                " media files)");
  dataset::write_metadata(opts.metadata_path, result.rows);
  size_t left_out = 0;
  for (const auto& p : result.problems) left_out += p.excluded;
  std::printf("wrote %s: %zu rows (%zu media files, %zu left out, %zu problems)\n", opts.metadata_path.c_str(),
              result.rows.size(), result.media_files, left_out, result.problems.size());
  return 0;
}

}  // namespace ws::cli
