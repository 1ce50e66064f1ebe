// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine caption`: model captions for the rows of a metadata.json, as suggestions
// (`text_suggested`) a person accepts or rejects; what made each one goes into
// metadata.captions.json (docs/design/captioning.md §7). The backend is a local
// OpenAI-compatible server; frames are sampled evenly and sent as JPEG.
// Events on stdout: a `caption` per row, `progress`, then `finished`. SIGTERM or a `cancel` line
// stops after the rows in flight (exit 130); a re-run continues with the rows not yet suggested.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "caption/openai_chat.h"
#include "cli/args.h"
#include "cli/verb.h"
#include "core/error.h"
#include "core/fs.h"
#include "dataset/caption_suggestions.h"
#include "dataset/metadata.h"
#include "io/model_yaml.h"
#include "io/printable.h"
#include "runtime/cancel.h"
#include "runtime/events.h"
#include "runtime/progress.h"
#include "video/video_decode.h"
#include "video/video_jpeg.h"
#include "video/video_resize.h"

namespace ws::cli {
namespace {

using ojson = nlohmann::ordered_json;

struct FrameOptions {
  int64_t frames = 4;
  int64_t size = 512;  // longest side sent
  int quality = 4;     // JPEG qscale, 2 (best) .. 31
};

// The row's sampled frames as JPEG files, the longest side at most `size`, even sides. A trimmed
// row is captioned from the frames it trains on.
std::vector<std::string> row_frames(const std::string& path, const dataset::MetaRow& row, const FrameOptions& o,
                                    int64_t* sent) {
  std::vector<video::RgbFrame> frames;
  if (row.is_image()) {
    frames = video::read_video_frames(path, {0});
  } else {
    video::VideoReader reader(path);
    const int64_t total = reader.frame_count();
    const int64_t first = row.trim ? std::min(row.trim->first, total) : 0;
    const int64_t end = row.trim ? std::min(row.trim->second, total) : total;
    auto indices = dataset::caption_frame_indices(end - first, o.frames);
    if (indices.empty()) throw Error("no frames" + std::string(row.trim ? " in its trim" : ""));
    for (auto& i : indices) i += first;
    frames = reader.read(indices);
  }
  std::vector<std::string> out;
  for (const auto& f : frames) {
    const double scale = std::min(1.0, static_cast<double>(o.size) / std::max(f.width, f.height));
    const int w = std::max(2, static_cast<int>(f.width * scale) / 2 * 2),
              h = std::max(2, static_cast<int>(f.height * scale) / 2 * 2);
    out.push_back(video::encode_jpeg(video::resize_rgb(f, w, h), o.quality));
  }
  *sent = static_cast<int64_t>(out.size());
  return out;
}

// A `job: caption` file (`wanstudio --batch`): its keys become the options, before the command
// line's own, which win; metadata and train_data_dir resolve against the file's folder.
std::vector<std::string> with_config(const std::vector<std::string>& argv) {
  std::vector<std::string> rest;
  std::string config;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--config" && i + 1 < argv.size()) config = argv[++i];
    else if (argv[i].rfind("--config=", 0) == 0) config = argv[i].substr(9);
    else rest.push_back(argv[i]);
  }
  if (config.empty()) return argv;
  const nlohmann::json y = io::yaml_text_to_json(fs::read_file(config), config);
  if (!y.is_object()) throw Error(config + ": not a map of options");
  if (y.value("job", std::string()) != "caption")
    throw Error(config + ": `job: caption` expected, got " + (y.contains("job") ? y["job"].dump() : "no job"));
  std::vector<std::string> out;
  for (const auto& [key, value] : y.items()) {
    if (key == "job" || value.is_null()) continue;
    if (value.is_object() || value.is_array()) throw Error(config + ": " + key + " must be a single value");
    std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    if ((key == "metadata" || key == "train_data_dir") && !text.empty() && text[0] != '/')
      text = fs::join(fs::dirname(fs::absolute(config)), text);
    out.push_back("--" + key + "=" + text);
  }
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

int run_caption(const std::vector<std::string>& argv_in) {
  const std::vector<std::string> argv = with_config(argv_in);
  Args a("caption", "caption --metadata META.json --endpoint http://127.0.0.1:PORT/v1 --model NAME [options]",
         "Captions the rows of a dataset with a vision-language model and writes each caption as a\n"
         "suggestion beside the row (`text_suggested`), never over its `text`: the studio's Dataset page\n"
         "shows it beside the caption to accept, edit or reject. By default the rows without a caption\n"
         "and without a suggestion; --rows picks rows; --overwrite suggests again for rows that have one\n"
         "(or a caption). The backend is any OpenAI-compatible chat server (vLLM, llama.cpp's server,\n"
         "Ollama, LM Studio). metadata.json is written atomically (the previous one kept as .bak) every\n"
         "few seconds and at the end; the model, prompt and settings of each suggestion go to\n"
         "META.captions.json. An interrupted job continues where it stopped when run again.");
  a.value("config", "JOB.yaml", "a `job: caption` file whose keys are these options (flags given here win)");
  a.value("metadata", "META.json", "the dataset (required)");
  a.value("train_data_dir", "DIR", "folder the rows' file paths are relative to (default: its folder)");
  a.value("endpoint", "URL", "the server's API root, e.g. http://127.0.0.1:8000/v1 (required)");
  a.value("model", "NAME", "the model name the server knows (required)");
  a.value("api_key", "KEY", "sent as a bearer token (default: $OPENAI_API_KEY, else none)");
  a.value("rows", "LIST", "rows to caption, 0-based: 0,3,5-9 (default: every row without a caption)");
  a.flag("overwrite", "also rows that already have a suggestion (a caption is never replaced)");
  a.value("frames", "N", "frames sampled evenly from each clip (default 4)", int_range(1, 64));
  a.value("frame_size", "PX", "longest side of each frame sent (default 512)", int_range(32, 4096));
  a.value("prompt", "TEXT", "the instruction; {frames} and {file_name} are filled in (default: Wan-style)");
  a.value("max_new_tokens", "N", "longest answer (default 512)", int_range(1, 32768));
  a.value("temperature", "T", "0 is greedy, deterministic (default 0)", real_range(0, 2));
  a.flag("stream", "ask the server to stream its answer");
  a.value("concurrency", "N", "rows in flight at once (default 2)", int_range(1, 64));
  a.value("timeout", "S", "longest silence of the server, seconds (default 120)", real_range(0.1, 3600));
  a.value("retries", "N", "further tries after a connection error, a timeout, HTTP 429 or 5xx (default 2)",
          int_range(0, 100));
  if (!a.parse(argv)) return 0;
  for (const char* k : {"metadata", "endpoint", "model"})
    if (!a.has(k)) throw UsageError(std::string("--") + k + " is required");

  caption::ChatOptions chat;
  chat.endpoint = a.str("endpoint");
  chat.model = a.str("model");
  const char* env_key = std::getenv("OPENAI_API_KEY");
  chat.api_key = a.has("api_key") ? a.str("api_key") : (env_key ? env_key : "");
  chat.max_tokens = static_cast<int>(a.integer("max_new_tokens", 512));
  chat.temperature = a.real("temperature", 0.0);
  chat.stream = a.boolean("stream");
  chat.timeout_s = a.real("timeout", 120.0);
  chat.retries = static_cast<int>(a.integer("retries", 2));
  FrameOptions fo;
  fo.frames = a.integer("frames", 4);
  fo.size = a.integer("frame_size", 512);
  const std::string prompt = a.has("prompt") ? a.str("prompt") : std::string(dataset::kDefaultCaptionPrompt);
  if (prompt.find_first_not_of(" \t\r\n") == std::string::npos) throw UsageError("--prompt is empty");
  const int concurrency = static_cast<int>(a.integer("concurrency", 2));

  const std::string path = a.str("metadata");
  auto meta = dataset::read_metadata(path, a.str("train_data_dir"));
  const auto selected = a.has("rows") ? dataset::parse_row_list(a.str("rows")) : std::vector<size_t>{};
  const auto todo = dataset::rows_to_caption(meta, selected, a.boolean("overwrite"));
  ojson sidecar = dataset::read_caption_sidecar(path);
  if (!sidecar.contains("suggestions") || !sidecar["suggestions"].is_object()) sidecar["suggestions"] = ojson::object();

  runtime::install_cancel_handlers();
  auto& events = runtime::EventStream::global();
  runtime::Heartbeat heartbeat;
  runtime::ProgressReporter progress("caption");
  events.emit("caption_started", {{"metadata", path},
                                  {"rows", todo.size()},
                                  {"of", meta.rows.size()},
                                  {"endpoint", chat.endpoint},
                                  {"model", chat.model}});

  // Workers take rows in order; the main thread writes what is done every few seconds.
  std::mutex mu;
  struct Answer {
    size_t row;
    std::string text, prompt;  // the caption, and the prompt as sent
    int64_t frames;
  };
  std::vector<Answer> done_rows;  // answered, not yet written
  std::vector<std::string> row_errors;
  std::string fatal;
  std::atomic<size_t> next{0};
  std::atomic<int64_t> finished_rows{0};
  auto worker = [&] {
    for (size_t k = next++; k < todo.size(); k = next++) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!fatal.empty()) return;
      }
      if (runtime::cancel_requested()) return;
      const size_t i = todo[k];
      const auto& row = meta.rows[i];
      std::vector<std::string> images;
      int64_t sent = 0;
      try {
        if (row.file_path.empty()) throw Error("no file_path");
        images = row_frames(meta.resolve(row), row, fo, &sent);
      } catch (const Error& e) {  // this row is skipped, the others go on
        std::lock_guard<std::mutex> lock(mu);
        row_errors.push_back("row " + std::to_string(i) + " (" + row.file_path + "): " + e.what());
        ++finished_rows;
        continue;
      }
      const std::string sent_prompt = dataset::expand_caption_prompt(prompt, row.file_path, sent);
      std::string text;
      try {
        text = caption::chat_caption(chat, sent_prompt, images,
                                     [](const std::string&) { return !runtime::cancel_requested(); });
      } catch (const Error& e) {  // the server: every other row would fail the same way
        std::lock_guard<std::mutex> lock(mu);
        if (fatal.empty()) fatal = e.what();
        return;
      }
      if (runtime::cancel_requested()) return;  // a cut answer is not kept
      const auto first = text.find_first_not_of(" \t\r\n"), last = text.find_last_not_of(" \t\r\n");
      std::lock_guard<std::mutex> lock(mu);
      ++finished_rows;
      if (first == std::string::npos) {
        row_errors.push_back("row " + std::to_string(i) + " (" + row.file_path + "): the server answered with no text");
        continue;
      }
      const std::string clean = text.substr(first, last - first + 1);
      events.emit("caption", {{"row", i}, {"file_path", row.file_path}, {"text_suggested", clean}, {"frames", sent}});
      done_rows.push_back({i, clean, sent_prompt, sent});
    }
  };

  const std::string stamp_model = chat.model, stamp_endpoint = chat.endpoint;
  auto flush = [&](bool final_write) {
    std::vector<Answer> batch;
    {
      std::lock_guard<std::mutex> lock(mu);
      batch.swap(done_rows);
    }
    if (batch.empty()) return;
    try {
      // Into the file as it is now: the studio or a person may have edited other rows meanwhile.
      auto current = dataset::read_metadata(path, a.str("train_data_dir"));
      for (const Answer& an : batch) {
        const std::string& file = meta.rows[an.row].file_path;
        dataset::MetaRow* row = nullptr;
        if (an.row < current.rows.size() && current.rows[an.row].file_path == file) row = &current.rows[an.row];
        for (size_t k = 0; !row && k < current.rows.size(); ++k)
          if (current.rows[k].file_path == file) row = &current.rows[k];
        sidecar["suggestions"][file] = {{"text_suggested", an.text},
                                        {"backend", "openai-compatible server"},
                                        {"endpoint", stamp_endpoint},
                                        {"model", stamp_model},
                                        {"prompt", an.prompt},
                                        {"frames", an.frames},
                                        {"frame_size", fo.size},
                                        {"max_new_tokens", chat.max_tokens},
                                        {"temperature", chat.temperature},
                                        {"time", runtime::unix_time()}};
        if (row && row->raw.is_object()) row->raw[dataset::kSuggestedKey] = an.text;  // else gone: sidecar only
      }
      dataset::write_caption_suggestions(path, current.rows, sidecar);
    } catch (const Error& e) {  // e.g. half-written by someone else: try again at the next write
      if (final_write) throw;
      std::lock_guard<std::mutex> lock(mu);
      done_rows.insert(done_rows.begin(), batch.begin(), batch.end());
      events.log("warning", std::string("caption: ") + e.what() + " (trying again)");
    }
  };

  std::atomic<int> active{std::min<int>(concurrency, static_cast<int>(std::max<size_t>(1, todo.size())))};
  std::vector<std::thread> pool;
  for (int t = active.load(); t > 0; --t)
    pool.emplace_back([&] {
      worker();
      --active;
    });
  auto last_write = std::chrono::steady_clock::now();
  int64_t reported = -1;
  while (active.load() > 0) {
    const int64_t n = finished_rows.load();
    if (n != reported) progress(reported = n, static_cast<int64_t>(todo.size()));
    if (std::chrono::steady_clock::now() - last_write > std::chrono::seconds(5)) {
      flush(false);
      last_write = std::chrono::steady_clock::now();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (auto& th : pool) th.join();
  flush(true);
  const int64_t n = finished_rows.load();
  progress(n, static_cast<int64_t>(todo.size()));
  for (const auto& e : row_errors) std::fprintf(stderr, "%s (not captioned)\n", io::printable(e, 4096).c_str());
  if (!fatal.empty()) {
    events.error(fatal, "is the server running, and does it serve --model with images?");
    events.finished("failed", n);
    throw Error("caption: " + fatal);
  }
  const bool cancelled = runtime::cancel_requested() && n < static_cast<int64_t>(todo.size());
  events.finished(cancelled ? "cancelled" : "completed", n);
  std::fprintf(stderr, "%lld of %zu rows captioned into %s (%s)\n",
               static_cast<long long>(n - static_cast<int64_t>(row_errors.size())), todo.size(), path.c_str(),
               dataset::caption_sidecar_path(path).c_str());
  if (cancelled) return 130;
  return row_errors.empty() ? 0 : 1;
}

}  // namespace

WS_VERB("caption", "caption a dataset's rows with a vision-language model (suggestions to review)", &run_caption);

}  // namespace ws::cli
