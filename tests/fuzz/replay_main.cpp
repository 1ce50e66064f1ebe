// SPDX-License-Identifier: Apache-2.0
// The normal build's driver for the fuzz harnesses: runs every file of the given corpus folders
// (and files) through LLVMFuzzerTestOneInput once, so the committed corpus and every crash found
// by fuzzing stay regression tests without clang or libFuzzer.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace stdfs = std::filesystem;
  std::vector<stdfs::path> files;
  for (int i = 1; i < argc; ++i) {
    const stdfs::path p(argv[i]);
    if (stdfs::is_directory(p)) {
      for (const auto& e : stdfs::recursive_directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.push_back(p);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "error: no corpus files in the given paths\n");
    return 1;
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs\n", files.size());
  return 0;
}
