// SPDX-License-Identifier: Apache-2.0
#include "train/experts/latent_encoding.h"

#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/sha256.h"
#include "data/clip_loader.h"
#include "dataset/metadata.h"
#include "io/safetensors.h"
#include "io/weights.h"
#include "models/vae_latent_file.h"
#include "train/experts/expert_conditioning.h"

namespace ws::train {
namespace {

namespace fsys = std::filesystem;

// What decides a row's latents besides the VAE: a file whose `encode_key` differs is redone.
std::string encode_key(const LatentEncodeOptions& o, const std::string& vae_sha, const std::string& file) {
  std::error_code ec;
  const auto size = fsys::file_size(file, ec);
  const auto mtime = fsys::last_write_time(file, ec).time_since_epoch().count();
  nlohmann::json j{{"vae_sha256", vae_sha},      {"seed", o.seed},     {"sample_size", o.sample_size},
                   {"n_frames", o.n_frames},     {"stride", o.stride}, {"enable_bucket", o.enable_bucket},
                   {"from_start", o.from_start}, {"i2v", o.i2v},       {"file", file},
                   {"file_size", ec ? 0 : size}, {"file_mtime", mtime}};
  return sha256_hex(j.dump());
}

bool usable_existing(const std::string& path, const std::string& key) {
  if (!fs::exists(path)) return false;
  try {
    auto meta = io::weights_metadata(path);
    auto it = meta.find("encode_key");
    return it != meta.end() && it->second == key;
  } catch (const std::exception&) {
    return false;  // unreadable: encoded again
  }
}

// A path of the input metadata, as the output metadata (in out_dir) must write it.
std::string relative_to(const std::string& resolved, const std::string& out_dir) {
  std::error_code ec;
  const fsys::path abs = fsys::absolute(resolved, ec).lexically_normal();
  const fsys::path rel = abs.lexically_relative(fsys::absolute(out_dir, ec).lexically_normal());
  return rel.empty() ? abs.string() : rel.string();
}

}  // namespace

LatentEncodeReport encode_latent_rows(const LatentEncodeOptions& o,
                                      const std::function<void(int64_t, int64_t)>& progress,
                                      const std::function<bool()>& cancel) {
  LatentEncodeReport r;
  dataset::Metadata meta = dataset::read_metadata(o.metadata, o.data_dir);
  std::vector<data::DroppedRow> dropped;
  std::vector<data::TrainRow> rows = data::usable_rows(meta, o.stride, &dropped);
  for (const auto& d : dropped)
    r.failed.push_back("row " + std::to_string(d.meta_index) + " (" + d.file + "): " + d.reason);
  r.rows = static_cast<int64_t>(rows.size());
  if (rows.empty()) throw Error(o.metadata + ": no usable rows to encode");

  models::WanVaeOptions vo = o.vae;
  vo.encoder_only = true;  // the decoder's weights are never read
  auto vae = models::WanVae::load(o.vae_path, o.vae_config, vo);
  const auto& cfg = vae->config();
  r.vae_type = models::vae_type_name(cfg.type);
  r.z_dim = cfg.z_dim;
  const std::string vae_sha = sha256_file(o.vae_path);

  // The loader a latent-cached training run builds: the same windows and bucket sizes.
  data::LoaderOptions lo;
  lo.seed = o.seed;
  lo.sample_size = o.sample_size;
  lo.n_frames = o.n_frames;
  lo.stride = o.stride;
  lo.scale = static_cast<double>(cfg.spatial_factor()) / 8.0;  // buckets align to twice the VAE stride
  lo.batch_size = 1;
  lo.enable_bucket = o.enable_bucket;
  lo.random_hw_adapt = false;  // one size per row: a file cannot follow a per-batch size
  lo.frames_per_row = !o.from_start;
  lo.start_at_zero = o.from_start;
  lo.workers = 0;
  data::ClipLoader loader(rows, lo);

  const std::string latent_dir = fs::join(o.out_dir, "latents");
  fs::make_dirs(latent_dir);
  std::vector<dataset::MetaRow> out_rows;
  const int64_t total = r.rows;
  if (progress) progress(0, total);  // the VAE is loaded: the count is known
  torch::NoGradGuard no_grad;
  for (int64_t i = 0; i < total; ++i) {
    if (cancel && cancel()) {
      r.cancelled = true;
      return r;
    }
    const data::TrainRow& row = rows[static_cast<size_t>(i)];
    char name[32];
    std::snprintf(name, sizeof name, "row%05zu.safetensors", row.meta_index);
    const std::string path = fs::join(latent_dir, name);
    const std::string key = encode_key(o, vae_sha, row.path);
    bool ok = true;
    if (usable_existing(path, key)) {
      ++r.existing;
    } else {
      data::BatchPlan plan;
      plan.items.push_back({i, 0, i});
      data::Batch b;
      try {
        b = loader.make_batch(plan);
      } catch (const std::exception& e) {
        ok = false;
        r.failed.push_back("row " + std::to_string(row.meta_index) + " (" + row.path + "): " + e.what());
      }
      // A row that fails to decode is replaced by another in training; here it is reported.
      if (ok && b.clips.front().meta_index != row.meta_index) {
        ok = false;
        r.failed.push_back("row " + std::to_string(row.meta_index) + " (" + row.path + "): does not decode");
      }
      if (ok) {
        const torch::Tensor& x = b.x_hr;  // [1, 3, L, H, W]
        io::StateDict sd;
        sd["latents"] = vae->encode(x)[0].contiguous();
        if (o.i2v) sd["y"] = i2v_y(vae->encode(first_frame_clip(x))[0]).contiguous();
        std::vector<int64_t> frames(b.clips.front().frames.begin(), b.clips.front().frames.begin() + x.size(2));
        auto m = models::latent_file_metadata(vae_sha, fs::basename(o.vae_path), cfg, x.size(2), x.size(3), x.size(4),
                                              frames);
        m["encode_key"] = key;
        m["source"] = row.path;
        io::write_safetensors(path, sd, m);  // a temporary name, then renamed
        ++r.encoded;
      }
    }
    if (ok) {
      dataset::MetaRow out = meta.rows[row.meta_index];
      out.file_path = relative_to(meta.resolve(out), o.out_dir);
      out.raw["latent_path"] = "latents/" + std::string(name);
      if (out.raw.contains("text_embedding_path") && out.raw["text_embedding_path"].is_string()) {
        const std::string p = out.raw["text_embedding_path"].get<std::string>();
        if (!p.empty() && p[0] != '/')
          out.raw["text_embedding_path"] = relative_to(fs::join(meta.data_dir, p), o.out_dir);
      }
      out_rows.push_back(std::move(out));
    }
    if (progress) progress(i + 1, total);
  }
  if (out_rows.empty()) throw Error(o.metadata + ": no row could be encoded");
  r.metadata_out = fs::join(o.out_dir, "metadata.json");
  dataset::write_metadata(r.metadata_out, out_rows);
  return r;
}

}  // namespace ws::train
