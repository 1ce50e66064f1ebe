// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine dataset trim`: a row's in and out points, written as its `trim` [first, end)
// (the frames training uses; the file itself is never cut). The studio's player sets the same key.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/verbs/dataset_verbs.h"
#include "core/error.h"
#include "dataset/metadata.h"
#include "dataset/row_check.h"

namespace ws::cli {

int run_dataset_trim(const std::vector<std::string>& argv) {
  Args args("dataset trim", "dataset trim METADATA.json (--row N | --file PATH) (--in FIRST --out END | --clear)",
            "Sets a row's in and out points: training takes its clips from frames [FIRST, END) of the\n"
            "row's file. --clear takes them away. The metadata.json is replaced atomically, the\n"
            "previous one kept as .bak; the video is not touched.");
  args.positional("METADATA.json", "the dataset");
  args.value("row", "N", "the row, counted from 0", int_range(0, 1e9));
  args.value("file", "PATH", "the row whose file_path is PATH (as written in the metadata)");
  args.value("in", "FIRST", "first frame used", int_range(0, 1e9));
  args.value("out", "END", "one past the last frame used", int_range(1, 1e9));
  args.flag("clear", "remove the row's trim");
  args.value("train_data_dir", "DIR", "folder file_path is relative to (default: the metadata.json's folder)");
  if (!args.parse(argv)) return 0;
  if (args.has("row") == args.has("file")) throw UsageError("name the row with --row N or --file PATH (one of them)");
  const bool clear = args.boolean("clear");
  if (clear == (args.has("in") || args.has("out")) || (!clear && !(args.has("in") && args.has("out"))))
    throw UsageError("give --in FIRST and --out END, or --clear");
  dataset::Metadata meta = dataset::read_metadata(args.pos(0), args.str("train_data_dir"));
  size_t index = meta.rows.size();
  if (args.has("row")) {
    index = static_cast<size_t>(args.integer("row", 0));
    if (index >= meta.rows.size())
      throw Error(args.pos(0) + ": no row " + std::to_string(index) + " (it has " + std::to_string(meta.rows.size()) +
                  ")");
  } else {
    for (size_t i = 0; i < meta.rows.size() && index == meta.rows.size(); ++i)
      if (meta.rows[i].file_path == args.str("file")) index = i;
    if (index == meta.rows.size()) throw Error(args.pos(0) + ": no row with file_path " + args.str("file"));
  }
  dataset::MetaRow& row = meta.rows[index];
  if (clear) {
    row.trim.reset();
  } else {
    const int64_t first = args.integer("in", 0), end = args.integer("out", 1);
    if (first >= end) throw UsageError("--in must be before --out (frames [in, out))");
    if (row.is_image()) throw Error(row.file_path + ": a picture has no frames to trim");
    row.trim = std::make_pair(first, end);
    // The file decides how far a trim may go: checked as training will check it.
    const dataset::RowReport r = dataset::check_row(meta, index);
    for (const auto& p : r.problems)
      if (p.find("trim") != std::string::npos || !r.readable) throw Error(row.file_path + ": " + p);
  }
  dataset::write_metadata(meta.path, meta.rows);
  if (clear) std::printf("row %zu (%s): trim cleared\n", index, row.file_path.c_str());
  else
    std::printf("row %zu (%s): frames [%lld, %lld)\n", index, row.file_path.c_str(),
                static_cast<long long>(row.trim->first), static_cast<long long>(row.trim->second));
  return 0;
}

}  // namespace ws::cli
