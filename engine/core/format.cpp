// SPDX-License-Identifier: Apache-2.0
#include "core/format.h"

#include <charconv>
#include <cstdio>

namespace ws {
namespace {

std::string shortest(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// `spec` is what follows ':' inside the braces: ".Nf", ".Ng", ".Ne" or empty.
std::string render(const FormatArg& a, std::string_view spec) {
  using K = FormatArg::Kind;
  if (spec.size() >= 3 && spec[0] == '.' && (a.kind == K::kFloat || a.kind == K::kSigned || a.kind == K::kUnsigned)) {
    const char type = spec.back();
    if (type == 'f' || type == 'g' || type == 'e') {
      int precision = 0;
      auto r = std::from_chars(spec.data() + 1, spec.data() + spec.size() - 1, precision);
      if (r.ec == std::errc() && r.ptr == spec.data() + spec.size() - 1) {
        const double v = a.kind == K::kFloat ? a.f : a.kind == K::kSigned ? double(a.i) : double(a.u);
        const char f[] = {'%', '.', '*', type, '\0'};
        char buf[512];
        std::snprintf(buf, sizeof buf, f, precision, v);
        return buf;
      }
    }
  }
  switch (a.kind) {
    case K::kSigned: return std::to_string(a.i);
    case K::kUnsigned: return std::to_string(a.u);
    case K::kFloat: return shortest(a.f);
    case K::kText: return a.text;
  }
  return a.text;
}

}  // namespace

std::string format_args(std::string_view pattern, const FormatArg* args, size_t count) {
  std::string out;
  out.reserve(pattern.size() + 16 * count);
  size_t next = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if ((c == '{' || c == '}') && i + 1 < pattern.size() && pattern[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '{') {
      const size_t close = pattern.find('}', i);
      if (close != std::string_view::npos && next < count) {
        std::string_view field = pattern.substr(i + 1, close - i - 1);
        std::string_view spec = field.empty() || field[0] != ':' ? std::string_view{} : field.substr(1);
        out += render(args[next++], spec);
        i = close;
        continue;
      }
    }
    out += c;
  }
  return out;
}

}  // namespace ws
