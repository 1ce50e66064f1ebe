// SPDX-License-Identifier: Apache-2.0
// The small synthetic dataset the demo trains on (`wanstudio-engine demo-data`, and
// `demo_data: auto` in run configs): procedural clips at several aspect ratios and lengths,
// two PNG image rows, captions, and a metadata.json with width/height filled.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace ws::data {

struct DemoDataSummary {
  std::string metadata_path;
  int videos = 0, images = 0;
  uint64_t bytes = 0;
};

// Writes OUT_DIR/videos/*.mp4, OUT_DIR/images/*.png and OUT_DIR/metadata.json (an existing
// one is kept as .bak). Same seed, same dataset. Needs video support.
// `progress(done, total)` after each file (may be empty). `metadata_path` puts the metadata
// elsewhere (e.g. a run config's train_data_meta); its file_path values stay relative to
// OUT_DIR, i.e. they resolve when train_data_dir = OUT_DIR.
DemoDataSummary write_demo_dataset(const std::string& out_dir, uint64_t seed = 0,
                                   const std::function<void(int, int)>& progress = {},
                                   const std::string& metadata_path = {});

}  // namespace ws::data
