#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Times the reference PyTorch Wan VAE on the same clip `wanstudio-engine bench vae-encode|vae-decode`
times, or the reference upsampler's training step as `bench upsampler-train` does, for side-by-side
figures (alternate the two; compare medians). The reference code is not part of this project: pass the
folder of a Wan-Video/Wan2.2 checkout (wan/modules/vae2_1.py, vae2_2.py), or for upsampler-train
diffusers' latent upsampler (pipelines/ltx2/latent_upsampler.py): the installed diffusers package's own
module, or that file of a diffusers checkout (--upsampler).

  packaging/bench_reference.py --repo ~/src/Wan2.2 --kind vae-decode --vae-type wan2.1 --frames 17 --size 256,256 --threads 2

Prints one JSON line like the engine's bench: ms_per_clip, ms_per_clip_median, peak_rss_mb, and what
ran: `torch` (its version) and `stand_ins` (what this file supplied because the Python lacked it).
The versions users run: the project's .venv (`packaging/python_env.sh --reference`: PyTorch 2.x, einops,
diffusers, transformers from PyPI), where nothing is stood in. Debian's python3-torch 1.13
(`packaging/deps.sh --bench`) lacks einops, diffusers and scaled_dot_product_attention: the stand-ins
below do exactly what the reference modules use of them."""
import argparse
import importlib.util
import json
import resource
import statistics
import sys
import os
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_source import PIN, wan22_checkout  # noqa: E402

# What this run supplied itself (printed with the figures, so a table says which reference ran).
STAND_INS = []


def einops_stand_in():
    # The VAE modules use rearrange for a few reshapes only (frames in and out of the batch axis,
    # Wan2.2's 2×2 patchify); when einops is not installed (Debian 12 has no package), this
    # stand-in does exactly those.
    def rearrange(x, pattern, **sizes):
        p = pattern.replace(" ", "")
        if p == "bcthw->(bt)chw":
            b, c, t, h, w = x.shape
            return x.permute(0, 2, 1, 3, 4).reshape(b * t, c, h, w)
        if p == "(bt)chw->bcthw":
            t = sizes["t"]
            bt, c, h, w = x.shape
            return x.reshape(bt // t, t, c, h, w).permute(0, 2, 1, 3, 4)
        if p == "bcf(hq)(wr)->b(crq)fhw":  # the Wan2.2 VAE's patchify
            q, r = sizes["q"], sizes["r"]
            b, c, f, hq, wr = x.shape
            x = x.reshape(b, c, f, hq // q, q, wr // r, r).permute(0, 1, 6, 4, 2, 3, 5)
            return x.reshape(b, c * r * q, f, hq // q, wr // r)
        if p == "b(crq)fhw->bcf(hq)(wr)":  # and its inverse
            q, r = sizes["q"], sizes["r"]
            b, crq, f, h, w = x.shape
            x = x.reshape(b, crq // (r * q), r, q, f, h, w).permute(0, 1, 4, 5, 3, 6, 2)
            return x.reshape(b, crq // (r * q), f, h * q, w * r)
        raise NotImplementedError("einops stand-in: " + pattern)

    mod = types.ModuleType("einops")
    mod.rearrange = rearrange
    return mod


# The loaders of the reference modules live here; bench_reference_e2e.py imports them (one way only).
def load_wan_vae_module(repo, vae_type):
    """wan/modules/vae2_1.py or vae2_2.py of a Wan2.2 checkout, with stand-ins for what torch 1.13 and
    Debian lack (scaled_dot_product_attention, einops)."""
    import torch
    import torch.nn.functional as F
    if not hasattr(F, "scaled_dot_product_attention"):
        # torch 1.13 (Debian 12) predates it: the plain softmax attention the VAE's single head needs.
        def sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False):
            w = torch.softmax((q @ k.transpose(-2, -1)) / (q.shape[-1] ** 0.5), dim=-1)
            return w @ v

        F.scaled_dot_product_attention = sdpa
        STAND_INS.append("scaled_dot_product_attention")
    try:
        import einops  # noqa: F401
    except ImportError:
        sys.modules["einops"] = einops_stand_in()
        STAND_INS.append("einops")
    name = "vae2_1" if vae_type == "wan2.1" else "vae2_2"
    spec = importlib.util.spec_from_file_location(name, f"{repo}/wan/modules/{name}.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def load_upsampler_module(path=None):
    """diffusers' latent upsampler module: the installed package's (no path), or a checkout's file."""
    if not path:
        try:
            from diffusers.pipelines.ltx2 import latent_upsampler
        except ImportError:
            sys.exit("bench_reference: diffusers is not installed here; pass --upsampler FILE "
                     "(or run the .venv's python: packaging/python_env.sh --reference)")
        return latent_upsampler
    # A loose file imports diffusers' ConfigMixin/ModelMixin relatively; stand-ins are all it needs.
    import torch
    STAND_INS.append("diffusers mixins")
    root = "wsref"
    for name in (root, f"{root}.pipelines", f"{root}.pipelines.ltx2", f"{root}.models"):
        mod = types.ModuleType(name)
        mod.__path__ = []
        sys.modules[name] = mod
    cfg = types.ModuleType(f"{root}.configuration_utils")
    cfg.ConfigMixin = type("ConfigMixin", (), {})
    cfg.register_to_config = lambda f: f
    sys.modules[cfg.__name__] = cfg
    mm = types.ModuleType(f"{root}.models.modeling_utils")
    mm.ModelMixin = torch.nn.Module
    sys.modules[mm.__name__] = mm
    spec = importlib.util.spec_from_file_location(f"{root}.pipelines.ltx2.latent_upsampler", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def upsampler_train(a):
    """Whole optimizer steps of the reference upsampler on random latents, as `bench upsampler-train`:
    forward, MSE against a random target, backward, clip_grad_norm_(1.0), AdamW."""
    import torch
    m = load_upsampler_module(a.upsampler)
    torch.manual_seed(0)
    model = m.LTX2LatentUpsamplerModel(in_channels=48, mid_channels=a.mid_channels, num_blocks_per_stage=a.blocks,
                                       rational_spatial_scale=1.5).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-2)
    f, h, w = (int(v) for v in a.latent.split(","))
    z_lr = torch.randn(1, 48, f, h, w)
    z_hr = torch.randn(1, 48, f, (3 * h + 1) // 2, (3 * w + 1) // 2)
    times = []
    for i in range(a.warmup + a.reps):
        t0 = time.perf_counter()
        loss = torch.nn.functional.mse_loss(model(z_lr), z_hr)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        ms = (time.perf_counter() - t0) * 1000
        if i >= a.warmup:
            times.append(ms)
        print(f"reference upsampler-train: {'rep' if i >= a.warmup else 'warmup'} {ms:.1f} ms", file=sys.stderr)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"bench": "upsampler-train", "reference": m.__file__, "torch": torch.__version__,
                      "stand_ins": STAND_INS, "mid_channels": a.mid_channels,
                      "blocks": a.blocks, "latent": [f, h, w], "threads": a.threads, "ms_per_step": times,
                      "ms_per_step_median": statistics.median(times), "peak_rss_mb": rss}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", help="a Wan-Video/Wan2.2 checkout for the VAE kinds (default: the pinned snapshot)")
    ap.add_argument("--kind", choices=["vae-encode", "vae-decode", "upsampler-train"], required=True)
    ap.add_argument("--upsampler", help="upsampler-train: a diffusers checkout's pipelines/ltx2/latent_upsampler.py "
                    "(default: the installed diffusers package's)")
    ap.add_argument("--mid-channels", type=int, default=512)
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--latent", default="21,20,34", help="upsampler-train: low-res latent F,H,W")
    ap.add_argument("--vae-type", choices=["wan2.1", "wan2.2"], default="wan2.2")
    ap.add_argument("--frames", type=int, default=5)
    ap.add_argument("--size", default="128,128", help="H,W")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    import torch

    torch.set_num_threads(a.threads)
    if a.kind == "upsampler-train":
        return upsampler_train(a)
    a.repo, pinned = wan22_checkout(a.repo)
    m = load_wan_vae_module(a.repo, a.vae_type)
    name = "vae2_1" if a.vae_type == "wan2.1" else "vae2_2"
    torch.manual_seed(0)
    if a.vae_type == "wan2.1":
        model = m.WanVAE_(dim=96, z_dim=16, dim_mult=[1, 2, 4, 4], num_res_blocks=2, attn_scales=[],
                          temperal_downsample=[False, True, True], dropout=0.0)
        z_dim, f = 16, 8
    else:
        model = m.WanVAE_(dim=160, dec_dim=256, z_dim=48, dim_mult=[1, 2, 4, 4], num_res_blocks=2, attn_scales=[],
                          temperal_downsample=[False, True, True], dropout=0.0)
        z_dim, f = 48, 16
    model.eval().requires_grad_(False)
    scale = [torch.zeros(z_dim), torch.ones(z_dim)]
    h, w = (int(v) for v in a.size.split(","))
    torch.manual_seed(1)
    if a.kind == "vae-encode":
        x = torch.rand(1, 3, a.frames, h, w) * 2 - 1
        run = lambda: model.encode(x, scale)
    else:
        z = torch.randn(1, z_dim, 1 + (a.frames - 1) // 4, h // f, w // f)
        run = lambda: model.decode(z, scale).clamp_(-1, 1)
    times = []
    with torch.no_grad():
        for i in range(a.warmup + a.reps):
            t0 = time.perf_counter()
            run()
            ms = (time.perf_counter() - t0) * 1000
            if i >= a.warmup:
                times.append(ms)
            print(f"reference {a.kind}: {'rep' if i >= a.warmup else 'warmup'} {ms:.1f} ms", file=sys.stderr)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"bench": a.kind, "reference": f"{a.repo}/wan/modules/{name}.py", "torch": torch.__version__,
                      "reference_pin": PIN if pinned else "differs",
                      "stand_ins": STAND_INS, "vae_type": a.vae_type,
                      "frames": a.frames, "height": h, "width": w, "threads": a.threads, "ms_per_clip": times,
                      "ms_per_clip_median": statistics.median(times), "peak_rss_mb": rss}))


if __name__ == "__main__":
    main()
