// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine demo-data OUT_DIR [--seed N]`: the small synthetic dataset the demo trains on.
#include <cstdio>

#include "core/error.h"
#include "data/demo_data.h"
#include "dataset/row_check.h"
#include "cli/args.h"
#include "runtime/progress.h"
#include "cli/verb.h"

namespace {
using namespace ws::cli;  // the option rules (int_range, ...)

int run_demo_data(const std::vector<std::string>& argv) {
  ws::cli::Args args("demo-data", "demo-data OUT_DIR [--seed N]",
                     "Writes a small synthetic dataset (a few MB): procedurally generated clips of moving\n"
                     "shapes over gradients and scrolling noise, some with a camera pan, at 16:9, 9:16, 1:1,\n"
                     "4:3, 3:4 and 2.35:1 and 17..65 frames (H.264 MP4, 16 fps), two PNG image rows, and\n"
                     "OUT_DIR/metadata.json with captions and width/height. The same seed gives the same\n"
                     "dataset. An existing metadata.json is kept as metadata.json.bak.");
  args.positional("OUT_DIR", "folder to write (created if missing)");
  args.value("seed", "N", "seed for the generated content (default 0)", int_range(0, 9007199254740991.0));
  if (!args.parse(argv)) return 0;
  if (!ws::dataset::video_support_built())
    throw ws::Error(
        "demo-data: video support is not built into this wanstudio-engine (configure with -DWANSTUDIO_VIDEO=ON)");
  int64_t seed = args.integer("seed", 0);
  if (seed < 0) throw ws::UsageError("--seed must be >= 0");
  ws::data::DemoDataSummary sum;
  {
    ws::runtime::ProgressBar bar("demo-data", 10);
    sum = ws::data::write_demo_dataset(args.pos(0), static_cast<uint64_t>(seed),
                                       [&](int done, int) { bar.update(static_cast<size_t>(done)); });
  }
  std::printf("wrote %d videos and %d images (%.1f MB) and %s\n", sum.videos, sum.images,
              static_cast<double>(sum.bytes) / 1e6, sum.metadata_path.c_str());
  return 0;
}

WS_VERB("demo-data", "write the small synthetic demo dataset (videos, images, metadata.json)", &run_demo_data);

}  // namespace
