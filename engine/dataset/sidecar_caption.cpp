// SPDX-License-Identifier: Apache-2.0
#include "dataset/sidecar_caption.h"

#include <filesystem>

#include "core/error.h"
#include "core/fs.h"

namespace ws::dataset {

namespace {

constexpr uint64_t kMaxCaptionBytes = 1 << 20;

bool valid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : 9;
    if (n == 9 || i + n >= s.size()) return false;
    for (size_t k = 1; k <= n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    i += n + 1;
  }
  return true;
}

std::string trim(const std::string& s) {
  const char* ws = " \t\r\n\f\v";
  const size_t a = s.find_first_not_of(ws);
  if (a == std::string::npos) return {};
  return s.substr(a, s.find_last_not_of(ws) - a + 1);
}

}  // namespace

std::optional<std::string> sidecar_caption_path(const std::string& media) {
  std::filesystem::path p(media);
  for (const char* ext : {".txt", ".caption"}) {
    std::filesystem::path c = p;
    c.replace_extension(ext);
    if (fs::exists(c.string())) return c.string();
  }
  return std::nullopt;
}

std::optional<std::string> read_sidecar_caption(const std::string& media) {
  auto path = sidecar_caption_path(media);
  if (!path) return std::nullopt;
  fs::check_regular_file(*path);
  if (fs::file_size(*path) > kMaxCaptionBytes) throw Error(*path + ": a caption over 1 MiB");
  std::string text = fs::read_file(*path);
  if (text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);  // a BOM
  if (!valid_utf8(text)) throw Error(*path + ": not UTF-8 text");
  return trim(text);
}

std::string write_sidecar_caption(const std::string& media, const std::string& text) {
  std::filesystem::path c(media);
  c.replace_extension(".txt");
  fs::write_file_atomic(c.string(), text + "\n");
  return c.string();
}

size_t write_sidecar_captions(const Metadata& meta) {
  size_t written = 0;
  for (const auto& row : meta.rows) {
    if (row.file_path.empty()) continue;
    write_sidecar_caption(meta.resolve(row), row.text);
    ++written;
  }
  return written;
}

}  // namespace ws::dataset
