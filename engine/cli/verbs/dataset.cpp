// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine dataset SUBCOMMAND ...`: making and curating a metadata.json without the
// studio (servers, scripts): import, split, dedupe, export-captions.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/verb.h"
#include "cli/verbs/dataset_verbs.h"
#include "core/error.h"
#include "dataset/row_check.h"
#include "dataset/sidecar_caption.h"
#include "cli/args.h"
#include "io/printable.h"
#include "runtime/cancel.h"

namespace ws::cli {

void require_video(const char* what) {
  if (!dataset::video_support_built())
    throw Error(std::string(what) +
                ": video support is not built into this wanstudio-engine (configure with -DWANSTUDIO_VIDEO=ON)");
}

int run_dataset_export_captions(const std::vector<std::string>& argv) {
  Args args("dataset export-captions", "dataset export-captions METADATA.json [--train_data_dir DIR]",
            "Writes each row's caption as a .txt beside its file (the layout musubi-tuner,\n"
            "ai-toolkit and diffusion-pipe read). Each file is written atomically.");
  args.positional("METADATA.json", "the dataset");
  args.value("train_data_dir", "DIR", "folder file_path is relative to (default: the metadata.json's folder)");
  if (!args.parse(argv)) return 0;
  const size_t written =
      dataset::write_sidecar_captions(dataset::read_metadata(args.pos(0), args.str("train_data_dir")));
  std::printf("wrote %zu caption files\n", written);
  return 0;
}

namespace {

int run_dataset(const std::vector<std::string>& argv) {
  const std::string usage =
      "usage: wanstudio-engine dataset {import|split|dedupe|score|trim|export-captions} ... (--help after one for its "
      "options)";
  if (argv.empty() || argv[0] == "--help" || argv[0] == "-h") {
    std::printf("%s\n", usage.c_str());
    return argv.empty() ? 1 : 0;
  }
  if (argv[0] == "--print-schema") {
    print_subverbs_schema("dataset", {"import", "split", "dedupe", "score", "trim", "export-captions"});
    return 0;
  }
  const std::vector<std::string> rest(argv.begin() + 1, argv.end());
  int (*sub)(const std::vector<std::string>&) = nullptr;
  if (argv[0] == "export-captions") sub = run_dataset_export_captions;
  if (argv[0] == "import" || argv[0] == "split" || argv[0] == "dedupe" || argv[0] == "score" || argv[0] == "trim") {
    require_video(("dataset " + argv[0]).c_str());
#ifdef WANSTUDIO_HAVE_VIDEO  // these decode video; without FFmpeg they are not built
    sub = argv[0] == "trim"     ? run_dataset_trim
          : argv[0] == "import" ? run_dataset_import
          : argv[0] == "split"  ? run_dataset_split
          : argv[0] == "dedupe" ? run_dataset_dedupe
                                : run_dataset_score;
#endif
  }
  if (sub) {
    // SIGINT/SIGTERM stop a long scan between two frames or files; what was written stays.
    runtime::install_cancel_handlers(false);
    try {
      return sub(rest);
    } catch (const Error&) {
      if (!runtime::cancel_requested()) throw;
      std::fprintf(stderr, "dataset %s: cancelled\n", argv[0].c_str());
      return 130;
    }
  }
  throw UsageError("dataset: unknown subcommand '" + io::printable(argv[0], 64) + "'; " + usage.substr(7));
}

}  // namespace

}  // namespace ws::cli

WS_VERB("dataset", "make and curate a metadata.json: import a folder, split scenes, find duplicates, score",
        &ws::cli::run_dataset);
