// SPDX-License-Identifier: Apache-2.0
#include "train/latent_cache.h"

#include <sys/stat.h>

#include <initializer_list>
#include <string>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/sha256.h"
#include "io/safetensors.h"

namespace ws::train {

LatentCache::LatentCache(std::string dir, std::string vae_sha256)
    : dir_(std::move(dir)), vae_sha_(std::move(vae_sha256)) {
  fs::make_dirs(dir_);
}

std::string LatentCache::content_hash(const std::string& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) throw Error(file + ": cannot stat for the latent cache");
  // Whole-second mtimes would miss a rewrite within the same second: nanoseconds, inode and ctime.
  auto ns = [](const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; };
  auto k = std::make_tuple(file, static_cast<int64_t>(st.st_size), ns(st.st_mtim), static_cast<int64_t>(st.st_ino),
                           ns(st.st_ctim));
  auto it = file_hashes_.find(k);
  if (it != file_hashes_.end()) return it->second;
  std::string h = sha256_file(file);
  file_hashes_.emplace(k, h);
  return h;
}

std::string LatentCache::key(const std::string& file, const std::vector<int64_t>& frames, int64_t H, int64_t W,
                             int64_t h_lr, int64_t w_lr) {
  std::string s = "wanstudio-latent-cache-v1|" + content_hash(file) + "|" + vae_sha_ + "|";
  for (int64_t f : frames) s += std::to_string(f) + ",";
  for (const std::string& part : std::initializer_list<std::string>{"|", std::to_string(H), "x", std::to_string(W), "|",
                                                                    std::to_string(h_lr), "x", std::to_string(w_lr)})
    s += part;
  s += "|cover-bilinear-antialias|lr-bilinear";  // the resize settings of docs/design/upsampler-training.md §4.2
  return sha256_hex(s);
}

bool LatentCache::load(const std::string& key, torch::Tensor* z_hr, torch::Tensor* z_lr) {
  const std::string path = fs::join(dir_, key + ".safetensors");
  if (!fs::exists(path)) {
    ++misses_;
    return false;
  }
  try {
    io::StateDict sd = io::read_safetensors(path);
    auto a = sd.find("z_hr"), b = sd.find("z_lr");
    if (a == sd.end() || b == sd.end() || a->second.dim() != 4 || b->second.dim() != 4 ||
        a->second.size(1) != b->second.size(1))
      throw Error(path + ": not a latent cache entry");
    *z_hr = a->second.to(torch::kFloat).clone();
    *z_lr = b->second.to(torch::kFloat).clone();
  } catch (const std::exception& e) {
    ws::log::warn("latent cache entry unusable, recomputing: {}", e.what());
    ++misses_;
    return false;
  }
  ++hits_;
  return true;
}

void LatentCache::store(const std::string& key, const torch::Tensor& z_hr, const torch::Tensor& z_lr) {
  io::StateDict sd;
  sd["z_hr"] = z_hr.detach().to(torch::kCPU, torch::kFloat).contiguous();
  sd["z_lr"] = z_lr.detach().to(torch::kCPU, torch::kFloat).contiguous();
  io::write_safetensors(fs::join(dir_, key + ".safetensors"), sd, {{"vae_sha256", vae_sha_}});
}

}  // namespace ws::train
