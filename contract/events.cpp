// SPDX-License-Identifier: Apache-2.0
#include "contract/events.h"

#include <cmath>
#include <limits>

namespace ws::contract {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// `extra` beside the typed fields; a typed field wins over an extra one of the same name.
json merged(json typed, const json& extra) {
  if (extra.is_object())
    for (auto& [k, v] : extra.items())
      if (!typed.contains(k)) typed[k] = v;
  return typed;
}

// Every field but `known` (and type/time): what a reader keeps as `extra`.
json rest(const json& fields, std::initializer_list<const char*> known) {
  json out = json::object();
  if (!fields.is_object()) return out;
  for (auto& [k, v] : fields.items()) {
    if (k == "type" || k == "time") continue;
    bool typed = false;
    for (const char* n : known) typed = typed || k == n;
    if (!typed) out[k] = v;
  }
  return out;
}

std::optional<double> opt_number(const json& f, const char* key) {
  auto it = f.find(key);
  if (it == f.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// A line nested deeper than this is no event (walking and copying a parsed value recurse).
bool too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > 64) return true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

bool flag(const json& f, const char* key) {
  auto it = f.find(key);
  return it != f.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

std::string format_event_line(const std::string& type, double time, const json& fields) {
  json ev = json::object();
  ev["type"] = type;
  ev["time"] = time;
  if (fields.is_object())
    for (auto& [k, v] : fields.items())
      if (k != "type" && k != "time") ev[k] = v;
  // nlohmann writes non-finite floats as null, so the line stays valid JSON.
  return ev.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::optional<EventLine> parse_event_line(std::string_view line) {
  size_t a = 0, b = line.size();
  while (a < b && (line[a] == ' ' || line[a] == '\t' || line[a] == '\r' || line[a] == '\n')) ++a;
  while (b > a && (line[b - 1] == ' ' || line[b - 1] == '\t' || line[b - 1] == '\r' || line[b - 1] == '\n')) --b;
  if (a == b || line[a] != '{') return std::nullopt;
  // Torn lines fail to parse; nesting is bounded like every reader of users' JSON.
  if (too_deep(line.substr(a, b - a))) return std::nullopt;
  json j = json::parse(line.substr(a, b - a), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto type = j.find("type");
  if (type == j.end() || !type->is_string() || type->get<std::string>().empty()) return std::nullopt;
  EventLine ev;
  ev.type = type->get<std::string>();
  ev.time = number_field(j, "time", 0.0);
  ev.fields = std::move(j);
  return ev;
}

double number_field(const json& f, const char* key, double fallback) { return opt_number(f, key).value_or(fallback); }

int64_t integer_field(const json& f, const char* key, int64_t fallback) {
  auto v = opt_number(f, key);
  // JSON numbers may arrive as doubles; steps stay far below 2^53.
  return v && std::isfinite(*v) ? static_cast<int64_t>(std::llround(*v)) : fallback;
}

std::string string_field(const json& f, const char* key) {
  auto it = f.find(key);
  return it != f.end() && it->is_string() ? it->get<std::string>() : std::string();
}

json StartedEvent::to_json() const {
  return merged({{"job", job},
                 {"config", config},
                 {"world_size", world_size},
                 {"resume_step", resume_step},
                 {"max_train_steps", max_train_steps}},
                extra);
}

StartedEvent StartedEvent::from_json(const json& f) {
  StartedEvent e;
  e.job = string_field(f, "job");
  if (auto it = f.find("config"); it != f.end() && it->is_object()) e.config = *it;
  e.world_size = static_cast<int>(integer_field(f, "world_size", 1));
  e.resume_step = integer_field(f, "resume_step", 0);
  e.max_train_steps = integer_field(f, "max_train_steps", 0);
  e.extra = rest(f, {"job", "config", "world_size", "resume_step", "max_train_steps"});
  return e;
}

json StepEvent::to_json() const {
  json j = {{"step", step}, {"expert", expert},       {"expert_step", expert_step},     {"loss", loss},
            {"lr", lr},     {"grad_norm", grad_norm}, {"samples_per_s", samples_per_s}, {"eta_s", eta_s}};
  if (grad_clip) j["grad_clip"] = *grad_clip;
  return merged(std::move(j), extra);
}

StepEvent StepEvent::from_json(const json& f) {
  StepEvent e;
  e.step = integer_field(f, "step", 0);
  e.expert = string_field(f, "expert");
  e.expert_step = integer_field(f, "expert_step", e.step);
  e.loss = number_field(f, "loss", kNaN);
  e.lr = number_field(f, "lr", kNaN);
  e.grad_norm = number_field(f, "grad_norm", kNaN);
  e.grad_clip = opt_number(f, "grad_clip");
  e.samples_per_s = number_field(f, "samples_per_s", kNaN);
  e.eta_s = number_field(f, "eta_s", kNaN);
  e.extra =
      rest(f, {"step", "expert", "expert_step", "loss", "lr", "grad_norm", "grad_clip", "samples_per_s", "eta_s"});
  return e;
}

json CheckpointEvent::to_json() const { return {{"step", step}, {"path", path}}; }

CheckpointEvent CheckpointEvent::from_json(const json& f) {
  return {integer_field(f, "step", 0), string_field(f, "path")};
}

json ValidationEvent::to_json() const {
  json j = {{"step", step},
            {"index", index},
            {"source", source},
            {"lowres", lowres},
            {"upsampled", upsampled},
            {"highres", highres},
            {"psnr", psnr},
            {"psnr_lowres", psnr_lowres},
            {"latent_mse", latent_mse},
            {"frames", frames},
            {"size", size},
            {"size_lr", size_lr}};
  for (auto [key, v] : {std::pair<const char*, double>{"psnr_ceiling", psnr_ceiling},
                        {"psnr_source", psnr_source},
                        {"psnr_lowres_source", psnr_lowres_source}})
    if (std::isfinite(v)) j[key] = v;
  return j;
}

ValidationEvent ValidationEvent::from_json(const json& f) {
  ValidationEvent e;
  e.step = integer_field(f, "step", 0);
  e.index = integer_field(f, "index", 0);
  e.source = string_field(f, "source");
  e.lowres = string_field(f, "lowres");
  e.upsampled = string_field(f, "upsampled");
  e.highres = string_field(f, "highres");
  e.psnr = number_field(f, "psnr", kNaN);
  e.psnr_lowres = number_field(f, "psnr_lowres", kNaN);
  e.latent_mse = number_field(f, "latent_mse", kNaN);
  e.psnr_ceiling = number_field(f, "psnr_ceiling", kNaN);
  e.psnr_source = number_field(f, "psnr_source", kNaN);
  e.psnr_lowres_source = number_field(f, "psnr_lowres_source", kNaN);
  e.frames = integer_field(f, "frames", 0);
  e.size = integer_field(f, "size", 0);
  e.size_lr = integer_field(f, "size_lr", 0);
  return e;
}

json EvalEvent::to_json() const {
  return {{"step", step},
          {"expert", expert},
          {"loss", loss},
          {"loss_high", loss_high ? json(*loss_high) : json(nullptr)},
          {"loss_low", loss_low ? json(*loss_low) : json(nullptr)},
          {"loss_by_t", loss_by_t},
          {"samples", samples}};
}

EvalEvent EvalEvent::from_json(const json& f) {
  EvalEvent e;
  e.step = integer_field(f, "step", 0);
  e.expert = string_field(f, "expert");
  e.loss = number_field(f, "loss", kNaN);
  e.loss_high = opt_number(f, "loss_high");
  e.loss_low = opt_number(f, "loss_low");
  if (auto it = f.find("loss_by_t"); it != f.end() && it->is_object()) e.loss_by_t = *it;
  e.samples = integer_field(f, "samples", 0);
  return e;
}

json HeartbeatEvent::to_json() const {
  json j = {{"rss_bytes", rss_bytes}};
  if (gpu_mem_bytes) j["gpu_mem_bytes"] = *gpu_mem_bytes;
  return j;
}

HeartbeatEvent HeartbeatEvent::from_json(const json& f) {
  HeartbeatEvent e;
  e.rss_bytes = integer_field(f, "rss_bytes", 0);
  if (auto g = opt_number(f, "gpu_mem_bytes")) e.gpu_mem_bytes = static_cast<int64_t>(*g);
  return e;
}

json LogEvent::to_json() const { return {{"level", level}, {"message", message}}; }
LogEvent LogEvent::from_json(const json& f) { return {string_field(f, "level"), string_field(f, "message")}; }

json ErrorEvent::to_json() const {
  json j = {{"message", message}};
  if (!hint.empty()) j["hint"] = hint;
  if (supervisor) j["supervisor"] = true;
  return j;
}

ErrorEvent ErrorEvent::from_json(const json& f) {
  return {string_field(f, "message"), string_field(f, "hint"), flag(f, "supervisor")};
}

json FinishedEvent::to_json() const {
  json j = {{"status", status}, {"step", step}};
  if (supervisor) j["supervisor"] = true;
  return j;
}

FinishedEvent FinishedEvent::from_json(const json& f) {
  return {string_field(f, "status"), integer_field(f, "step", -1), flag(f, "supervisor")};
}

json ProgressEvent::to_json() const {
  return {{"task", task}, {"done", done}, {"total", total}, {"per_s", per_s}, {"eta_s", eta_s}};
}

ProgressEvent ProgressEvent::from_json(const json& f) {
  return {string_field(f, "task"), integer_field(f, "done", 0), integer_field(f, "total", 0),
          number_field(f, "per_s", kNaN), number_field(f, "eta_s", kNaN)};
}

json SampleStepEvent::to_json() const {
  return {{"index", index}, {"step", step}, {"of", of}, {"expert", expert}, {"t", t}, {"eta_s", eta_s}};
}

SampleStepEvent SampleStepEvent::from_json(const json& f) {
  return {integer_field(f, "index", 0), integer_field(f, "step", 0), integer_field(f, "of", 0),
          string_field(f, "expert"),    integer_field(f, "t", 0),    number_field(f, "eta_s", kNaN)};
}

json SampleEvent::to_json() const {
  json j{{"index", index}, {"latents", latents}, {"sidecar", sidecar}, {"seconds", seconds}};
  if (!video.empty()) j["video"] = video;
  return j;
}

SampleEvent SampleEvent::from_json(const json& f) {
  return {integer_field(f, "index", 0), string_field(f, "latents"), string_field(f, "video"),
          string_field(f, "sidecar"), number_field(f, "seconds", kNaN)};
}

}  // namespace ws::contract
