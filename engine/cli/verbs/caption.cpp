// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine caption`: model captions for the rows of a metadata.json, as suggestions
// (`text_suggested`) a person accepts or rejects; what made each one goes into
// metadata.captions.json (docs/design/captioning.md §7). The backend is Qwen2.5-VL in the engine
// (caption_local.h) or a local OpenAI-compatible server (frames sent as JPEG); frames are sampled evenly.
// Events on stdout: a `caption` per row, `progress`, then `finished`. SIGTERM or a `cancel` line
// stops after the rows in flight (exit 130); a re-run continues with the rows not yet suggested.
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include "caption/openai_chat.h"
#include "cli/verbs/caption_local.h"
#include "cli/args.h"
#include "cli/device_option.h"
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

// The row's sampled frames, the longest side at most `size`, even sides, and the seconds between
// two of them (0 for an image). A trimmed row is captioned from the frames it trains on.
std::vector<video::RgbFrame> row_frames(const std::string& path, const dataset::MetaRow& row, const FrameOptions& o,
                                        double* seconds_between) {
  std::vector<video::RgbFrame> frames;
  *seconds_between = 0;
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
    const double fps = reader.info().fps;
    if (frames.size() > 1)
      *seconds_between = (frames.back().time_s - frames.front().time_s) / static_cast<double>(frames.size() - 1);
    if (!(*seconds_between > 0) && fps > 0 && indices.size() > 1)
      *seconds_between =
          static_cast<double>(indices.back() - indices.front()) / fps / static_cast<double>(indices.size() - 1);
  }
  for (auto& f : frames) {
    const double scale = std::min(1.0, static_cast<double>(o.size) / std::max(f.width, f.height));
    const int w = std::max(2, static_cast<int>(f.width * scale) / 2 * 2),
              h = std::max(2, static_cast<int>(f.height * scale) / 2 * 2);
    if (w != f.width || h != f.height) f = video::resize_rgb(f, w, h);
  }
  return frames;
}

// A `job: caption` file (`wanstudio --batch`): its keys become the options, before the command
// line's own, which win; metadata, train_data_dir and model_path resolve against the file's folder.
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
    if ((key == "metadata" || key == "train_data_dir" || key == "model_path") && !text.empty() && text[0] != '/')
      text = fs::join(fs::dirname(fs::absolute(config)), text);
    out.push_back("--" + key + "=" + text);
  }
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

int run_caption(const std::vector<std::string>& argv_in) {
  const std::vector<std::string> argv = with_config(argv_in);
  Args a("caption",
         "caption --metadata META.json (--model_path QWEN_DIR | --endpoint http://127.0.0.1:PORT/v1 --model NAME) "
         "[options]",
         "Captions the rows of a dataset with a vision-language model and writes each caption as a\n"
         "suggestion beside the row (`text_suggested`), never over its `text`: the studio's Dataset page\n"
         "shows it beside the caption to accept, edit or reject. By default the rows without a caption\n"
         "and without a suggestion; --rows picks rows; --overwrite suggests again for rows that have one\n"
         "(or a caption). The backend is Qwen2.5-VL inside the engine (--model_path, a released folder) or\n"
         "any OpenAI-compatible chat server (vLLM, llama.cpp's server, Ollama, LM Studio). metadata.json is written "
         "atomically (the previous one kept as .bak) every\n"
         "few seconds and at the end; the model, prompt and settings of each suggestion go to\n"
         "META.captions.json. An interrupted job continues where it stopped when run again.");
  a.value("config", "JOB.yaml", "a `job: caption` file whose keys are these options (flags given here win)");
  a.value("metadata", "META.json", "the dataset (required)");
  a.value("train_data_dir", "DIR", "folder the rows' file paths are relative to (default: its folder)");
  a.value("model_path", "DIR",
          "Qwen2.5-VL in the engine: a released folder (config.json, *.safetensors, tokenizer.json)");
  a.value("device", "DEV", "--model_path: auto (a GPU when there is one), cpu, cuda or cuda:N");
  a.value("dtype", "TYPE",
          "--model_path: auto (bf16 on a GPU; on the CPU the weights' own, bf16 for a release), fp32 or bf16");
  a.value("top_p", "P", "--model_path with --temperature > 0: nucleus sampling (default 1)", real_range(0.01, 1));
  a.value("seed", "N", "--model_path with --temperature > 0: the sampling seed (default 0)", int_range(0, INT32_MAX));
  a.value("endpoint", "URL", "a server instead: its API root, e.g. http://127.0.0.1:8000/v1");
  a.value("model", "NAME", "with --endpoint: the model name the server knows");
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
  if (!a.has("metadata")) throw UsageError("--metadata is required");
  const bool local = a.has("model_path");
  if (local && a.has("endpoint")) throw UsageError("--model_path and --endpoint: choose one backend");
  if (!local)
    for (const char* k : {"endpoint", "model"})
      if (!a.has(k))
        throw UsageError(std::string("--") + k + " is required (or --model_path for the engine's own model)");

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
  // One model in the engine answers one row at a time (its threads already use the cores).
  const int concurrency = local ? 1 : static_cast<int>(a.integer("concurrency", 2));
  LocalCaptionOptions lo;
  if (local) {
    lo.model_path = a.str("model_path");
    lo.device = a.str("device", "auto");
    LocalCaptioner::check_folder(lo.model_path);  // these even when no row needs a caption
    parse_device_option(lo.device);
    lo.dtype = a.str("dtype", "auto");
    lo.max_new_tokens = chat.max_tokens;
    lo.temperature = chat.temperature;
    lo.top_p = a.real("top_p", 1.0);
    lo.seed = static_cast<uint64_t>(a.integer("seed", 0));
    chat.model = fs::basename(fs::absolute(lo.model_path));
    chat.endpoint.clear();
  }

  const std::string path = a.str("metadata");
  auto meta = dataset::read_metadata(path, a.str("train_data_dir"));
  const auto selected = a.has("rows") ? dataset::parse_row_list(a.str("rows")) : std::vector<size_t>{};
  const auto todo = dataset::rows_to_caption(meta, selected, a.boolean("overwrite"));
  ojson sidecar = dataset::read_caption_sidecar(path);
  if (!sidecar.contains("suggestions") || !sidecar["suggestions"].is_object()) sidecar["suggestions"] = ojson::object();

  runtime::install_cancel_handlers();
  std::unique_ptr<LocalCaptioner> captioner;
  if (local && !todo.empty()) captioner = std::make_unique<LocalCaptioner>(lo);  // load errors before any event
  auto& events = runtime::EventStream::global();
  runtime::Heartbeat heartbeat;
  runtime::ProgressReporter progress("caption");
  events.emit("caption_started", {{"metadata", path},
                                  {"rows", todo.size()},
                                  {"of", meta.rows.size()},
                                  {"backend", local ? "engine" : "server"},
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
      std::vector<video::RgbFrame> frames;
      double seconds_between = 0;
      try {
        if (row.file_path.empty()) throw Error("no file_path");
        frames = row_frames(meta.resolve(row), row, fo, &seconds_between);
      } catch (const Error& e) {  // this row is skipped, the others go on
        std::lock_guard<std::mutex> lock(mu);
        row_errors.push_back("row " + std::to_string(i) + " (" + row.file_path + "): " + e.what());
        ++finished_rows;
        continue;
      }
      const int64_t sent = static_cast<int64_t>(frames.size());
      const std::string sent_prompt = dataset::expand_caption_prompt(prompt, row.file_path, sent);
      std::string text;
      try {
        const auto going_on = [](const std::string&) { return !runtime::cancel_requested(); };
        if (captioner) {
          text = captioner->caption(sent_prompt, frames, seconds_between, going_on);
        } else {
          std::vector<std::string> images;
          for (const auto& f : frames) images.push_back(video::encode_jpeg(f, fo.quality));
          text = caption::chat_caption(chat, sent_prompt, images, going_on);
        }
      } catch (const Error& e) {  // the server or the model: every other row would fail the same way
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
        ojson stamp = {{"text_suggested", an.text}};
        if (captioner) {
          stamp["backend"] = "engine (Qwen2.5-VL)";
          stamp["model_path"] = fs::absolute(lo.model_path);
          stamp["device"] = captioner->device();
          stamp["dtype"] = captioner->dtype();
          if (lo.temperature > 0) {
            stamp["top_p"] = lo.top_p;
            stamp["seed"] = lo.seed;
          }
        } else {
          stamp["backend"] = "openai-compatible server";
          stamp["endpoint"] = stamp_endpoint;
        }
        stamp.update(ojson{{"model", stamp_model},
                           {"prompt", an.prompt},
                           {"frames", an.frames},
                           {"frame_size", fo.size},
                           {"max_new_tokens", chat.max_tokens},
                           {"temperature", chat.temperature},
                           {"time", runtime::unix_time()}});
        sidecar["suggestions"][file] = stamp;
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
    events.error(fatal, local ? "is --model_path a Qwen2.5-VL release, and does it fit the device?"
                              : "is the server running, and does it serve --model with images?");
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
