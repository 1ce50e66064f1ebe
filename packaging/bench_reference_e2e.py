#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The reference for `wanstudio-engine bench train-e2e`: a VideoX-Fun-style upsampler training loop in
PyTorch over the same videos, sizes and widths — a torch DataLoader whose workers decode the clips
(OpenCV), resize to cover, centre-crop and downsample as train_upsampler.py's collate does; then per
step both VAE encodes under no_grad, the upsampler's forward, the MSE loss, backward, gradient clipping
and AdamW. Random weights. The model code is the reference projects' own, not this project's:

  --repo       a Wan-Video/Wan2.2 checkout (wan/modules/vae2_2.py, the Wan2.2 VAE)
  --upsampler  a diffusers checkout's src/diffusers/pipelines/ltx2/latent_upsampler.py (the module tree
               and forward VideoX-Fun's wan_latent_upsampler.py shares); without it, the installed
               diffusers package's own module

  packaging/bench_reference_e2e.py --repo ~/src/Wan2.2 --upsampler latent_upsampler.py \\
      --meta out/demo/data/metadata.json --size 256 --frames 17 --vae-dim 16 --vae-dec-dim 16 \\
      --mid-channels 64 --blocks 1 --steps 10 --warmup 2 --workers 1 --threads 2

Prints one JSON line with the engine's keys: samples_per_s, ms_per_step_median, data_wait_ms_median,
vae_ms_median, model_ms_median, peak_rss_mb, torch and stand_ins (as bench_reference.py). Runs on the
project's .venv (`packaging/python_env.sh --reference`: PyTorch 2.x, diffusers, einops, OpenCV from
PyPI) or on Debian's python3-torch 1.13 and python3-opencv (`packaging/deps.sh --bench`)."""
import argparse
import json
import math
import os
import random
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_reference import STAND_INS, load_upsampler_module, load_wan_vae_module  # noqa: E402
from reference_source import wan22_checkout  # noqa: E402


class Clips:
    """metadata.json rows -> (x_hr, x_lr) as train_upsampler.py's dataset and collate make them."""

    def __init__(self, rows, data_dir, H, W, h_lr, w_lr, frames, stride):
        self.rows, self.dir = rows, data_dir
        self.H, self.W, self.h_lr, self.w_lr, self.n, self.stride = H, W, h_lr, w_lr, frames, stride

    def __len__(self):
        return 1 << 30  # sampled with replacement, like a long epoch

    def __getitem__(self, i):
        import cv2
        import numpy as np
        import torch
        import torch.nn.functional as F
        rng = random.Random(i)
        row = self.rows[rng.randrange(len(self.rows))]
        cap = cv2.VideoCapture(os.path.join(self.dir, row["file_path"]))
        total = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
        span = (self.n - 1) * self.stride + 1
        start = rng.randrange(max(1, total - span + 1))
        cap.set(cv2.CAP_PROP_POS_FRAMES, start)
        frames, k = [], 0
        while len(frames) < self.n:
            ok, f = cap.read()
            if not ok:
                break
            if k % self.stride == 0:
                frames.append(cv2.cvtColor(f, cv2.COLOR_BGR2RGB))
            k += 1
        cap.release()
        L = max(1, (len(frames) - 1) // 4 * 4 + 1)
        x = torch.from_numpy(np.stack(frames[:L])).permute(0, 3, 1, 2).float() / 255.0  # [L, 3, H0, W0]
        H0, W0 = x.shape[-2:]
        if self.H / H0 > self.W / W0:
            size = (self.H, int(W0 * self.H / H0))
        else:
            size = (int(H0 * self.W / W0), self.W)
        x = F.interpolate(x, size=size, mode="bilinear", align_corners=False, antialias=True)
        top, left = round((size[0] - self.H) / 2), round((size[1] - self.W) / 2)
        x = (x[:, :, top:top + self.H, left:left + self.W] - 0.5) / 0.5
        x_lr = F.interpolate(x, size=(self.h_lr, self.w_lr), mode="bilinear", align_corners=False)
        return x.permute(1, 0, 2, 3).contiguous(), x_lr.permute(1, 0, 2, 3).contiguous()  # [3, L, ., .]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", help="a Wan-Video/Wan2.2 checkout (default: the pinned snapshot, fetched once)")
    ap.add_argument("--upsampler", help="a diffusers checkout's pipelines/ltx2/latent_upsampler.py "
                    "(default: the installed diffusers package's)")
    ap.add_argument("--meta", required=True)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--frames", type=int, default=17)
    ap.add_argument("--stride", type=int, default=2)
    ap.add_argument("--scale", type=float, default=1.5)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--vae-dim", type=int, default=16)
    ap.add_argument("--vae-dec-dim", type=int, default=16)
    ap.add_argument("--mid-channels", type=int, default=64)
    ap.add_argument("--blocks", type=int, default=1)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    import torch
    torch.set_num_threads(a.threads)
    if os.environ.get("WS_REF_FLUSH_DENORMAL"):
        torch.set_flush_denormal(True)
    vae_mod = load_wan_vae_module(wan22_checkout(a.repo)[0], "wan2.2")
    up_mod = load_upsampler_module(a.upsampler)
    rows = json.load(open(a.meta))
    data_dir = a.data_dir or os.path.dirname(os.path.abspath(a.meta))
    A = math.lcm(16, int(16 * a.scale))
    H = W = max(A, a.size // A * A)
    h_lr, w_lr = int(H / a.scale / 16) * 16, int(W / a.scale / 16) * 16

    torch.manual_seed(0)
    vae = vae_mod.WanVAE_(dim=a.vae_dim, dec_dim=a.vae_dec_dim, z_dim=48, dim_mult=[1, 2, 4, 4], num_res_blocks=2,
                          attn_scales=[], temperal_downsample=[False, True, True], dropout=0.0)
    vae.eval().requires_grad_(False)
    scale = [torch.zeros(48), torch.ones(48)]
    model = up_mod.LTX2LatentUpsamplerModel(in_channels=48, mid_channels=a.mid_channels,
                                            num_blocks_per_stage=a.blocks, rational_spatial_scale=a.scale)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.999), weight_decay=1e-2, eps=1e-8)

    def worker_init(_):
        torch.set_num_threads(1)

    dl = torch.utils.data.DataLoader(Clips(rows, data_dir, H, W, h_lr, w_lr, a.frames, a.stride), batch_size=a.batch,
                                     num_workers=a.workers, worker_init_fn=worker_init if a.workers else None,
                                     persistent_workers=a.workers > 0)
    it = iter(dl)
    step_s, wait_s, vae_s, model_s = [], [], [], []
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        x_hr, x_lr = next(it)
        t1 = time.perf_counter()
        with torch.no_grad():
            z_hr = torch.stack([vae.encode(x_hr[b:b + 1], scale)[0] for b in range(x_hr.shape[0])])
            z_lr = torch.stack([vae.encode(x_lr[b:b + 1], scale)[0] for b in range(x_lr.shape[0])])
        t2 = time.perf_counter()
        loss = torch.nn.functional.mse_loss(model(z_lr).float(), z_hr.float())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        t3 = time.perf_counter()
        print(f"reference train-e2e: {'step' if i >= a.warmup else 'warmup'} {i + 1}: {(t3 - t0) * 1000:.0f} ms "
              f"(data {(t1 - t0) * 1000:.0f}, vae {(t2 - t1) * 1000:.0f}, model {(t3 - t2) * 1000:.0f}), "
              f"clip {list(x_hr.shape)}, loss {loss.item():.4f}",
              file=sys.stderr)
        if i >= a.warmup:
            step_s.append(t3 - t0), wait_s.append(t1 - t0), vae_s.append(t2 - t1), model_s.append(t3 - t2)
    ms = lambda v: statistics.median(v) * 1000
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"bench": "train-e2e", "reference": "VideoX-Fun-style loop (Wan2.2 vae2_2.py, diffusers ltx2 upsampler)",
                      "torch": torch.__version__, "stand_ins": STAND_INS,
                      "size_hr": [H, W], "size_lr": [h_lr, w_lr], "frames": a.frames, "threads": a.threads,
                      "workers": a.workers, "vae_dim": a.vae_dim, "vae_dec_dim": a.vae_dec_dim,
                      "mid_channels": a.mid_channels, "blocks": a.blocks, "steps": len(step_s),
                      "samples_per_s": a.batch * len(step_s) / sum(step_s), "ms_per_step": [s * 1000 for s in step_s],
                      "ms_per_step_median": ms(step_s), "data_wait_ms_median": ms(wait_s), "vae_ms_median": ms(vae_s),
                      "model_ms_median": ms(model_s), "peak_rss_mb": rss}))
    os._exit(0)  # the DataLoader's workers hold an endless sampler


if __name__ == "__main__":
    main()
