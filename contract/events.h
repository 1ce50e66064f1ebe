// SPDX-License-Identifier: Apache-2.0
// The event stream [contract, docs/design/architecture.md §3]: one JSON object per line, each with
// "type" and "time" (unix seconds). The worker writes every line with format_event_line() and
// the studio (or a user's script) reads them with parse_event_line(); the typed events below are
// the fields the studio relies on. Unknown fields are kept and never required, so a new field
// breaks no reader.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace ws::contract {

using json = nlohmann::json;

namespace event_type {
inline constexpr const char* kStarted = "started";
inline constexpr const char* kStep = "step";
inline constexpr const char* kEval = "eval";
inline constexpr const char* kValidation = "validation";
inline constexpr const char* kCheckpoint = "checkpoint";
inline constexpr const char* kHeartbeat = "heartbeat";
inline constexpr const char* kLog = "log";
inline constexpr const char* kError = "error";
inline constexpr const char* kFinished = "finished";
inline constexpr const char* kProgress = "progress";
inline constexpr const char* kSampleStep = "sample_step";
inline constexpr const char* kSample = "sample";
}  // namespace event_type

// One line: type, time, and every field (type and time included).
struct EventLine {
  std::string type;
  double time = 0;
  json fields = json::object();
};

// `{"type": type, "time": time, ...fields}` and a newline. Non-finite numbers become null.
std::string format_event_line(const std::string& type, double time, const json& fields);
// Blank, torn or foreign lines (not an object, no string "type") give nullopt: skip them.
std::optional<EventLine> parse_event_line(std::string_view line);

// A number field, or `fallback` when missing or not a number (null included).
double number_field(const json& fields, const char* key, double fallback);
int64_t integer_field(const json& fields, const char* key, int64_t fallback);
std::string string_field(const json& fields, const char* key);

// A run (or a resume of it) begins. `extra` holds the job's own fields (num_train_epochs,
// boundary, parameters, ...), written beside the common ones.
struct StartedEvent {
  static constexpr const char* kType = event_type::kStarted;
  std::string job;
  json config = json::object();  // every resolved option
  int world_size = 1;
  int64_t resume_step = 0;
  int64_t max_train_steps = 0;
  json extra = json::object();
  json to_json() const;
  static StartedEvent from_json(const json& fields);
};

// One optimizer step. Numbers the worker did not send read as NaN.
struct StepEvent {
  static constexpr const char* kType = event_type::kStep;
  int64_t step = 0;
  std::string expert;       // "upsampler" | "high" | "low" | "vae"
  int64_t expert_step = 0;  // that expert's own step count (= step with one model)
  double loss = 0, lr = 0, grad_norm = 0;
  std::optional<double> grad_clip;  // the clipping threshold, when the job clips
  double samples_per_s = 0, eta_s = 0;
  json extra = json::object();  // epoch, sizes, clips, cache counters, ...
  json to_json() const;
  static StepEvent from_json(const json& fields);
};

struct CheckpointEvent {
  static constexpr const char* kType = event_type::kCheckpoint;
  int64_t step = 0;
  std::string path;  // run-relative: checkpoint-<step>
  json to_json() const;
  static CheckpointEvent from_json(const json& fields);
};

// An upsampler validation video: the three files (run-relative) and its scores.
struct ValidationEvent {
  static constexpr const char* kType = event_type::kValidation;
  int64_t step = 0, index = 0;
  std::string source, lowres, upsampled, highres;
  double psnr = 0, psnr_lowres = 0, latent_mse = 0;
  // Against the source clip (NaN when absent, as in runs made before they existed): the
  // ceiling is the high-res decode's own PSNR, which no upsampled latent can be expected to beat.
  double psnr_ceiling = std::numeric_limits<double>::quiet_NaN();
  double psnr_source = std::numeric_limits<double>::quiet_NaN();
  double psnr_lowres_source = std::numeric_limits<double>::quiet_NaN();
  int64_t frames = 0, size = 0, size_lr = 0;
  json to_json() const;
  static ValidationEvent from_json(const json& fields);
};

// The experts' held-out loss: mean over timesteps, per expert, per timestep.
struct EvalEvent {
  static constexpr const char* kType = event_type::kEval;
  int64_t step = 0;
  std::string expert = "all";
  double loss = 0;
  std::optional<double> loss_high, loss_low;
  json loss_by_t = json::object();  // "t" -> loss
  int64_t samples = 0;
  json to_json() const;
  static EvalEvent from_json(const json& fields);
};

struct HeartbeatEvent {
  static constexpr const char* kType = event_type::kHeartbeat;
  int64_t rss_bytes = 0;
  std::optional<int64_t> gpu_mem_bytes;
  json to_json() const;
  static HeartbeatEvent from_json(const json& fields);
};

struct LogEvent {
  static constexpr const char* kType = event_type::kLog;
  std::string level;  // "debug" | "info" | "warning" | "error"
  std::string message;
  json to_json() const;
  static LogEvent from_json(const json& fields);
};

// `supervisor`: written by the process that watched the worker end without `finished`.
struct ErrorEvent {
  static constexpr const char* kType = event_type::kError;
  std::string message, hint;
  bool supervisor = false;
  json to_json() const;
  static ErrorEvent from_json(const json& fields);
};

struct FinishedEvent {
  static constexpr const char* kType = event_type::kFinished;
  std::string status;  // "completed" | "cancelled" | "failed"
  int64_t step = 0;
  bool supervisor = false;
  json to_json() const;
  static FinishedEvent from_json(const json& fields);
};

// Progress of a job that is not a training run (`encode-text`): `done` of `total` items.
struct ProgressEvent {
  static constexpr const char* kType = event_type::kProgress;
  std::string task;  // "encode-text"
  int64_t done = 0, total = 0;
  double per_s = 0, eta_s = 0;  // items per second so far, seconds left
  json to_json() const;
  static ProgressEvent from_json(const json& fields);
};

// `sample`: one denoising step of video `index` (docs/design/sampling.md §12.1).
struct SampleStepEvent {
  static constexpr const char* kType = event_type::kSampleStep;
  int64_t index = 0, step = 0, of = 0;  // step is 1-based
  std::string expert;                   // "high" | "low" | "model"
  int64_t t = 0;                        // the timestep the model saw
  double eta_s = 0;                     // seconds left for this video
  json to_json() const;
  static SampleStepEvent from_json(const json& fields);
};

// `sample`: video `index` is written (`video` empty when no VAE matched the latents).
struct SampleEvent {
  static constexpr const char* kType = event_type::kSample;
  int64_t index = 0;
  std::string latents, video, sidecar;
  double seconds = 0;
  json to_json() const;
  static SampleEvent from_json(const json& fields);
};

// The line of a typed event.
template <class Event>
std::string format_event(const Event& ev, double time) {
  return format_event_line(Event::kType, time, ev.to_json());
}

}  // namespace ws::contract
