// SPDX-License-Identifier: Apache-2.0
// metadata.json parsing and writing back: any text gives rows (with problems) or one ws::Error,
// and what parses writes back to JSON that parses again to the same rows.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "dataset/metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ws::dataset::Metadata m;
  try {
    m = ws::dataset::parse_metadata(text, "fuzz.json", "/data");
  } catch (const ws::Error&) {
    return 0;
  }
  for (const auto& row : m.rows) (void)m.resolve(row);
  std::string again;
  try {
    again = ws::dataset::metadata_to_json(m.rows);
  } catch (const ws::Error&) {
    return 0;  // e.g. invalid UTF-8 kept from the input
  }
  const auto m2 = ws::dataset::parse_metadata(again, "fuzz.json", "/data");
  if (m2.rows.size() != m.rows.size()) std::abort();
  for (size_t i = 0; i < m.rows.size(); ++i)
    if (m2.rows[i].file_path != m.rows[i].file_path || m2.rows[i].text != m.rows[i].text) std::abort();
  return 0;
}
