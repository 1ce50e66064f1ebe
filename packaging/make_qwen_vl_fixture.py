#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the Qwen2.5-VL captioning parity fixture into tests/data/qwen_vl/ (run once; outputs are committed):
a TINY random Qwen2.5-VL (2-layer Qwen2 decoder, 3-block vision tower) built with transformers 5.25.0, its
weights under the key names of the released Qwen/Qwen2.5-VL-7B-Instruct checkpoint, and one captioning case
(a 4-frame 56x84 video, the real chat template, prefill logits, 12 greedy tokens) plus smart_resize and
get_rope_index cases. See tests/data/qwen_vl/README.md for every file and convention.
Run from the repository root: .venv/bin/python packaging/make_qwen_vl_fixture.py  (no network; deterministic:
a second run writes the same bytes). torchvision is not installed, so transformers' Qwen2VLVideoProcessor
cannot be imported; preprocess_video() reproduces its path line by line (see there)."""
import hashlib
import json
import math
import os
import platform
import shutil
import tempfile

import numpy as np
import safetensors
import tokenizers
import torch
import transformers
from safetensors import safe_open
from safetensors.torch import save_file
from transformers import GenerationConfig, PreTrainedTokenizerFast, Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration
from transformers.image_utils import OPENAI_CLIP_MEAN, OPENAI_CLIP_STD
from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil, smart_resize
from transformers.vision_utils import get_vision_cu_seqlens, get_vision_position_ids, get_vision_window_index

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "qwen_vl")
TOKENIZER = os.path.join(ROOT, "tests", "data", "qwen", "tokenizer.json")
SEED = 25
VIDEO_PAD, VIDEO_PAD_ID = "<|video_pad|>", 1124
EOS_IDS = [1113, 1111]  # <|im_end|>, <|endoftext|> (the released generation_config's eos list, in its order)

# config.json in the layout Qwen/Qwen2.5-VL-7B-Instruct ships (text keys at the top level).
CONFIG = {
    "architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
    "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "hidden_act": "silu", "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
    "rope_scaling": {"type": "mrope", "rope_type": "default", "mrope_section": [2, 3, 3]},
    "vocab_size": 1152, "tie_word_embeddings": False, "max_position_embeddings": 128000,
    "use_sliding_window": False, "sliding_window": 32768, "attention_dropout": 0.0,
    "image_token_id": 1123, "video_token_id": 1124, "vision_start_token_id": 1120, "vision_end_token_id": 1121,
    "vision_token_id": 1122, "bos_token_id": 1111, "eos_token_id": 1113, "torch_dtype": "float32",
    "vision_config": {
        "depth": 3, "hidden_size": 32, "intermediate_size": 48, "num_heads": 2, "in_chans": 3,
        "out_hidden_size": 64, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2,
        "window_size": 56, "fullatt_block_indexes": [1], "tokens_per_second": 2, "hidden_act": "silu"},
}

# Qwen2.5-VL's chat_template.json, verbatim (the tiny tokenizer.json carries none).
CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "{% endif %}<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}"
    "<|im_end|>\n{% else %}{% for content in message['content'] %}{% if content['type'] == 'image' or 'image' in "
    "content or 'image_url' in content %}{% set image_count.value = image_count.value + 1 %}{% if add_vision_id %}"
    "Picture {{ image_count.value }}: {% endif %}<|vision_start|><|image_pad|><|vision_end|>{% elif content['type'] "
    "== 'video' or 'video' in content %}{% set video_count.value = video_count.value + 1 %}{% if add_vision_id %}"
    "Video {{ video_count.value }}: {% endif %}<|vision_start|><|video_pad|><|vision_end|>{% elif 'text' in content "
    "%}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endif %}{% endfor %}{% if add_generation_prompt %}"
    "<|im_start|>assistant\n{% endif %}")
SYSTEM_PROMPT = "You are a helpful assistant."
USER_TEXT = "Describe this video."

# The video: 4 frames 0.5 s apart (fps 2), 56x84 (multiples of 28). The pixel budget is the released
# preprocessor_config.json's (min_pixels 3136, max_pixels 12845056), so smart_resize keeps 56x84.
T, H, W, FPS = 4, 56, 84, 2.0
MIN_PIXELS, MAX_PIXELS = 56 * 56, 28 * 28 * 16384
PATCH, MERGE, TEMPORAL = 14, 2, 2
NEW_TOKENS = 12


def released_name(name):
    """transformers 5's in-memory parameter name -> the released checkpoint's key."""
    if name.startswith("model.visual."):
        return name[len("model."):]
    if name.startswith("model.language_model."):
        return "model." + name[len("model.language_model."):]
    assert name == "lm_head.weight", name
    return name


def make_frames():
    """uint8 [T, H, W, 3]: smooth gradients, a drifting wave, a moving disc and a moving bar."""
    y, x = np.mgrid[0:H, 0:W].astype(np.float64)
    frames = []
    for t in range(T):
        r = 40 + 150 * x / (W - 1) + 30 * np.sin(0.21 * y + 0.9 * t)
        g = 30 + 170 * y / (H - 1) + 25 * np.cos(0.17 * x - 0.6 * t)
        b = 200 - 120 * (x + y) / (W + H) + 20 * np.sin(0.11 * (x - y) + 0.4 * t)
        cx, cy = 18 + 14 * t, 20 + 5 * t
        disc = np.clip(7.5 - np.hypot(x - cx, y - cy), 0, 1)  # anti-aliased edge
        r, g, b = r * (1 - disc) + 250 * disc, g * (1 - disc) + 220 * disc, b * (1 - disc) + 40 * disc
        bar = ((x >= 60 - 6 * t) & (x < 66 - 6 * t) & (y >= 8) & (y < 48)).astype(np.float64)
        r, g, b = r * (1 - bar) + 20 * bar, g * (1 - bar) + 40 * bar, b * (1 - bar) + 230 * bar
        frames.append(np.stack([r, g, b], -1))
    return np.clip(np.rint(np.stack(frames)), 0, 255).astype(np.uint8)


def patchify(video, patch_size, merge_size, temporal_patch_size):
    """Qwen2VLVideoProcessor.patchify (transformers 5.25), verbatim for one video [1, T, C, H, W]."""
    batch_size, num_frames, channel, resized_height, resized_width = video.shape
    if pad := -num_frames % temporal_patch_size:  # repeat the last frame up to a multiple
        video = torch.cat((video, video[:, -1:].expand(-1, pad, -1, -1, -1)), dim=1)
        num_frames += pad
    grid_t = num_frames // temporal_patch_size
    grid_h, grid_w = resized_height // patch_size, resized_width // patch_size
    patches = video.view(batch_size, grid_t, temporal_patch_size, channel, grid_h // merge_size, merge_size,
                         patch_size, grid_w // merge_size, merge_size, patch_size)
    patches = patches.permute(0, 1, 4, 7, 5, 8, 3, 2, 6, 9)
    flat = patches.reshape(batch_size, grid_t * grid_h * grid_w, channel * temporal_patch_size * patch_size ** 2)
    return flat, grid_t, grid_h, grid_w


def preprocess_video(frames):
    """Qwen2VLVideoProcessor._preprocess for uint8 [T, H, W, 3], reproduced because it needs torchvision:
    frames become a [1, T, 3, H, W] uint8 tensor; resize goes to smart_resize(H, W, 28, min, max), which is
    (H, W) here, i.e. no resize; fused rescale+normalize (BaseImageProcessor's TorchvisionBackend:
    mean' = tensor(mean) * (1 / rescale_factor), std' likewise, then torchvision's normalize:
    x.float().sub(mean').div_(std')); then patchify."""
    assert smart_resize(H, W, factor=PATCH * MERGE, min_pixels=MIN_PIXELS, max_pixels=MAX_PIXELS) == (H, W)
    video = torch.from_numpy(frames).permute(0, 3, 1, 2).unsqueeze(0)  # [1, T, C, H, W]
    rescale_factor = 1 / 255
    mean = (torch.tensor(OPENAI_CLIP_MEAN) * (1.0 / rescale_factor)).view(-1, 1, 1)
    std = (torch.tensor(OPENAI_CLIP_STD) * (1.0 / rescale_factor)).view(-1, 1, 1)
    video = video.to(torch.float32).sub(mean).div_(std)
    flat, gt, gh, gw = patchify(video, PATCH, MERGE, TEMPORAL)
    return flat[0].contiguous(), torch.tensor([[gt, gh, gw]], dtype=torch.int64)


def init_weights(model):
    """Deterministic init with non-trivial scale: matrices N(0, 1/fan_in), token embeddings N(0, 1), every norm
    weight 1 + 0.1 N(0, 1) and every bias 0.02 N(0, 1) (so that a misplaced key cannot go unnoticed)."""
    gen = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            if name.endswith(".bias"):
                p.copy_(0.02 * noise)
            elif p.ndim == 1:
                p.copy_(1 + 0.1 * noise)
            elif name.endswith("embed_tokens.weight"):
                p.copy_(noise)
            else:
                p.copy_(noise / math.sqrt(p[0].numel()))


def rope_case(model, types, image_grid, video_grid, spgt):
    """get_rope_index on a synthetic sequence given as mm_token_type_ids (0 text, 1 image pad, 2 video pad)."""
    ids = torch.tensor([[{0: 500, 1: 1123, 2: 1124}[k] for k in types]])
    pos, delta = model.model.get_rope_index(
        ids, torch.tensor([types]),
        image_grid_thw=torch.tensor(image_grid) if image_grid else None,
        video_grid_thw=torch.tensor(video_grid) if video_grid else None,
        second_per_grid_ts=torch.tensor(spgt) if spgt else None)
    return {"mm_token_type_ids": types, "image_grid_thw": image_grid, "video_grid_thw": video_grid,
            "second_per_grid_ts": spgt, "position_ids": pos[:, 0].tolist(), "rope_delta": int(delta)}


def seq(*parts):
    out = []
    for kind, n in parts:
        out += [kind] * n
    return out


def dumps(obj, indent=0):
    """JSON with lists of scalars on one line (keeps case.json readable and diffable)."""
    pad = " " * (indent + 2)
    if isinstance(obj, dict):
        items = [f"{pad}{json.dumps(k)}: {dumps(v, indent + 2)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(obj, list) and any(isinstance(v, (dict, list)) for v in obj):
        return "[\n" + ",\n".join(pad + dumps(v, indent + 2) for v in obj) + "\n" + " " * indent + "]"
    return json.dumps(obj, ensure_ascii=False)


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(OUT, exist_ok=True)
    shutil.copyfile(TOKENIZER, os.path.join(OUT, "tokenizer.json"))
    with open(os.path.join(OUT, "config.json"), "w") as f:
        f.write(json.dumps(CONFIG, indent=2) + "\n")

    # The model, from the released-layout config.json just written.
    config = Qwen2_5_VLConfig.from_pretrained(OUT)
    torch.manual_seed(SEED)
    model = Qwen2_5_VLForConditionalGeneration(config).eval()
    model.set_attn_implementation("eager")
    init_weights(model)
    weights = {released_name(n): p.detach().clone().contiguous() for n, p in model.named_parameters()}
    save_file(weights, os.path.join(OUT, "model.safetensors"))

    # save_pretrained's layout: config_nested.json, and its key names must equal ours.
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        with open(os.path.join(tmp, "config.json")) as f:
            nested = f.read()
        with safe_open(os.path.join(tmp, "model.safetensors"), "pt") as f:
            assert sorted(f.keys()) == sorted(weights), "save_pretrained names differ from the released mapping"
            assert all(torch.equal(f.get_tensor(k), weights[k]) for k in weights)
    with open(os.path.join(OUT, "config_nested.json"), "w") as f:
        f.write(nested if nested.endswith("\n") else nested + "\n")

    # Video preprocessing, and a layout check against transformers' own (PIL) image processor: a still clip
    # (the frame twice) must patchify like that frame as an image (which repeats it temporal_patch_size times).
    frames = make_frames()
    pixel_values_videos, video_grid_thw = preprocess_video(frames)
    still, still_grid = preprocess_video(np.stack([frames[1]] * 2))
    ref = Qwen2VLImageProcessorPil(min_pixels=MIN_PIXELS, max_pixels=MAX_PIXELS)(images=frames[1], return_tensors="pt")
    assert ref["image_grid_thw"].tolist() == still_grid.tolist() == [[1, H // PATCH, W // PATCH]]
    assert torch.allclose(ref["pixel_values"].float(), still, atol=1e-5), "patch layout differs from the processor"
    second_per_grid_ts = TEMPORAL / FPS  # Qwen2_5_VLProcessor: temporal_patch_size / sampled fps

    # Prompt: the real chat template, then the processor's expansion of the one <|video_pad|>.
    tok = PreTrainedTokenizerFast(tokenizer_file=TOKENIZER)
    messages = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": USER_TEXT}]}]
    prompt_text = tok.apply_chat_template(messages, chat_template=CHAT_TEMPLATE, tokenize=False,
                                          add_generation_prompt=True)
    n_video = int(video_grid_thw.prod()) // MERGE ** 2
    prompt_ids = tok(prompt_text)["input_ids"]
    ids = tok(prompt_text.replace(VIDEO_PAD, VIDEO_PAD * n_video))["input_ids"]
    at = prompt_ids.index(VIDEO_PAD_ID)
    assert prompt_ids.count(VIDEO_PAD_ID) == 1 and ids == prompt_ids[:at] + [VIDEO_PAD_ID] * n_video + prompt_ids[at + 1:]
    input_ids = torch.tensor([ids])
    L = input_ids.shape[1]
    mm_token_type_ids = (input_ids == VIDEO_PAD_ID).long() * 2
    inputs = dict(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                  pixel_values_videos=pixel_values_videos, video_grid_thw=video_grid_thw,
                  second_per_grid_ts=torch.tensor([second_per_grid_ts]), mm_token_type_ids=mm_token_type_ids)

    with torch.no_grad():
        # Vision tower: window index, per-block output, merged embeddings (original order).
        visual = model.model.visual
        window_index, cu_window_seqlens = get_vision_window_index(video_grid_thw, MERGE, CONFIG["vision_config"][
            "window_size"], PATCH)
        cu_seqlens = get_vision_cu_seqlens(video_grid_thw)
        vision_pos_ids = get_vision_position_ids(video_grid_thw, MERGE)
        seen = {}
        hooks = [visual.blocks[0].register_forward_hook(lambda m, a, o: seen.__setitem__("block0", o.clone())),
                 visual.patch_embed.register_forward_hook(lambda m, a, o: seen.__setitem__("embed", o.clone()))]
        vision_embeds = model.model.get_video_features(pixel_values_videos, video_grid_thw).pooler_output[0]
        for h in hooks:
            h.remove()
        assert vision_embeds.shape == (n_video, CONFIG["hidden_size"])

        position_ids, rope_delta = model.model.get_rope_index(
            input_ids, mm_token_type_ids, video_grid_thw=video_grid_thw,
            second_per_grid_ts=inputs["second_per_grid_ts"], attention_mask=inputs["attention_mask"])
        model.model.rope_deltas = None
        prefill_logits = model(**inputs).logits[0]
        # Same logits from explicit inputs_embeds (pads replaced by vision_embeds) and explicit positions.
        embeds = model.model.language_model.embed_tokens(input_ids).clone()
        embeds[input_ids == VIDEO_PAD_ID] = vision_embeds
        again = model(inputs_embeds=embeds, position_ids=position_ids).logits[0]
        assert torch.allclose(again, prefill_logits, atol=1e-5, rtol=0)

        # Greedy generation, no eos stopping, raw logits of every step.
        model.generation_config.eos_token_id = None
        def generate(use_cache):
            model.model.rope_deltas = None
            gc = GenerationConfig(max_new_tokens=NEW_TOKENS, min_new_tokens=0, do_sample=False, num_beams=1,
                                  repetition_penalty=1.0, eos_token_id=None, pad_token_id=1111, use_cache=use_cache,
                                  output_logits=True, return_dict_in_generate=True)
            out = model.generate(**inputs, generation_config=gc)
            return out.sequences[0, L:], torch.stack(out.logits)[:, 0]
        generated_ids, step_logits = generate(True)
        ids_nocache, logits_nocache = generate(False)
        assert generated_ids.shape == (NEW_TOKENS,) and torch.equal(ids_nocache, generated_ids)
        assert torch.allclose(logits_nocache, step_logits, atol=1e-4, rtol=0)
        assert torch.allclose(step_logits[0], prefill_logits[-1], atol=1e-5, rtol=0)
        assert torch.equal(step_logits.argmax(-1), generated_ids)
        # Decode positions: token L+i sits at L+i+rope_delta on all three axes.
        dec_pos = torch.arange(L, L + NEW_TOKENS - 1) + int(rope_delta)
        full_pos = torch.cat([position_ids, dec_pos.view(1, 1, -1).expand(3, 1, -1)], dim=2)
        emb_full = torch.cat([embeds, model.model.language_model.embed_tokens(generated_ids[:-1])[None]], dim=1)
        manual = model(inputs_embeds=emb_full, position_ids=full_pos).logits[0, L - 1:]
        assert torch.allclose(manual, step_logits, atol=1e-4, rtol=0)

        # Reload from the written config.json + model.safetensors (released names) and attention variants.
        for impl in ("eager", "sdpa"):
            loaded, info = Qwen2_5_VLForConditionalGeneration.from_pretrained(
                OUT, attn_implementation=impl, output_loading_info=True, dtype=torch.float32)
            assert not any(info[k] for k in ("missing_keys", "unexpected_keys", "mismatched_keys")), info
            loaded.eval()
            diff = (loaded(**inputs).logits[0] - prefill_logits).abs().max().item()
            assert diff == 0.0 if impl == "eager" else diff < 1e-4, (impl, diff)
            print(f"reloaded with released names ({impl}): max |logits diff| = {diff:.3g}")
        # config_nested.json builds the same model.
        nested_model = Qwen2_5_VLForConditionalGeneration._from_config(
            Qwen2_5_VLConfig.from_dict(json.loads(nested)), attn_implementation="eager")
        nested_model.load_state_dict(model.state_dict())
        assert torch.equal(nested_model.eval()(**inputs).logits[0], prefill_logits)

    # get_rope_index on synthetic sequences (text 0 / image 1 / video 2 runs).
    rope_cases = [
        rope_case(model, seq((0, 3), (2, 12), (0, 2)), None, [[2, 4, 6]], [1.0]),
        rope_case(model, seq((0, 2), (2, 6), (0, 3)), None, [[3, 2, 4]], [0.75]),
        rope_case(model, seq((0, 2), (2, 6), (0, 3)), None, [[3, 2, 4]], [1.25]),
        rope_case(model, seq((0, 2), (2, 8), (0, 2)), None, [[4, 2, 4]], [2.0]),
        rope_case(model, seq((0, 2), (2, 24), (0, 2)), None, [[4, 4, 6]], [1.0 / 3.0]),
        rope_case(model, seq((0, 4), (1, 6), (0, 2)), [[1, 4, 6]], None, None),
        rope_case(model, seq((0, 1), (1, 4), (0, 2), (2, 16), (0, 3)), [[1, 4, 4]], [[4, 4, 4]], [0.5]),
        rope_case(model, seq((0, 2), (2, 4), (0, 1), (2, 3), (0, 1)), None, [[2, 2, 4], [3, 2, 2]], [1.0, 2.0]),
    ]

    sizes = [(56, 84), (70, 70), (42, 126), (98, 154), (1, 1), (10, 2000), (10, 2010), (3, 700), (28, 5600), (4000, 3000),
             (1080, 1920), (1920, 1080), (720, 1280), (333, 517), (2000, 10), (224, 224), (5000, 40)]
    budgets = [(56 * 56, 28 * 28 * 1280), (128 * 28 * 28, 28 * 28 * 768), (MIN_PIXELS, MAX_PIXELS)]
    resize_cases = []
    for (h, w) in sizes:
        for factor, (lo, hi) in [(28, b) for b in budgets] + [(14, (56 * 56, 14 * 14 * 256))]:
            case = {"height": h, "width": w, "factor": factor, "min_pixels": lo, "max_pixels": hi}
            try:
                case["out_height"], case["out_width"] = smart_resize(h, w, factor=factor, min_pixels=lo, max_pixels=hi)
            except ValueError as e:
                case["error"] = str(e)
            resize_cases.append(case)

    case = {
        "about": "Qwen2.5-VL parity case (packaging/make_qwen_vl_fixture.py); tensors in case.safetensors",
        "versions": {"python": platform.python_version(), "torch": torch.__version__,
                     "transformers": transformers.__version__, "tokenizers": tokenizers.__version__,
                     "safetensors": safetensors.__version__, "numpy": np.__version__},
        "seed": SEED, "attn_implementation": "eager (sdpa agrees within 1e-4)", "dtype": "float32",
        "system_prompt": SYSTEM_PROMPT, "user_text": USER_TEXT, "chat_template": CHAT_TEMPLATE,
        "prompt_text": prompt_text, "prompt_ids": prompt_ids,
        "video": {"frames": T, "height": H, "width": W, "fps": FPS, "frame_times_s": [i / FPS for i in range(T)],
                  "min_pixels": MIN_PIXELS, "max_pixels": MAX_PIXELS, "resized": [H, W],
                  "image_mean": list(OPENAI_CLIP_MEAN), "image_std": list(OPENAI_CLIP_STD),
                  "rescale_factor": "1/255"},
        "second_per_grid_ts": second_per_grid_ts, "tokens_per_second": CONFIG["vision_config"]["tokens_per_second"],
        "video_grid_thw": video_grid_thw[0].tolist(), "num_video_tokens": n_video, "seq_len": L,
        "input_ids": ids, "rope_delta": int(rope_delta),
        "vision_window_index": window_index.tolist(), "vision_cu_window_seqlens": cu_window_seqlens.tolist(),
        "vision_cu_seqlens": cu_seqlens.tolist(),
        "generation": {"max_new_tokens": NEW_TOKENS, "do_sample": False, "use_cache": True,
                       "repetition_penalty": 1.0, "eos_stopping": False},
        "generated_ids": generated_ids.tolist(),
        "generated_tokens": tok.convert_ids_to_tokens(generated_ids.tolist()),
        "generated_text": tok.decode(generated_ids.tolist(), skip_special_tokens=False),
        "eos_token_ids": EOS_IDS,
        "first_eos_step": next((i for i, t in enumerate(generated_ids.tolist()) if t in EOS_IDS), None),
        "rope_index_cases": rope_cases,
        "smart_resize_cases": resize_cases,
    }
    with open(os.path.join(OUT, "case.json"), "w") as f:
        f.write(dumps(case) + "\n")
    tensors = {
        "frames": torch.from_numpy(frames), "pixel_values_videos": pixel_values_videos,
        "video_grid_thw": video_grid_thw, "input_ids": input_ids[0], "mm_token_type_ids": mm_token_type_ids[0],
        "position_ids": position_ids[:, 0], "vision_pos_ids": vision_pos_ids.long(),
        "vision_patch_embed": seen["embed"], "vision_window_index": window_index.long(),
        "vision_cu_window_seqlens": cu_window_seqlens.long(), "vision_cu_seqlens": cu_seqlens.long(),
        "vision_block0_out": seen["block0"], "vision_embeds": vision_embeds, "prefill_logits": prefill_logits,
        "generated_ids": generated_ids, "step_logits": step_logits,
    }
    save_file({k: v.contiguous() for k, v in tensors.items()}, os.path.join(OUT, "case.safetensors"))

    print(f"prompt ({L} tokens, {n_video} video pads):\n{prompt_text}")
    print("video_grid_thw", video_grid_thw.tolist(), "second_per_grid_ts", second_per_grid_ts, "rope_delta",
          int(rope_delta))
    print("generated_ids", generated_ids.tolist(), repr(case["generated_text"]))
    for k, v in tensors.items():
        print(f"  case.safetensors {k:26s} {str(v.dtype):14s} {list(v.shape)}")
    for name in sorted(os.listdir(OUT)):
        with open(os.path.join(OUT, name), "rb") as f:
            data = f.read()
        print(f"  {name:20s} {len(data):9d} B  sha256 {hashlib.sha256(data).hexdigest()[:16]}")


if __name__ == "__main__":
    main()
