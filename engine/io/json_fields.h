// SPDX-License-Identifier: Apache-2.0
// Typed reads of one JSON object's keys into config fields, for the model configs (config.json,
// the YAML kwargs blocks): an absent or null key keeps the field's default, a value of the wrong
// type is an Error naming the file, the key and what it must be.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ws::io {

class JsonFields {
 public:
  // `where` starts every message (the file, perhaps "FILE: UMT5 config"); `prefix` goes before
  // each key's name (a nested object's path, "vision_config.").
  JsonFields(const nlohmann::json& j, std::string where, std::string prefix = {});

  bool has(const char* k) const;
  [[noreturn]] void fail(const char* k, const std::string& what) const;
  void require(const char* k) const;  // absent or null: "missing required key"

  // Integers also as 4.0 (written by float-minded tools), never as 4.5.
  void get(const char* k, int64_t& v) const;
  void get(const char* k, double& v) const;
  void get(const char* k, bool& v) const;
  void get(const char* k, std::string& v) const;
  void get(const char* k, std::vector<int64_t>& v) const;
  void get(const char* k, std::vector<bool>& v) const;
  std::string str(const char* k) const;              // "" when absent
  const nlohmann::json& value(const char* k) const;  // the raw value, for keys of a shape of their own; absent: Error

  // A nested object (nullptr when absent), and the reader of one whose messages name its path.
  const nlohmann::json* object(const char* k) const;
  JsonFields child(const nlohmann::json& o, const char* k) const;

 private:
  static std::string shown(const nlohmann::json& v);  // a value as a message shows it: cut short

  // Every element passes `ok` or the list is refused whole, leaving `v` as it was.
  template <class T, class Ok, class Take>
  void read_list(const char* k, std::vector<T>& v, const char* what, Ok ok, Take take) const {
    if (!has(k)) return;
    const auto& a = j_[k];
    std::vector<T> out;
    if (a.is_array())
      for (const auto& e : a) {
        if (!ok(e)) break;
        out.push_back(take(e));
      }
    if (!a.is_array() || out.size() != a.size())
      fail(k, std::string("must be a list of ") + what + ", got " + shown(a));
    v = std::move(out);
  }

  const nlohmann::json& j_;
  std::string where_, prefix_;
};

}  // namespace ws::io
