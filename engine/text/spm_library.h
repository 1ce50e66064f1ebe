// SPDX-License-Identifier: Apache-2.0
// SentencePiece, loaded from the module libwanstudio_spm.so (text/spm/spm_api.h says why it is not
// linked). The module is looked for in $WANSTUDIO_SPM_MODULE, next to the running program, in
// ../lib/wanstudio/ beside it, and where the build put it.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ws::text {

class SpmModel {
 public:
  // ws::Error naming the file when it is no SentencePiece model, or when the module is missing.
  explicit SpmModel(const std::string& path);
  ~SpmModel();
  SpmModel(const SpmModel&) = delete;
  SpmModel& operator=(const SpmModel&) = delete;

  std::vector<int> encode(std::string_view text) const;
  bool is_byte(int id) const;
  int pad_id() const;
  int eos_id() const;
  int unk_id() const;
  int piece_size() const;

  struct Api;  // the module's functions (spm_library.cpp)

 private:
  const Api* api_;
  void* model_ = nullptr;
};

}  // namespace ws::text
