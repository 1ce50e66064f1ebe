// SPDX-License-Identifier: Apache-2.0
// Prompts every Wan pipeline shares (docs/design/umt5.md §1).
#pragma once

namespace ws::text {

// Wan's `sample_neg_prompt` (shared_config.py): what an empty negative prompt becomes. 137
// characters, SHA-256 ce96e0324e4b54ce4b6e867f669ca520952e1a34cc116543516b1897f0d3c47e.
inline constexpr const char* kWanNegativePrompt =
    "色调艳丽，过曝，静态，细节模糊不清，字幕，风格，作品，画作，画面，静止，整体发灰，最差质量，低质量，JPEG压缩残留，"
    "丑陋的，残缺的，多余的手指，画得不好的手部，画得不好的脸部，畸形的，毁容的，形态畸形的肢体，手指融合，静止不动的画"
    "面，"
    "杂乱的背景，三条腿，背景人很多，倒着走";

}  // namespace ws::text
