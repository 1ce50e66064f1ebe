// SPDX-License-Identifier: Apache-2.0
#include "text/spm_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <mutex>

#include "core/error.h"
#include "core/fs.h"
#include "text/spm/spm_api.h"

namespace ws::text {
namespace {
// ASan's and TSan's runtimes abort on RTLD_DEEPBIND, and without it the module's protobuf clashes
// with the one OpenCV brings: a sanitizer build says so instead of loading it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
}  // namespace

struct SpmModel::Api {
  decltype(&ws_spm_load) load;
  decltype(&ws_spm_free) free;
  decltype(&ws_spm_encode) encode;
  decltype(&ws_spm_free_ids) free_ids;
  decltype(&ws_spm_is_byte) is_byte;
  decltype(&ws_spm_pad_id) pad_id;
  decltype(&ws_spm_eos_id) eos_id;
  decltype(&ws_spm_unk_id) unk_id;
  decltype(&ws_spm_piece_size) piece_size;
};

namespace {

constexpr const char* kModule = "libwanstudio_spm.so";

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("WANSTUDIO_SPM_MODULE")) out.push_back(env);
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    const std::string dir = fs::dirname(std::string(exe, static_cast<size_t>(n)));
    out.push_back(fs::join(dir, kModule));
    out.push_back(fs::join(dir, std::string("../lib/wanstudio/") + kModule));
    out.push_back(fs::join(dir, std::string("../engine/") + kModule));  // tests beside the engine's build folder
  }
#ifdef WANSTUDIO_SPM_MODULE_BUILD_PATH
  out.push_back(WANSTUDIO_SPM_MODULE_BUILD_PATH);
#endif
  return out;
}

const SpmModel::Api& api() {
  static std::once_flag once;
  static SpmModel::Api a{};
  static std::string error;
  std::call_once(once, [] {
    if (kSanitized) {
      error =
          "this is a sanitizer build: the SentencePiece module cannot be loaded in isolation here "
          "(RTLD_DEEPBIND); tokenizers work in the regular build";
      return;
    }
    void* h = nullptr;
    std::string tried;
    for (const auto& c : candidates()) {
      if (!fs::exists(c)) {
        tried += (tried.empty() ? "" : ", ") + c;
        continue;
      }
      // DEEPBIND: the module's libsentencepiece uses its own protobuf; LOCAL: nothing else sees it.
      h = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (h) break;
      tried += (tried.empty() ? "" : ", ") + c + " (" + ::dlerror() + ")";
    }
    if (!h) {
      error = std::string("the SentencePiece module ") + kModule + " was not found or did not load (tried " + tried +
              "); it is built with the engine and needs Debian's libsentencepiece0";
      return;
    }
    auto sym = [&](const char* name) {
      void* p = ::dlsym(h, name);
      if (!p) error = std::string(kModule) + ": no symbol " + name;
      return p;
    };
    a.load = reinterpret_cast<decltype(a.load)>(sym("ws_spm_load"));
    a.free = reinterpret_cast<decltype(a.free)>(sym("ws_spm_free"));
    a.encode = reinterpret_cast<decltype(a.encode)>(sym("ws_spm_encode"));
    a.free_ids = reinterpret_cast<decltype(a.free_ids)>(sym("ws_spm_free_ids"));
    a.is_byte = reinterpret_cast<decltype(a.is_byte)>(sym("ws_spm_is_byte"));
    a.pad_id = reinterpret_cast<decltype(a.pad_id)>(sym("ws_spm_pad_id"));
    a.eos_id = reinterpret_cast<decltype(a.eos_id)>(sym("ws_spm_eos_id"));
    a.unk_id = reinterpret_cast<decltype(a.unk_id)>(sym("ws_spm_unk_id"));
    a.piece_size = reinterpret_cast<decltype(a.piece_size)>(sym("ws_spm_piece_size"));
  });
  if (!error.empty()) throw Error(error);
  return a;
}

}  // namespace

SpmModel::SpmModel(const std::string& path) : api_(&api()) {
  char err[512] = {0};
  model_ = api_->load(path.c_str(), err, sizeof(err));
  if (!model_) throw Error(path + ": not a SentencePiece model (" + err + ")");
}

SpmModel::~SpmModel() {
  if (model_) api_->free(static_cast<ws_spm*>(model_));
}

std::vector<int> SpmModel::encode(std::string_view text) const {
  int* ids = nullptr;
  size_t n = 0;
  char err[512] = {0};
  if (api_->encode(static_cast<const ws_spm*>(model_), text.data(), text.size(), &ids, &n, err, sizeof(err)) != 0)
    throw Error(std::string("tokenizer: ") + err);
  std::vector<int> out(ids, ids + n);
  api_->free_ids(ids);
  return out;
}

bool SpmModel::is_byte(int id) const { return api_->is_byte(static_cast<const ws_spm*>(model_), id) != 0; }
int SpmModel::pad_id() const { return api_->pad_id(static_cast<const ws_spm*>(model_)); }
int SpmModel::eos_id() const { return api_->eos_id(static_cast<const ws_spm*>(model_)); }
int SpmModel::unk_id() const { return api_->unk_id(static_cast<const ws_spm*>(model_)); }
int SpmModel::piece_size() const { return api_->piece_size(static_cast<const ws_spm*>(model_)); }

}  // namespace ws::text
