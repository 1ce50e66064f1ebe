// SPDX-License-Identifier: Apache-2.0
// The run folder [contract, docs/design/architecture.md §4]: the names the worker writes and
// every reader (the studio, users' scripts) looks for. A checkpoint is a folder named exactly
// `checkpoint-` followed by decimal digits; `.checkpoint-<N>.tmp`, `.checkpoint-<N>.old` and
// anything else are not checkpoints.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ws::contract {

inline constexpr const char* kEventsFile = "events.jsonl";
inline constexpr const char* kRunYaml = "run.yaml";
inline constexpr const char* kLogsDir = "logs";
inline constexpr const char* kEngineLog = "logs/engine.log";
inline constexpr const char* kLockFile = ".lock";
inline constexpr const char* kSampleDir = "sample";
inline constexpr const char* kTrainerState = "trainer_state/state.json";
// A file inside a checkpoint that rotation (checkpoints_total_limit) never removes: written for a
// checkpoint saved on request (Save Now, `save` on the worker's stdin).
inline constexpr const char* kKeptMarker = "KEPT";

bool parse_checkpoint_name(std::string_view name, int64_t* step = nullptr);
std::string checkpoint_name(int64_t step);  // "checkpoint-500"
// Where a checkpoint is written before it is complete, and where the one it replaces waits.
std::string checkpoint_temp_name(int64_t step);  // ".checkpoint-500.tmp"
std::string checkpoint_old_name(int64_t step);   // ".checkpoint-500.old"
// The step of a `.checkpoint-<N><suffix>` name (suffix ".tmp" or ".old").
std::optional<int64_t> parse_hidden_checkpoint_name(std::string_view name, std::string_view suffix);

// Validation videos: sample/step<S>_val<I>_<suffix>.mp4 (suffix "upsampled", "reference", ...).
std::string validation_video_name(int64_t step, int64_t index, std::string_view suffix);

}  // namespace ws::contract
