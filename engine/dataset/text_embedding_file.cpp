// SPDX-License-Identifier: Apache-2.0
#include "dataset/text_embedding_file.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/fs.h"
#include "core/sha256.h"

namespace ws::dataset {

std::string text_embedding_path(const std::string& dir, const Metadata& meta, const MetaRow& row) {
  if (row.raw.is_object() && row.raw.contains("text_embedding_path") && row.raw["text_embedding_path"].is_string()) {
    const std::string p = row.raw["text_embedding_path"].get<std::string>();
    return !p.empty() && p[0] == '/' ? p : fs::join(meta.data_dir, p);
  }
  return fs::join(dir, sha256_hex(row.text) + ".safetensors");
}

std::string encoder_identity(const std::string& encoder_path) {
  std::error_code ec;
  const auto bytes =
      std::filesystem::is_regular_file(encoder_path, ec) ? std::filesystem::file_size(encoder_path, ec) : 0;
  return fs::basename(encoder_path) + ":" + std::to_string(ec ? 0 : bytes);
}

EmbeddingState embedding_state(const std::string& path, const std::string& encoder) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return EmbeddingState::Missing;  // never open a FIFO
  std::ifstream f(path, std::ios::binary);
  if (!f) return EmbeddingState::Missing;
  // The safetensors header: an 8-byte little-endian length, then JSON with `__metadata__`.
  unsigned char n8[8];
  if (!f.read(reinterpret_cast<char*>(n8), 8)) return EmbeddingState::OtherEncoder;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | n8[i];
  if (n == 0 || n > (uint64_t{1} << 24)) return EmbeddingState::OtherEncoder;
  std::string header(n, '\0');
  if (!f.read(header.data(), static_cast<std::streamsize>(n))) return EmbeddingState::OtherEncoder;
  const auto j = nlohmann::json::parse(header, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return EmbeddingState::OtherEncoder;
  const auto m = j.find("__metadata__");
  if (m == j.end() || !m->is_object()) return EmbeddingState::OtherEncoder;
  const auto e = m->find("encoder");
  return e != m->end() && e->is_string() && e->get<std::string>() == encoder ? EmbeddingState::Ready
                                                                             : EmbeddingState::OtherEncoder;
}

}  // namespace ws::dataset
