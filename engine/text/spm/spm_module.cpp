// SPDX-License-Identifier: Apache-2.0
// libwanstudio_spm.so: SentencePiece behind the C interface of spm_api.h.
#include <sentencepiece_processor.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "text/spm/spm_api.h"

struct ws_spm {
  sentencepiece::SentencePieceProcessor sp;
};

namespace {

void set_err(char* err, size_t errlen, const std::string& m) {
  if (!err || errlen == 0) return;
  std::strncpy(err, m.c_str(), errlen - 1);
  err[errlen - 1] = 0;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) ws_spm* ws_spm_load(const char* path, char* err, size_t errlen) {
  auto* m = new ws_spm;
  const auto st = m->sp.Load(path);
  if (!st.ok()) {
    set_err(err, errlen, st.message());
    delete m;
    return nullptr;
  }
  return m;
}

__attribute__((visibility("default"))) void ws_spm_free(ws_spm* m) { delete m; }

__attribute__((visibility("default"))) int ws_spm_encode(const ws_spm* m, const char* text, size_t len, int** ids,
                                                         size_t* n, char* err, size_t errlen) {
  std::vector<int> out;
  const auto st = m->sp.Encode(std::string(text, len), &out);
  if (!st.ok()) {
    set_err(err, errlen, st.message());
    return 1;
  }
  *n = out.size();
  *ids = static_cast<int*>(std::malloc(sizeof(int) * (out.size() + 1)));
  if (!*ids) return 1;
  if (!out.empty()) std::memcpy(*ids, out.data(), sizeof(int) * out.size());
  return 0;
}

__attribute__((visibility("default"))) void ws_spm_free_ids(int* ids) { std::free(ids); }
__attribute__((visibility("default"))) int ws_spm_is_byte(const ws_spm* m, int id) { return m->sp.IsByte(id) ? 1 : 0; }
__attribute__((visibility("default"))) int ws_spm_pad_id(const ws_spm* m) { return m->sp.pad_id(); }
__attribute__((visibility("default"))) int ws_spm_eos_id(const ws_spm* m) { return m->sp.eos_id(); }
__attribute__((visibility("default"))) int ws_spm_unk_id(const ws_spm* m) { return m->sp.unk_id(); }
__attribute__((visibility("default"))) int ws_spm_piece_size(const ws_spm* m) { return m->sp.GetPieceSize(); }
}
