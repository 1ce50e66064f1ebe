// SPDX-License-Identifier: Apache-2.0
#include "text/caption_clean.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "text/utf8.h"

namespace ws::text {
namespace {

struct HtmlEntity {
  const char* name;
  const char* text;
};

#include "text/html_tables.inc"

using EntityMap = std::unordered_map<std::string_view, std::string_view>;

EntityMap make_map(const HtmlEntity* begin, const HtmlEntity* end) {
  EntityMap m;
  for (const HtmlEntity* e = begin; e != end; ++e) m.emplace(e->name, e->text);
  return m;
}

const EntityMap& html5() {
  static const EntityMap m = make_map(std::begin(kHtml5), std::end(kHtml5));
  return m;
}

const EntityMap& ftfy_entities() {
  static const EntityMap m = make_map(std::begin(kFtfyEntities), std::end(kFtfyEntities));
  return m;
}

bool is_ascii_alnum(char32_t c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

// Unicode White_Space: what the `regex` module's \s matches.
bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// Python's str.isspace, which str.strip() uses: White_Space plus the separators U+001C..001F.
bool is_py_space(char32_t c) { return is_white_space(c) || (c >= 0x1C && c <= 0x1F); }

std::u32string py_strip(const std::u32string& s) {
  size_t a = 0, b = s.size();
  while (a < b && is_py_space(s[a])) ++a;
  while (b > a && is_py_space(s[b - 1])) --b;
  return s.substr(a, b - a);
}

// Windows-1252 for 0x80..0x9F; 0 where it has no character (0x81, 0x8D, 0x8F, 0x90, 0x9D stay).
constexpr char32_t kCp1252[32] = {0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
                                  0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0,      0x017D, 0,
                                  0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
                                  0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};

const char* ligature(char32_t c) {
  switch (c) {
    case 0x0132: return "IJ";
    case 0x0133: return "ij";
    case 0x0149: return "\xCA\xBCn";  // ʼn
    case 0x01F1: return "DZ";
    case 0x01F2: return "Dz";
    case 0x01F3: return "dz";
    case 0x01C4: return "D\xC5\xBD";  // DŽ
    case 0x01C5: return "D\xC5\xBE";  // Dž
    case 0x01C6: return "d\xC5\xBE";  // dž
    case 0x01C7: return "LJ";
    case 0x01C8: return "Lj";
    case 0x01C9: return "lj";
    case 0x01CA: return "NJ";
    case 0x01CB: return "Nj";
    case 0x01CC: return "nj";
    case 0xFB00: return "ff";
    case 0xFB01: return "fi";
    case 0xFB02: return "fl";
    case 0xFB03: return "ffi";
    case 0xFB04: return "ffl";
    case 0xFB05: return "\xC5\xBFt";  // ſt
    case 0xFB06: return "st";
    default: return nullptr;
  }
}

bool removed_control(char32_t c) {
  return c <= 0x08 || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F || (c >= 0x206A && c <= 0x206F) ||
         c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFC);
}

void append(std::u32string& out, const char* utf8) { out += utf8_decode(utf8); }

// ftfy's unescape_html: "&#?[0-9A-Za-z]{1,24};" entities (its own table), numeric references
// through html.unescape unless a ";" survives.
std::u32string ftfy_unescape(const std::u32string& s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '&') {
      size_t j = i + 1;
      if (j < s.size() && s[j] == '#') ++j;
      size_t k = j;
      while (k < s.size() && is_ascii_alnum(s[k])) ++k;
      const size_t n = k - j;
      if (n >= 1 && n <= 24 && k < s.size() && s[k] == ';') {
        const std::string ent = utf8_encode(s.substr(i, k + 1 - i));
        auto it = ftfy_entities().find(ent);
        if (it != ftfy_entities().end()) {
          append(out, std::string(it->second).c_str());
          i = k + 1;
          continue;
        }
        if (s[i + 1] == '#') {
          const std::string u = html_unescape(ent);
          if (u.find(';') == std::string::npos) {
            out += utf8_decode(u);
            i = k + 1;
            continue;
          }
        }
      }
    }
    out += s[i++];
  }
  return out;
}

// One pass of ftfy's fixes in order (docs/design/umt5.md §6.2 a, c–j).
std::u32string fix_once(const std::u32string& s, bool unescape) {
  std::u32string t = unescape ? ftfy_unescape(s) : s;
  std::u32string u;
  u.reserve(t.size());
  for (char32_t c : t) {
    if (c >= 0x80 && c <= 0x9F && kCp1252[c - 0x80]) c = kCp1252[c - 0x80];  // c. C1 controls
    if (const char* lig = ligature(c)) {                                     // d. ligatures
      append(u, lig);
      continue;
    }
    if (c == 0x3000) c = ' ';  // e. width
    if (c >= 0xFF01 && c <= 0xFFEF && kFullwidthNfkc[c - 0xFF01][0]) {
      append(u, kFullwidthNfkc[c - 0xFF01]);
      continue;
    }
    if (c == 0x02BC || (c >= 0x2018 && c <= 0x201B)) c = '\'';  // f. quotes
    if (c >= 0x201C && c <= 0x201F) c = '"';
    u += c;
  }
  // g. line breaks
  std::u32string v;
  for (size_t i = 0; i < u.size(); ++i) {
    if (u[i] == '\r' && i + 1 < u.size() && u[i + 1] == '\n') continue;
    v += (u[i] == '\r' || u[i] == 0x2028 || u[i] == 0x2029 || u[i] == 0x85) ? char32_t('\n') : u[i];
  }
  // i. terminal escapes ESC [ (digits or ;)* letter; j. control characters
  std::u32string w;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == 0x1B && i + 1 < v.size() && v[i + 1] == '[') {
      size_t j = i + 2;
      while (j < v.size() && ((v[j] >= '0' && v[j] <= '9') || v[j] == ';')) ++j;
      if (j < v.size() && ((v[j] >= 'a' && v[j] <= 'z') || (v[j] >= 'A' && v[j] <= 'Z'))) {
        i = j;
        continue;
      }
    }
    if (!removed_control(v[i])) w += v[i];
  }
  return w;
}

}  // namespace

std::string html_unescape(std::string_view text) {
  if (text.find('&') == std::string_view::npos) return std::string(text);
  const std::u32string s = utf8_decode(text);
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    if (s[i] != '&' || i + 1 >= s.size()) {
      out += s[i++];
      continue;
    }
    size_t j = i + 1;
    if (s[j] == '#') {
      // &#[0-9]+;? or &#[xX][0-9a-fA-F]+;?
      const bool hex = j + 1 < s.size() && (s[j + 1] == 'x' || s[j + 1] == 'X');
      size_t k = j + (hex ? 2 : 1);
      const size_t start = k;
      uint64_t num = 0;
      bool big = false;
      while (k < s.size() &&
             (hex ? std::isxdigit(static_cast<int>(s[k] < 128 ? s[k] : 0)) != 0 : (s[k] >= '0' && s[k] <= '9'))) {
        const char32_t c = s[k];
        const uint64_t d = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
        if (!big) num = num * (hex ? 16 : 10) + d;
        if (num > 0x10FFFF) big = true;
        ++k;
      }
      if (k == start) {
        out += s[i++];
        continue;
      }
      if (k < s.size() && s[k] == ';') ++k;
      char32_t rep = 0;
      bool drop = false;
      auto inv = std::find_if(std::begin(kInvalidCharrefs), std::end(kInvalidCharrefs),
                              [&](const auto& p) { return !big && p.first == num; });
      if (inv != std::end(kInvalidCharrefs)) rep = inv->second;
      else if (big || (num >= 0xD800 && num <= 0xDFFF)) rep = 0xFFFD;
      else if (std::find(std::begin(kInvalidCodepoints), std::end(kInvalidCodepoints), num) !=
               std::end(kInvalidCodepoints))
        drop = true;
      else rep = static_cast<char32_t>(num);
      if (!drop) out += rep;
      i = k;
      continue;
    }
    // [^\t\n\f <&#;]{1,32};?
    size_t k = j;
    while (k < s.size() && k - j < 32 && s[k] != '\t' && s[k] != '\n' && s[k] != '\f' && s[k] != ' ' && s[k] != '<' &&
           s[k] != '&' && s[k] != '#' && s[k] != ';')
      ++k;
    if (k == j) {
      out += s[i++];
      continue;
    }
    if (k < s.size() && s[k] == ';') ++k;
    const std::string name = utf8_encode(s.substr(j, k - j));
    auto it = html5().find(name);
    if (it != html5().end()) {
      append(out, std::string(it->second).c_str());
    } else {
      // The longest known prefix (a legacy name without ";"), then the rest as it was.
      bool found = false;
      for (size_t x = name.size() - 1; x >= 2 && x < name.size(); --x) {
        auto p = html5().find(std::string_view(name).substr(0, x));
        if (p != html5().end()) {
          append(out, std::string(p->second).c_str());
          out += utf8_decode(name.substr(x));
          found = true;
          break;
        }
      }
      if (!found) {
        out += '&';
        out += utf8_decode(name);
      }
    }
    i = k;
  }
  return utf8_encode(out);
}

std::string ftfy_fix_text(std::string_view text) {
  const std::u32string s = utf8_decode(text);
  std::u32string out;
  bool unescape = true;
  // ftfy fixes segments that end after each "\n"; a "<" anywhere so far turns entity decoding off.
  for (size_t pos = 0; pos < s.size();) {
    size_t end = s.find(U'\n', pos);
    end = end == std::u32string::npos ? s.size() : end + 1;
    std::u32string seg = s.substr(pos, end - pos);
    if (seg.find(U'<') != std::u32string::npos) unescape = false;
    for (int round = 0; round < 16; ++round) {  // to a fixed point (each pass only shortens or maps)
      std::u32string next = fix_once(seg, unescape);
      if (next == seg) break;
      seg = std::move(next);
    }
    out += seg;
    pos = end;
  }
  return utf8_encode(out);
}

std::string whitespace_clean(std::string_view text) {
  const std::u32string s = utf8_decode(text);
  std::u32string out;
  bool in_space = false;
  for (char32_t c : s) {
    if (is_white_space(c)) {
      if (!in_space) out += ' ';
      in_space = true;
    } else {
      out += c;
      in_space = false;
    }
  }
  return utf8_encode(py_strip(out));
}

std::string clean_caption(std::string_view caption) {
  // Wan: whitespace_clean(basic_clean(text)), basic_clean = ftfy.fix_text, html.unescape twice, strip.
  std::string t = html_unescape(html_unescape(ftfy_fix_text(caption)));
  t = utf8_encode(py_strip(utf8_decode(t)));
  return whitespace_clean(t);
}

}  // namespace ws::text
