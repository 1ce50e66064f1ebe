// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine probe METADATA.json [--fix] [--train_data_dir DIR] [--json]`: checks every
// row of a VideoX-Fun metadata.json against its file and, with --fix, fills width/height
// (the displayed size) as VideoX-Fun's process_json_add_width_and_height.py does.
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "dataset/metadata.h"
#include "dataset/row_check.h"
#include "io/printable.h"
#include "cli/args.h"
#include "runtime/progress.h"
#include "cli/verb.h"

namespace {

using ws::dataset::RowReport;

std::string fmt_double(double v, const char* f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string ellipsize(const std::string& s, size_t n) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - (n - 3));
}

void print_table(const ws::dataset::Metadata& meta, const std::vector<RowReport>& reports) {
  size_t wfile = 4;
  // Paths and problems quote the user's file: control bytes are escaped, never sent to the terminal.
  using ws::io::printable;
  for (const auto& row : meta.rows)
    wfile = std::max(wfile, std::min<size_t>(printable(row.file_path, 4096).size(), 48));
  std::printf("%-4s  %-*s  %-5s  %-9s  %6s  %6s  %8s  %s\n", "row", static_cast<int>(wfile), "file", "type", "size",
              "frames", "fps", "duration", "problems");
  for (size_t i = 0; i < reports.size(); ++i) {
    const auto& r = reports[i];
    const auto& row = meta.rows[i];
    std::string size = r.readable ? std::to_string(r.width) + "x" + std::to_string(r.height) : "-";
    std::string frames = r.readable ? std::to_string(r.frames) : "-";
    std::string fps = r.readable && r.fps > 0 ? fmt_double(r.fps, "%.2f") : "-";
    std::string dur = r.readable && r.duration_s > 0 ? fmt_double(r.duration_s, "%.2fs") : "-";
    std::string problems;
    for (const auto& p : r.problems) problems += (problems.empty() ? "" : "; ") + p;
    std::printf("%-4zu  %-*s  %-5s  %-9s  %6s  %6s  %8s  %s\n", i, static_cast<int>(wfile),
                ellipsize(row.file_path.empty() ? "?" : printable(row.file_path, 4096), wfile).c_str(),
                row.type.c_str(), size.c_str(), frames.c_str(), fps.c_str(), dur.c_str(),
                problems.empty() ? "ok" : printable(problems, 4096).c_str());
  }
}

nlohmann::json to_json(const ws::dataset::Metadata& meta, const std::vector<RowReport>& reports) {
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < reports.size(); ++i) {
    const auto& r = reports[i];
    nlohmann::json j = {{"index", i},
                        {"file_path", meta.rows[i].file_path},
                        {"file", r.file},
                        {"type", meta.rows[i].type},
                        {"readable", r.readable},
                        {"problems", r.problems}};
    if (r.readable) {
      j["width"] = r.width;
      j["height"] = r.height;
      j["rotation"] = r.rotation;
      j["frames"] = r.frames;
      j["fps"] = r.fps;
      j["duration_s"] = r.duration_s;
      j["codec"] = r.codec;
    }
    rows.push_back(std::move(j));
  }
  return rows;
}

int run_probe(const std::vector<std::string>& argv) {
  ws::cli::Args args("probe", "probe METADATA.json [--fix] [--train_data_dir DIR] [--json]",
                     "Checks every row of a VideoX-Fun metadata.json: the file exists and decodes, and\n"
                     "width/height (the displayed size, after rotation metadata) agree with it. Reports\n"
                     "width, height, frames, fps and duration per row. With --fix, fills in or corrects\n"
                     "width/height and writes the file atomically, keeping the previous one as .bak.\n"
                     "Exit 1 when a row has a problem (with --fix: one that --fix cannot solve).");
  args.positional("METADATA.json", "the dataset's metadata.json");
  args.flag("fix", "fill/correct width and height from the files and write the metadata back");
  args.value("train_data_dir", "DIR", "folder file_path is relative to (default: the metadata.json's folder)");
  args.flag("json", "print one JSON object instead of the table");
  args.flag("quick", "read headers only: no packet scan (faster; frame counts may be estimates, truncation is missed)");
  if (!args.parse(argv)) return 0;
  if (!ws::dataset::video_support_built())
    throw ws::Error(
        "probe: video support is not built into this wanstudio-engine (configure with -DWANSTUDIO_VIDEO=ON)");

  const std::string path = args.pos(0);
  ws::dataset::Metadata meta = ws::dataset::read_metadata(path, args.str("train_data_dir"));
  ws::dataset::CheckOptions opts;
  opts.count_frames = !args.boolean("quick");
  std::vector<RowReport> reports;
  {
    ws::runtime::ProgressBar bar("probe", meta.rows.size());
    reports = ws::dataset::check_rows(meta, opts, [&](size_t done, size_t) { bar.update(done); });
  }

  size_t fixed = 0;
  bool wrote = false;
  if (args.boolean("fix")) {
    for (size_t i = 0; i < reports.size(); ++i) {
      auto& row = meta.rows[i];
      auto& r = reports[i];
      if (!r.readable || !row.raw.is_object()) continue;
      bool size_problem = false;
      for (const auto& p : row.problems)
        if (p.find("`width`") != std::string::npos || p.find("`height`") != std::string::npos) size_problem = true;
      if (row.width == r.width && row.height == r.height && !size_problem) continue;
      row.width = r.width;
      row.height = r.height;
      ++fixed;
      // The size problems are solved now; the others stay.
      r.problems.erase(std::remove_if(r.problems.begin(), r.problems.end(),
                                      [](const std::string& p) {
                                        return p.rfind("metadata says ", 0) == 0 ||
                                               p.find("`width`") != std::string::npos ||
                                               p.find("`height`") != std::string::npos;
                                      }),
                       r.problems.end());
    }
    if (fixed > 0) {
      ws::dataset::write_metadata(path, meta.rows);
      wrote = true;
    }
  }

  size_t bad = 0;
  for (const auto& r : reports) bad += r.problems.empty() ? 0 : 1;
  if (args.boolean("json")) {
    nlohmann::json out = {
        {"metadata", path}, {"data_dir", meta.data_dir}, {"rows", to_json(meta, reports)}, {"rows_with_problems", bad},
        {"fixed", fixed},   {"written", wrote}};
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    print_table(meta, reports);
    std::printf("\n%zu row%s, %zu with problems", meta.rows.size(), meta.rows.size() == 1 ? "" : "s", bad);
    if (args.boolean("fix"))
      std::printf("; width/height filled in %zu row%s%s", fixed, fixed == 1 ? "" : "s",
                  wrote ? (" (written; previous file kept as " + path + ".bak)").c_str() : " (nothing to write)");
    std::printf("\n");
  }
  if (meta.rows.empty()) {
    std::fprintf(stderr, "error: %s: has no rows\n", path.c_str());
    return 1;
  }
  return bad > 0 ? 1 : 0;
}

WS_VERB("probe", "check a metadata.json against its files; --fix fills width/height", &run_probe);

}  // namespace
