// SPDX-License-Identifier: Apache-2.0
#include "io/json_fields.h"

#include <cmath>

#include "core/error.h"

namespace ws::io {
namespace {

bool whole(const nlohmann::json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < 9.2e18;
}

int64_t as_int(const nlohmann::json& v) {
  return v.is_number_float() ? static_cast<int64_t>(v.get<double>()) : v.get<int64_t>();
}

}  // namespace

std::string JsonFields::shown(const nlohmann::json& v) {
  std::string s = v.dump();
  return s.size() <= 80 ? s : s.substr(0, 77) + "...";
}

JsonFields::JsonFields(const nlohmann::json& j, std::string where, std::string prefix)
    : j_(j), where_(std::move(where)), prefix_(std::move(prefix)) {}

bool JsonFields::has(const char* k) const { return j_.is_object() && j_.contains(k) && !j_[k].is_null(); }

void JsonFields::fail(const char* k, const std::string& what) const {
  throw Error(where_ + ": '" + prefix_ + k + "' " + what);
}

void JsonFields::require(const char* k) const {
  if (!has(k)) throw Error(where_ + ": missing required key '" + prefix_ + k + "'");
}

void JsonFields::get(const char* k, int64_t& v) const {
  if (!has(k)) return;
  if (!whole(j_[k])) fail(k, "must be an integer, got " + shown(j_[k]));
  v = as_int(j_[k]);
}

void JsonFields::get(const char* k, double& v) const {
  if (!has(k)) return;
  if (!j_[k].is_number()) fail(k, "must be a number, got " + shown(j_[k]));
  v = j_[k].get<double>();
}

void JsonFields::get(const char* k, bool& v) const {
  if (!has(k)) return;
  if (!j_[k].is_boolean()) fail(k, "must be true or false, got " + shown(j_[k]));
  v = j_[k].get<bool>();
}

void JsonFields::get(const char* k, std::string& v) const {
  if (!has(k)) return;
  if (!j_[k].is_string()) fail(k, "must be a string, got " + shown(j_[k]));
  v = j_[k].get<std::string>();
}

void JsonFields::get(const char* k, std::vector<int64_t>& v) const { read_list(k, v, "integers", whole, as_int); }

void JsonFields::get(const char* k, std::vector<bool>& v) const {
  read_list(
      k, v, "booleans", [](const nlohmann::json& e) { return e.is_boolean(); },
      [](const nlohmann::json& e) { return e.get<bool>(); });
}

const nlohmann::json& JsonFields::value(const char* k) const {
  require(k);
  return j_[k];
}

std::string JsonFields::str(const char* k) const {
  std::string v;
  get(k, v);
  return v;
}

const nlohmann::json* JsonFields::object(const char* k) const {
  if (!has(k)) return nullptr;
  if (!j_[k].is_object()) fail(k, "must be an object, got " + shown(j_[k]));
  return &j_[k];
}

JsonFields JsonFields::child(const nlohmann::json& o, const char* k) const {
  return JsonFields(o, where_, prefix_ + k + ".");
}

}  // namespace ws::io
