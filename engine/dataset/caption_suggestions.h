// SPDX-License-Identifier: Apache-2.0
// Model captions as suggestions (docs/design/captioning.md §7): a captioner's text goes into a
// row's `text_suggested`, never into `text`, and what made it (backend, model, prompt, settings)
// into a sidecar beside the metadata.json, keyed by file_path. A person accepts or rejects it.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "dataset/metadata.h"

namespace ws::dataset {

// The row key the suggestions live in.
inline constexpr const char* kSuggestedKey = "text_suggested";

// The Wan-style default prompt: one dense paragraph, as Wan 2.x's captions are written.
extern const char* const kDefaultCaptionPrompt;

// The rows a captioning job works on, in order. `selected` empty: every row without a caption;
// else those rows (ws::Error for an index out of range). A row that already has a suggestion is
// done (so an interrupted job resumes) unless `overwrite`, which also takes captioned rows.
std::vector<size_t> rows_to_caption(const Metadata& meta, const std::vector<size_t>& selected, bool overwrite);

// "0,3,5-9" (0-based rows) → indices; ws::UsageError-free: ws::Error on a bad list.
std::vector<size_t> parse_row_list(const std::string& text);

// `n` frames spread evenly over `total`: the middle frame of each of n equal spans.
std::vector<int64_t> caption_frame_indices(int64_t total, int64_t n);

// The prompt for one row: {file_name} and {frames} replaced.
std::string expand_caption_prompt(const std::string& prompt, const std::string& file_path, int64_t frames);

// metadata.json → metadata.captions.json beside it.
std::string caption_sidecar_path(const std::string& metadata_path);

// The sidecar as read ({} when absent); ws::Error when it is there but not a JSON object.
nlohmann::ordered_json read_caption_sidecar(const std::string& metadata_path);

// Writes the rows (metadata.json atomically, the previous one as .bak) and then the sidecar.
void write_caption_suggestions(const std::string& metadata_path, const std::vector<MetaRow>& rows,
                               const nlohmann::ordered_json& sidecar);

}  // namespace ws::dataset
