// SPDX-License-Identifier: Apache-2.0
// The C interface of the SentencePiece module (libwanstudio_spm.so). Debian's libsentencepiece
// carries its own copy of protobuf 3.14 and exports it; loaded into a process that also has
// LibTorch's protobuf 3.21, one copy's code runs on the other's data and crashes at start-up. So
// the engine never links it: this module does, and text/spm_library.cpp loads the module with
// RTLD_LOCAL | RTLD_DEEPBIND, which keeps each protobuf to its own library.
#pragma once
#include <stddef.h>

extern "C" {

typedef struct ws_spm ws_spm;

// NULL on failure, with the reason in err.
ws_spm* ws_spm_load(const char* path, char* err, size_t errlen);
void ws_spm_free(ws_spm* m);
// Ids of `text` into *ids (malloc'ed; free with ws_spm_free_ids). 0 on success.
int ws_spm_encode(const ws_spm* m, const char* text, size_t len, int** ids, size_t* n, char* err, size_t errlen);
void ws_spm_free_ids(int* ids);
int ws_spm_is_byte(const ws_spm* m, int id);
int ws_spm_pad_id(const ws_spm* m);
int ws_spm_eos_id(const ws_spm* m);
int ws_spm_unk_id(const ws_spm* m);
int ws_spm_piece_size(const ws_spm* m);
}
