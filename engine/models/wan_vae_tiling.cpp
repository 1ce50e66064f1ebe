// SPDX-License-Identifier: Apache-2.0
// docs/design/wan22-vae.md §12 decode tiling: spatial latent tiles, each decoded over the whole clip with its own
// caches, blended with linear ramps across the overlaps. Bounds activation memory by the
// tile size; not exact, because the receptive field crosses tile borders.
#include <algorithm>

#include "core/error.h"
#include "models/wan_vae.h"

namespace ws::models {
namespace {

// Tile starts along one axis: a stride of tile − overlap, the last tile flush with the end.
std::vector<int64_t> tile_starts(int64_t n, int64_t tile, int64_t overlap) {
  if (n <= tile) return {0};
  std::vector<int64_t> s;
  for (int64_t p = 0;; p += tile - overlap) {
    if (p + tile >= n) {
      s.push_back(n - tile);
      break;
    }
    s.push_back(p);
  }
  return s;
}

// Per-pixel blend weights along one axis: ramps up over `lead` pixels and down over `trail`.
torch::Tensor ramp(int64_t n, int64_t lead, int64_t trail) {
  auto w = torch::ones({n}, torch::kFloat);
  auto i = torch::arange(n, torch::kFloat);
  if (lead > 0) w = torch::minimum(w, (i + 0.5) / static_cast<double>(lead));
  if (trail > 0) w = torch::minimum(w, (static_cast<double>(n) - i - 0.5) / static_cast<double>(trail));
  return w;
}

}  // namespace

torch::Tensor WanVae::decode_tiled(const torch::Tensor& z) {
  const int64_t tile = opts_.tile, overlap = opts_.tile_overlap;
  if (tile < 1 || overlap < 0 || overlap >= tile)
    throw Error("VAE tiled decode: need tile >= 1 and 0 <= overlap < tile, got tile " + std::to_string(tile) +
                ", overlap " + std::to_string(overlap));
  const int64_t h = z.size(3), w = z.size(4);
  if (h <= tile && w <= tile) return net_->decode_raw(z, opts_.schedule);
  const int64_t f = cfg_.spatial_factor(), ov = overlap * f;
  torch::Tensor out, weight;
  for (int64_t y0 : tile_starts(h, tile, overlap)) {
    for (int64_t x0 : tile_starts(w, tile, overlap)) {
      const int64_t th = std::min(tile, h), tw = std::min(tile, w);
      auto px = net_->decode_raw(z.narrow(3, y0, th).narrow(4, x0, tw).contiguous(), opts_.schedule).to(torch::kFloat);
      if (!out.defined()) {
        out = torch::zeros({px.size(0), px.size(1), px.size(2), h * f, w * f}, px.options());
        weight = torch::zeros({h * f, w * f}, px.options());
      }
      auto wy = ramp(th * f, y0 > 0 ? ov : 0, y0 + th < h ? ov : 0).to(px.device());
      auto wx = ramp(tw * f, x0 > 0 ? ov : 0, x0 + tw < w ? ov : 0).to(px.device());
      auto wt = wy.unsqueeze(1) * wx.unsqueeze(0);
      out.narrow(3, y0 * f, th * f).narrow(4, x0 * f, tw * f).add_(px.mul_(wt));
      weight.narrow(0, y0 * f, th * f).narrow(1, x0 * f, tw * f).add_(wt);
    }
  }
  return out.div_(weight);
}

}  // namespace ws::models
