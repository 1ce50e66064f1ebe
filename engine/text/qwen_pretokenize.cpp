// SPDX-License-Identifier: Apache-2.0
#include "text/qwen_pretokenize.h"

#include "text/unicode.h"

namespace ws::text {
namespace {

bool is_newline(char32_t c) { return c == '\r' || c == '\n'; }

// [^\s\p{L}\p{N}]: punctuation, symbols, marks, controls.
bool is_other(char32_t c) { return !is_unicode_space(c) && !is_unicode_letter(c) && !is_unicode_number(c); }

// The contraction letter folded as (?i:...) folds it: ASCII case, and U+017F LONG S is an s.
char32_t fold(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  return c == 0x17F ? 's' : c;
}

// The length of the match starting at `i` (never 0).
size_t match_at(std::u32string_view s, size_t i) {
  const size_t n = s.size();
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)
  if (s[i] == '\'' && i + 1 < n) {
    const char32_t a = fold(s[i + 1]);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if (i + 2 < n) {
      const char32_t b = fold(s[i + 2]);
      if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    }
  }
  // [^\r\n\p{L}\p{N}]?\p{L}+ : one leading non-letter (a space, a quote) joins the word.
  size_t j = i;
  if (!is_unicode_letter(s[j]) && !is_unicode_number(s[j]) && !is_newline(s[j]) && j + 1 < n &&
      is_unicode_letter(s[j + 1]))
    ++j;
  if (is_unicode_letter(s[j])) {
    while (j < n && is_unicode_letter(s[j])) ++j;
    return j - i;
  }
  // \p{N}: digits one at a time.
  if (is_unicode_number(s[i])) return 1;
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  j = i;
  if (s[j] == ' ' && j + 1 < n && is_other(s[j + 1])) ++j;
  if (is_other(s[j])) {
    while (j < n && is_other(s[j])) ++j;
    while (j < n && is_newline(s[j])) ++j;
    return j - i;
  }
  // Only whitespace is left. \s*[\r\n]+ : the run up to its last line break.
  size_t end = i;
  while (end < n && is_unicode_space(s[end])) ++end;
  for (size_t k = end; k > i; --k)
    if (is_newline(s[k - 1])) return k - i;
  // \s+(?!\S) : the run, less its last space when a non-space follows (that space starts the next
  // word); \s+ : a lone space before a non-space.
  if (end < n && end - i >= 2) return end - 1 - i;
  return end - i;
}

}  // namespace

std::vector<std::u32string_view> qwen_pretokenize(std::u32string_view text) {
  std::vector<std::u32string_view> pieces;
  for (size_t i = 0; i < text.size();) {
    const size_t len = match_at(text, i);
    pieces.push_back(text.substr(i, len));
    i += len;
  }
  return pieces;
}

}  // namespace ws::text
