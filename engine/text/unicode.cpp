// SPDX-License-Identifier: Apache-2.0
#include "text/unicode.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace ws::text {
namespace {

struct CodeRange {
  char32_t first, last;
};
struct ClassRange {
  char32_t first, last;
  uint8_t ccc;
};
struct Decomposition {
  char32_t cp, first, second;  // second is 0 for a singleton
};
struct Composition {
  char32_t first, second, composite;
};

#include "text/unicode_tables.inc"

template <size_t N>
bool in_ranges(const CodeRange (&table)[N], char32_t c) {
  auto it = std::upper_bound(std::begin(table), std::end(table), c,
                             [](char32_t v, const CodeRange& r) { return v < r.first; });
  return it != std::begin(table) && c <= std::prev(it)->last;
}

// Hangul syllables decompose and compose by arithmetic (Unicode §3.12), not through the tables.
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

uint8_t combining_class(char32_t c) {
  if (c < 0x300) return 0;  // nothing below U+0300 combines
  auto it = std::upper_bound(std::begin(kCombiningClasses), std::end(kCombiningClasses), c,
                             [](char32_t v, const ClassRange& r) { return v < r.first; });
  return it != std::begin(kCombiningClasses) && c <= std::prev(it)->last ? std::prev(it)->ccc : 0;
}

void decompose(char32_t c, std::u32string& out) {
  if (c >= kSBase && c < kSBase + kSCount) {
    const char32_t s = c - kSBase;
    out += kLBase + s / kNCount;
    out += kVBase + (s % kNCount) / kTCount;
    if (s % kTCount) out += kTBase + s % kTCount;
    return;
  }
  auto it = std::lower_bound(std::begin(kDecompositions), std::end(kDecompositions), c,
                             [](const Decomposition& d, char32_t v) { return d.cp < v; });
  if (it == std::end(kDecompositions) || it->cp != c) {
    out += c;
    return;
  }
  decompose(it->first, out);
  if (it->second) decompose(it->second, out);
}

// The primary composite of a pair, or 0.
char32_t compose(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount)
    return a + (b - kTBase);
  auto it = std::lower_bound(std::begin(kCompositions), std::end(kCompositions), std::pair{a, b},
                             [](const Composition& x, std::pair<char32_t, char32_t> v) {
                               return x.first < v.first || (x.first == v.first && x.second < v.second);
                             });
  return it != std::end(kCompositions) && it->first == a && it->second == b ? it->composite : 0;
}

}  // namespace

bool is_unicode_letter(char32_t c) {
  if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  return in_ranges(kLetters, c);
}

bool is_unicode_number(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return in_ranges(kNumbers, c);
}

bool is_unicode_space(char32_t c) { return in_ranges(kSpaces, c); }

std::u32string nfc(std::u32string_view s) {
  // Text below U+0300 is already NFC: no character there decomposes into or composes with another.
  if (std::all_of(s.begin(), s.end(), [](char32_t c) { return c < 0x300; })) return std::u32string(s);
  std::u32string d;
  d.reserve(s.size());
  for (char32_t c : s) decompose(c, d);
  // Canonical ordering: each run of marks stably sorted by combining class.
  for (size_t i = 0; i < d.size();) {
    if (combining_class(d[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < d.size() && combining_class(d[j]) != 0) ++j;
    std::stable_sort(d.begin() + static_cast<std::ptrdiff_t>(i), d.begin() + static_cast<std::ptrdiff_t>(j),
                     [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
    i = j;
  }
  // Canonical composition: a mark joins the last starter unless a mark of the same or a higher class
  // stands between them (blocked); a starter joins only the starter right before it.
  std::u32string out;
  out.reserve(d.size());
  size_t starter = std::u32string::npos;
  int last_class = -1;
  for (char32_t c : d) {
    const int cc = combining_class(c);
    if (starter != std::u32string::npos && (last_class < cc || last_class == 0)) {
      if (char32_t comp = compose(out[starter], c)) {
        out[starter] = comp;
        continue;
      }
    }
    if (cc == 0) starter = out.size();
    last_class = cc;
    out += c;
  }
  return out;
}

}  // namespace ws::text
