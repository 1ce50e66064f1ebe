// SPDX-License-Identifier: Apache-2.0
// TensorBoard files: any bytes read back with damage reported, never thrown; and scalars written
// with fuzzed tags, values and steps read back exactly.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/error.h"
#include "fuzz_input.h"
#include "io/tfevents.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // 1. The reader on arbitrary bytes.
  (void)ws::io::read_tfevents(ws::fuzz::input_file(data, size, ".tfevents"));
  // 2. Round trip: [u8 tag length][tag][f32 value][i64 step] records from the input.
  std::vector<std::pair<std::string, float>> scalars;
  std::vector<int64_t> steps;
  for (size_t at = 0; at < size;) {
    const size_t n = data[at++] % 32;
    if (at + n + 12 > size) break;
    std::string tag(reinterpret_cast<const char*>(data + at), n);
    at += n;
    float v;
    int64_t step;
    std::memcpy(&v, data + at, 4);
    std::memcpy(&step, data + at + 4, 8);
    at += 12;
    scalars.push_back({tag, v});
    steps.push_back(step);
  }
  if (scalars.empty()) return 0;
  static const std::string dir = ws::fuzz::input_file(nullptr, 0, ".dir") + "_tb";
  std::string written;
  {
    ws::io::TfEventsWriter w(dir);
    for (size_t i = 0; i < scalars.size(); ++i) w.add_scalar(scalars[i].first, scalars[i].second, steps[i], 1.5);
    written = w.path();
  }
  const auto back = ws::io::read_tfevents(written);
  std::remove(written.c_str());
  if (!back.problem.empty() || back.scalars.size() != scalars.size()) std::abort();
  for (size_t i = 0; i < scalars.size(); ++i) {
    const auto& s = back.scalars[i];
    const bool same_value =
        std::isnan(scalars[i].second) ? std::isnan(s.value) : std::memcmp(&s.value, &scalars[i].second, 4) == 0;
    if (s.tag != scalars[i].first || s.step != steps[i] || !same_value) std::abort();
  }
  return 0;
}
