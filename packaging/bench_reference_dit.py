#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The reference side of `wanstudio-engine bench dit-train` and `bench sample-step`: the official
WanModel (wan/modules/model.py of a Wan-Video/Wan2.2 checkout, not part of this project) doing the
engine's work per step, on the CPU, fp32, fresh weights (seed 0), random latents and text.

  dit-train    x_t = (1 - σ)·x0 + σ·noise at σ 0.5 (t 500), loss MSE(model(x_t), noise - x0), backward,
               clip_grad_norm_(1.0), AdamW (lr 1e-5); --gradient-checkpointing recomputes each block
               in backward (torch.utils.checkpoint, as the training projects wrap the blocks)
  sample-step  steps of the official sampling loop: two forwards (prompt, negative prompt), guidance 5,
               FlowUniPCMultistepScheduler (wan/utils/fm_solvers_unipc.py) with shift 5

  .venv/bin/python packaging/bench_reference_dit.py --repo WAN22 --kind dit-train \\
      --dim 1536 --ffn-dim 8960 --heads 12 --layers 2 --tokens 1024 --threads 2

The official attention is flash-attn (CUDA only): on the CPU PyTorch 2.x's scaled_dot_product_attention
stands in, in the inputs' dtype (fp32), over all text_len context rows as the model pads them.
Differences in work (docs/design/performance.md §0): the model embeds the timestep per token (t
expanded to seq_len, Wan2.2's layout), the engine once per sample; --per-sample-t gives the reference
the engine's work there (the time MLP and projection on one row, broadcast). Prints one JSON line: ms_per_step, ms_per_step_median, peak_rss_mb, torch (and with --breakdown
the parts of the step, as the engine's `bench dit-train --breakdown`).
Needs the project's .venv (`packaging/python_env.sh --reference`: PyTorch 2.x, diffusers)."""
import argparse
import importlib
import json
import math
import resource
import statistics
import sys
import os
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_source import PIN, wan22_checkout  # noqa: E402


def load(repo):
    """wan/modules/model.py and wan/utils/fm_solvers_unipc.py as modules of their own packages
    (wan/__init__.py would import every pipeline)."""
    for name, sub in (("wsref_wan_modules", "modules"), ("wsref_wan_utils", "utils")):
        pkg = types.ModuleType(name)
        pkg.__path__ = [f"{repo}/wan/{sub}"]
        sys.modules[name] = pkg
    model = importlib.import_module("wsref_wan_modules.model")
    import torch

    def cpu_attention(q, k, v, q_lens=None, k_lens=None, **_):
        # [B, L, N, d] in and out, as flash_attention; SDPA's CPU kernel (flash-style, no stored scores).
        out = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        return out.transpose(1, 2).contiguous()

    model.flash_attention = cpu_attention
    return model


def per_sample_time_embedding(model):
    """--per-sample-t: the time MLP and projection run on one row per sample and are broadcast to the
    tokens, as the engine computes them (the rows are equal: t2v gives every token the sample's t)."""
    import torch

    class OnFirstRow(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):  # [B, L, C] with equal rows
            y = self.inner(x[:, :1])
            return y.expand(x.shape[0], x.shape[1], *y.shape[2:])

    model.time_embedding = OnFirstRow(model.time_embedding)
    model.time_projection = OnFirstRow(model.time_projection)


def step_parts(m, model, opt, tokens, text, grid, per_sample_t, reps=3):
    """--breakdown: the parts of one block forward and backward on the step's shapes, with the
    reference's own modules and functions, and the whole model's AdamW and clipping; the same
    parts as the engine's `bench dit-train --breakdown` (engine/cli/bench/bench_dit_parts.cpp)."""
    import torch

    blk = model.blocks[0]
    D, n = model.dim, model.num_heads
    d = D // n
    L, T = tokens, text

    def part(fn):
        fn()
        ms = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            ms.append((time.perf_counter() - t0) * 1000)
        return statistics.median(ms)

    def fwd_bwd(f, leaves):
        y = f()
        y.backward(torch.ones_like(y))
        for t in leaves:
            t.grad = None
        blk.zero_grad(set_to_none=True)

    def leaf(*shape):
        return torch.randn(*shape).requires_grad_(True)

    per_block = {}
    # Attention alone, in flash_attention's layout [B, L, n, d]: self over L×L, cross over L×T.
    q, k, v, kc, vc = leaf(1, L, n, d), leaf(1, L, n, d), leaf(1, L, n, d), leaf(1, T, n, d), leaf(1, T, n, d)
    per_block["attention"] = part(lambda: (fwd_bwd(lambda: m.flash_attention(q, k, v), [q, k, v]),
                                           fwd_bwd(lambda: m.flash_attention(q, kc, vc), [q, kc, vc])))
    # The block's ten Linears with its own weights.
    x, c, hid = leaf(1, L, D), leaf(1, T, D), leaf(1, L, model.ffn_dim)
    sa, ca = blk.self_attn, blk.cross_attn
    per_block["linears"] = part(lambda: fwd_bwd(
        lambda: (sa.q(x) + sa.k(x) + sa.v(x) + sa.o(x) + ca.q(x) + ca.o(x) + blk.ffn[2](hid)).sum()
        + (ca.k(c) + ca.v(c)).sum() + blk.ffn[0](x).sum(), [x, c, hid]))
    # Norms, modulation (per token unless --per-sample-t, as the model's e), gating, GELU.
    e = leaf(1, 1 if per_sample_t else L, 6, D)
    qk = leaf(1, L, D)

    def norms():
        ee = (blk.modulation.unsqueeze(0) + e).chunk(6, dim=2)
        a = blk.norm1(x).float() * (1 + ee[1].squeeze(2)) + ee[0].squeeze(2)
        r = x + a * ee[2].squeeze(2)
        f = blk.norm2(r).float() * (1 + ee[4].squeeze(2)) + ee[3].squeeze(2)
        g = r + f * ee[5].squeeze(2)
        nr = sa.norm_q(qk) + sa.norm_k(qk) + ca.norm_k(blk.norm3(g))
        return g.sum() + nr.sum() + blk.ffn[1](hid).sum()

    per_block["norms_modulation"] = part(lambda: fwd_bwd(norms, [x, e, qk, hid]))
    # RoPE on the self-attention's queries and keys (the model's rope_apply, float64 complex).
    f, h, w = grid
    grid_sizes = torch.tensor([[f, h // 2, w // 2]])
    qr, kr = leaf(1, L, n, d), leaf(1, L, n, d)
    per_block["rope"] = part(lambda: fwd_bwd(
        lambda: m.rope_apply(qr, grid_sizes, model.freqs) + m.rope_apply(kr, grid_sizes, model.freqs), [qr, kr]))
    # The whole model's clipping and AdamW, gradients present.
    params = list(model.parameters())
    for p_ in params:
        p_.grad = torch.randn_like(p_) * 1e-3
    whole = {"clip": part(lambda: torch.nn.utils.clip_grad_norm_(params, 1e-6)),
             "adamw": part(lambda: opt.step())}
    opt.zero_grad(set_to_none=True)
    return {"per_block_ms": per_block, "whole_model_ms": whole, "reps": reps}


def token_grid(tokens):
    # The engine's bench_token_grid: frames f, then the most nearly square h×w patches.
    f = 1
    while tokens // f > 1024 * 1024 or tokens % f:
        f += 1
    per = tokens // f
    h = int(math.isqrt(per))
    while per % h:
        h -= 1
    return f, 2 * h, 2 * (per // h)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", help="a Wan-Video/Wan2.2 checkout (default: the pinned snapshot, fetched once)")
    ap.add_argument("--kind", choices=["dit-train", "sample-step"], required=True)
    ap.add_argument("--dim", type=int, default=1536)
    ap.add_argument("--ffn-dim", type=int, default=8960)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--in-dim", type=int, default=16)
    ap.add_argument("--text-len", type=int, default=512)
    ap.add_argument("--text-dim", type=int, default=4096)
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--gradient-checkpointing", action="store_true")
    ap.add_argument("--per-sample-t", action="store_true",
                    help="the same work as the engine: the time embedding once per sample, not per token")
    ap.add_argument("--breakdown", action="store_true",
                    help="dit-train: then time each part of the step alone (the engine's --breakdown)")
    ap.add_argument("--steps", type=int, default=3, help="dit-train: timed steps; sample-step: steps per run")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--reps", type=int, default=3, help="sample-step: timed runs")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    import torch
    torch.set_num_threads(a.threads)
    repo, pinned = wan22_checkout(a.repo)
    m = load(repo)
    torch.manual_seed(0)
    model = m.WanModel(model_type="t2v", patch_size=(1, 2, 2), text_len=a.text_len, in_dim=a.in_dim, dim=a.dim,
                       ffn_dim=a.ffn_dim, freq_dim=256, text_dim=a.text_dim, out_dim=a.in_dim, num_heads=a.heads,
                       num_layers=a.layers, qk_norm=True, cross_attn_norm=True, eps=1e-6)
    if a.per_sample_t:
        per_sample_time_embedding(model)
    f, h, w = token_grid(a.tokens)
    seq_len = f * (h // 2) * (w // 2)
    times = []
    if a.kind == "dit-train":
        model.train()
        if a.gradient_checkpointing:
            import torch.utils.checkpoint as cp
            for blk in model.blocks:
                blk._ws_forward = blk.forward
                blk.forward = (lambda b: lambda x, **kw: cp.checkpoint(b._ws_forward, x, use_reentrant=False, **kw))(blk)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5, weight_decay=1e-2)
        x0, noise = torch.randn(a.in_dim, f, h, w), torch.randn(a.in_dim, f, h, w)
        ctx = torch.randn(a.text_len, a.text_dim)
        t = torch.tensor([500.0])
        for i in range(a.warmup + a.steps):
            t0 = time.perf_counter()
            x_t = 0.5 * x0 + 0.5 * noise
            out = model([x_t], t=t, context=[ctx], seq_len=seq_len)[0]
            loss = torch.nn.functional.mse_loss(out, noise - x0)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            ms = (time.perf_counter() - t0) * 1000
            if i >= a.warmup:
                times.append(ms)
            print(f"reference dit-train: {'step' if i >= a.warmup else 'warmup'} {ms:.1f} ms", file=sys.stderr)
    else:
        importlib.import_module("wsref_wan_utils")
        unipc = importlib.import_module("wsref_wan_utils.fm_solvers_unipc")
        model.eval().requires_grad_(False)
        noise = torch.randn(a.in_dim, f, h, w)
        ctx, ctx_null = torch.randn(a.text_len, a.text_dim), torch.randn(a.text_len, a.text_dim)
        with torch.no_grad():
            for i in range(a.warmup + a.reps):
                sched = unipc.FlowUniPCMultistepScheduler(num_train_timesteps=1000, shift=1, use_dynamic_shifting=False)
                sched.set_timesteps(a.steps, device="cpu", shift=5.0)
                lat = noise
                t0 = time.perf_counter()
                for t in sched.timesteps:
                    ts = torch.stack([t])
                    cond = model([lat], t=ts, context=[ctx], seq_len=seq_len)[0]
                    uncond = model([lat], t=ts, context=[ctx_null], seq_len=seq_len)[0]
                    pred = uncond + 5.0 * (cond - uncond)
                    lat = sched.step(pred.unsqueeze(0), t, lat.unsqueeze(0), return_dict=False)[0].squeeze(0)
                ms = (time.perf_counter() - t0) * 1000 / a.steps
                if i >= a.warmup:
                    times.append(ms)
                print(f"reference sample-step: {'run' if i >= a.warmup else 'warmup'} {ms:.1f} ms per step", file=sys.stderr)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before the breakdown
    breakdown = None
    if a.breakdown and a.kind == "dit-train":
        breakdown = step_parts(m, model, opt, seq_len, a.text_len, (f, h, w), a.per_sample_t)
        parts = sum(v * a.layers for v in breakdown["per_block_ms"].values()) + sum(breakdown["whole_model_ms"].values())
        breakdown["step_ms"] = statistics.median(times)
        breakdown["rest_ms"] = breakdown["step_ms"] - parts  # embeddings, head, loss, autograd's own work
    print(json.dumps({"bench": a.kind, "reference": m.__file__, "reference_pin": PIN if pinned else "differs", "torch": torch.__version__, "stand_ins": ["flash_attention"],
                      "dim": a.dim, "ffn_dim": a.ffn_dim, "layers": a.layers, "tokens": a.tokens, "latent": [a.in_dim, f, h, w],
                      "gradient_checkpointing": a.gradient_checkpointing, "per_sample_t": a.per_sample_t,
                      "threads": a.threads,
                      "params": sum(p.numel() for p in model.parameters()), "ms_per_step": times,
                      "ms_per_step_median": statistics.median(times), "peak_rss_mb": rss, "breakdown": breakdown}))


if __name__ == "__main__":
    main()
