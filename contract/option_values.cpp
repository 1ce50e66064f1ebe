// SPDX-License-Identifier: Apache-2.0
#include "contract/option_values.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ws::contract {
namespace {

std::string fmt_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string lower(std::string_view s) {
  std::string t(s);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return t;
}

// "4k+1 (1, 5, 9, ...)" / "a multiple of 16"
std::string shape_text(const ValueRule& r) {
  if (r.remainder == 0) return "a multiple of " + std::to_string(r.multiple_of);
  std::string eg;
  for (int64_t k = 0; k < 3; ++k) eg += std::to_string(r.multiple_of * k + r.remainder) + ", ";
  return std::to_string(r.multiple_of) + "k+" + std::to_string(r.remainder) + " (" + eg + "...)";
}

}  // namespace

const char* type_name(ValueType t) {
  switch (t) {
    case ValueType::Bool: return "bool";
    case ValueType::Int: return "int";
    case ValueType::Float: return "float";
    case ValueType::String: return "string";
    case ValueType::Path: return "path";
    case ValueType::Enum: return "enum";
  }
  return "?";
}

std::optional<ValueType> type_from_name(std::string_view name) {
  for (ValueType t :
       {ValueType::Bool, ValueType::Int, ValueType::Float, ValueType::String, ValueType::Path, ValueType::Enum})
    if (name == type_name(t)) return t;
  return std::nullopt;
}

std::string canonical_option(std::string_view raw) {
  std::string s(raw);
  while (!s.empty() && s[0] == '-') s.erase(0, 1);
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

std::optional<bool> parse_bool(std::string_view text) {
  const std::string t = lower(text);
  if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off") return false;
  return std::nullopt;
}

std::optional<std::pair<int64_t, int64_t>> parse_size(std::string_view view, std::string& err) {
  const std::string text(view);
  bool ok = true;
  auto num = [&](const std::string& s) -> int64_t {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) {
      if (ok) err = "bad size '" + text + "': expected WxH (or W*H) or H,W";
      ok = false;
      return 0;
    }
    const int64_t n = std::stoll(s);
    // No model here works past 16k pixels a side; the bound keeps absurd sizes from allocating.
    if (n < 1 || n > kMaxSizeSide) {
      if (ok) err = "bad size '" + text + "': each side must be 1 to " + std::to_string(kMaxSizeSide) + " pixels";
      ok = false;
    }
    return n;
  };
  std::pair<int64_t, int64_t> hw;
  const auto x = text.find_first_of("x*");
  const auto c = text.find(',');
  if (x != std::string::npos) hw = {num(text.substr(x + 1)), num(text.substr(0, x))};
  else if (c != std::string::npos) hw = {num(text.substr(0, c)), num(text.substr(c + 1))};
  else hw = {num(text), num(text)};
  if (!ok) return std::nullopt;
  return hw;
}

bool is_null_word(ValueType type, std::string_view t) {
  if (type != ValueType::Int && type != ValueType::Float) return false;
  return t == "None" || t == "none" || t == "null" || t == "Null" || t == "NULL" || t == "~";
}

bool check_number(const ValueRule& r, double v, std::string& err) {
  // Both bounds known: say the whole range, so one message tells what to type instead.
  const std::string range = r.min && r.max ? " (allowed: " + fmt_num(*r.min) + " to " + fmt_num(*r.max) + ")" : "";
  if (r.min && v < *r.min) err = "must be at least " + fmt_num(*r.min) + ", got " + fmt_num(v) + range;
  else if (r.max && v > *r.max) err = "must be at most " + fmt_num(*r.max) + ", got " + fmt_num(v) + range;
  else if (r.multiple_of > 0 && v == std::floor(v) && (static_cast<int64_t>(v) - r.remainder) % r.multiple_of != 0)
    err = "must be " + shape_text(r) + ", got " + fmt_num(v);
  else return true;
  return false;
}

std::string allowed_value(const ValueRule& r) {
  std::string s = expected_value(r);
  if (r.type != ValueType::Int && r.type != ValueType::Float) return s;
  if (r.min && r.max) s += " from " + fmt_num(*r.min) + " to " + fmt_num(*r.max);
  else if (r.min) s += " of at least " + fmt_num(*r.min);
  else if (r.max) s += " of at most " + fmt_num(*r.max);
  if (r.multiple_of > 0) s += ", " + shape_text(r);
  return s;
}

std::string expected_value(const ValueRule& r) {
  switch (r.type) {
    case ValueType::Bool: return "true or false";
    case ValueType::Int: return "an integer";
    case ValueType::Float: return "a number";
    case ValueType::Path: return "a path";
    case ValueType::Enum: return "one of " + join(r.choices, ", ");
    case ValueType::String: return "a string";
  }
  return "a value";
}

std::optional<json> parse_value(const ValueRule& r, const std::string& text, std::string& err) {
  const std::string got = ", got '" + text + "'";
  switch (r.type) {
    case ValueType::Bool:
      if (auto b = parse_bool(text)) return json(*b);
      err = "expected true or false" + got;
      return std::nullopt;
    case ValueType::Int: {
      // Decimal only: 0x10, 1e3 or 1.0 for a step count are more likely mistakes than intent.
      const size_t start = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
      const bool ok = text.size() > start && text.find_first_not_of("0123456789", start) == std::string::npos;
      if (!ok) {
        err = "expected " + allowed_value(r) + got;
        return std::nullopt;
      }
      errno = 0;
      const long long v = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == ERANGE) {
        err = "expected " + allowed_value(r) + got;
        return std::nullopt;
      }
      if (!check_number(r, static_cast<double>(v), err)) return std::nullopt;
      return json(static_cast<int64_t>(v));
    }
    case ValueType::Float: {
      // strtod would also take "nan", "inf" and hex floats; none is a sensible setting.
      const bool ok = !text.empty() && text.find_first_not_of("0123456789+-.eE") == std::string::npos;
      char* end = nullptr;
      const double v = ok ? std::strtod(text.c_str(), &end) : 0;
      if (!ok || end != text.c_str() + text.size() || !std::isfinite(v)) {
        err = "expected " + allowed_value(r) + got;
        return std::nullopt;
      }
      if (!check_number(r, v, err)) return std::nullopt;
      return json(v);
    }
    case ValueType::Enum:
      for (const auto& c : r.choices)
        if (c == text) return json(text);
      err = "expected one of " + join(r.choices, ", ") + got;
      return std::nullopt;
    case ValueType::Path:
      if (text.empty()) {
        err = "expected a path, got an empty string";
        return std::nullopt;
      }
      return json(text);
    case ValueType::String: return json(text);
  }
  return std::nullopt;
}

std::string yaml_float(double v) {
  if (std::isnan(v)) return ".nan";
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  char buf[40];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof(buf), "%.*g", p, v);
    if (std::strtod(buf, nullptr) == v) break;  // shortest text that reads back exactly
  }
  std::string s = buf;
  if (s.find('.') == std::string::npos) {
    const auto e = s.find('e');
    s.insert(e == std::string::npos ? s.size() : e, ".0");
  }
  return s;
}

}  // namespace ws::contract
