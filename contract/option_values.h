// SPDX-License-Identifier: Apache-2.0
// The option value grammar [contract, docs/design/architecture.md §5]: how text from the command
// line, a run.yaml scalar or a field of the studio's form becomes a typed option value. The worker's
// config loader and the studio's form and run.yaml reader all call these functions, so a preset
// one side accepts is never rejected by the other.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ws::contract {

using json = nlohmann::json;

enum class ValueType { Bool, Int, Float, String, Path, Enum };
const char* type_name(ValueType t);  // "bool", "int", "float", "string", "path", "enum"
std::optional<ValueType> type_from_name(std::string_view name);

// What a single value of an option must be. `multiple_of`/`remainder` express the shape rules
// (frames = 4k+1: multiple_of 4, remainder 1; a pixel size: multiple_of 16, remainder 0); the
// `schema` verb publishes all of it, so the form checks with the worker's own rule.
struct ValueRule {
  ValueType type = ValueType::String;
  std::vector<std::string> choices;  // Enum only
  std::optional<double> min, max;    // inclusive, Int and Float
  int64_t multiple_of = 0;           // Int only; 0 = no rule
  int64_t remainder = 0;
};

// "--max-train-steps" and "max-train-steps" -> "max_train_steps".
std::string canonical_option(std::string_view raw);
// 1/0, true/false, yes/no, on/off in any case; nullopt for anything else.
std::optional<bool> parse_bool(std::string_view text);
// A video size "WxH", "W*H" (Wan's notation) or "H,W", or one number for a square -> {H, W}, each
// side 1..16384 pixels; nullopt with `err` set otherwise.
constexpr int64_t kMaxSizeSide = 16384;
std::optional<std::pair<int64_t, int64_t>> parse_size(std::string_view text, std::string& err);
// "None", "null", "~" (as Python and YAML users write "no value"): only numbers take them, since a
// path or a string could be named so.
bool is_null_word(ValueType type, std::string_view text);
// One item of an option from text. On failure returns nullopt and sets `err` to the reason
// ("expected an integer, got 'x'", "must be at most 10, got 12", "must be 4k+1 ...").
std::optional<json> parse_value(const ValueRule& rule, const std::string& text, std::string& err);
// Bounds and shape rule of a number already parsed.
bool check_number(const ValueRule& rule, double v, std::string& err);
// "an integer", "true or false", "one of a, b" — for messages.
std::string expected_value(const ValueRule& rule);
// The same with a number's bounds and shape: "an integer from 1 to 4001, 4k+1 (1, 5, 9, ...)".
std::string allowed_value(const ValueRule& rule);
// Shortest text that reads back as exactly `v`, always with a dot or exponent so YAML 1.1
// readers (PyYAML) see a float: 2e-05 -> "2.0e-05", 3 -> "3.0".
std::string yaml_float(double v);

// The shape rules by name, for code outside option parsing (the `vae` verb's flags, messages).
inline bool is_4k_plus_1(int64_t frames) { return frames >= 1 && (frames - 1) % 4 == 0; }
inline bool is_multiple_of_16(int64_t pixels) { return pixels >= 16 && pixels % 16 == 0; }
// Rules to attach to an Int option (`OptionSchema::integer(...).rule(...)`).
inline ValueRule frames_rule() { return {ValueType::Int, {}, 1.0, std::nullopt, 4, 1}; }
inline ValueRule pixels_rule() { return {ValueType::Int, {}, 16.0, std::nullopt, 16, 0}; }

}  // namespace ws::contract
