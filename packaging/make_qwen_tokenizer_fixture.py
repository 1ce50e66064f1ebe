#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the Qwen tokenizer parity fixture (run once; the outputs are committed):
  tests/data/qwen/tokenizer.json        a tiny byte-level BPE trained with HuggingFace `tokenizers` on the
                                        corpus below, with exactly Qwen2 / Qwen2.5-VL's normalizer (NFC),
                                        pre-tokenizer (Split on Qwen2's regex, then ByteLevel without its own
                                        regex), decoder and post-processor (ByteLevel), and Qwen2.5-VL's 22
                                        added tokens (the first 14 special), in Qwen's order
  tests/data/qwen/tokenizer_cases.json  for the test strings (none of them in the training corpus): the ids
                                        `tokenizers` gives, and its decode with and without special tokens
Run: /work/main/.venv/bin/python3 packaging/make_qwen_tokenizer_fixture.py (tokenizers 0.23.3). The real
Qwen tokenizer cannot be downloaded here; this one follows the same rules on a small vocabulary.
Deterministic: running it again writes the same bytes."""
import json
import os

import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = os.path.join(root, "tests", "data", "qwen")

# Qwen2's pre-tokenizer pattern, as in Qwen2 / Qwen2.5-VL's tokenizer.json.
PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
           r"|\s*[\r\n]+|\s+(?!\S)|\s+")

# Qwen2.5-VL's added tokens, in id order: special first, then the non-special tool/FIM markers.
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
           "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>",
           "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>"]
PLAIN = ["<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
         "<|repo_name|>", "<|file_sep|>"]

TRAIN = [
    "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away into the forest.",
    "A woman in a red coat walks along a snowy street at night, and the camera slowly pans to the left.",
    "Close-up of a cat's face: its whiskers twitch, it blinks twice, then it looks at the camera.",
    "It's raining. They're sure we've seen it, I'm told you'll know, he'd say. IT'S, THEY'RE, We'Ve, I'M.",
    "Café, naïve, résumé, façade, jalapeño, Ångström, São Paulo, Zürich, Kraków, Ελληνικά, Русский текст.",
    "Cafe\u0301 and re\u0301sume\u0301 typed with combining accents; A\u030angstro\u0308m too.",
    "一个女孩在公园里跑步，阳光明媚。视频展示了城市的夜景和车流。東京の夜景、カメラがゆっくり動く。",
    "한국어 문장도 조금 있습니다. 카메라가 천천히 움직입니다.",
    "مرحبا بالعالم، هذا فيديو قصير عن البحر والشمس.",
    "Emoji: 😀 😃 🎬 🎥 👍🏽 👨‍👩‍👧 ❤️ 🔥🔥🔥 and ✨ sparkles ✨.",
    "Numbers: 0 1 2 3 4 5 6 7 8 9 10 42 1234567890 3.14159 2024-05-17 12:30:45 1,000,000 ½ ² Ⅻ ٣.",
    "Tabs\there\tand\tthere.\r\nWindows line\r\nendings.\n\nTwo blank lines\n\n\nand  double  spaces   triple.   ",
    "def encode(self, text: str) -> list[int]:\n    return [self.vocab[t] for t in text.split()]\n",
    "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }  // dot product\n#include <vector>\n",
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n<|vision_start|><|video_pad|>"
    "<|vision_end|>Describe this video.<|im_end|>\n<|im_start|>assistant\nThe video shows a dog.<|im_end|>\n",
    "URLs like https://example.com/path?query=1&x=2 and e-mail someone@example.org, paths /usr/local/bin.",
    "Punctuation!!! Really??? Yes... (parentheses) [brackets] {braces} \"quotes\" 'single' — dashes – and … ",
    "A drone shot over mountains at sunrise; mist rolls through the valley while birds fly overhead.",
    "Slow motion: water droplets splash on a leaf, the light sparkles, the scene fades to black.",
]
TRAIN = [t for t in TRAIN for _ in range(3)]

CASES = [
    "Hello world",
    "A man rides a bicycle down a steep hill while the camera follows him.",
    "It's what THEY'RE doing; you'D think we'LL see. 'S 'sup 'T",
    "don't won't can't I've she'd We'RE",
    "'\u017fa folds to 's, '\u212aa and '\u0131a do not; 'Ss 'LLama",
    "Crème brûlée in the café near Málaga.",
    "Cre\u0300me bru\u0302le\u0301e typed decomposed (not NFC).",
    "\u1100\u1161\u11a8 decomposed Hangul, \uac01 composed",
    "Angstrom sign \u212b and Ohm sign \u2126 are singletons.",
    "q\u0307\u0323 reordered marks, a\u0328\u0301 stacked",
    "猫がソファで寝ている。镜头缓慢推进。",
    "마을 위로 해가 뜹니다",
    "الكاميرا تتحرك ببطء نحو اليمين",
    "🎬 Action! 👩🏾‍💻 codes 🚀🚀 fast ❤️",
    "123456789 and 3.14 and 1,234,567 and ٣٤٥ and ²³",
    "2024-01-15T08:30:00Z",
    "\ttabbed\tline\r\nnext line\r\n",
    "trailing spaces   ",
    "   leading spaces",
    "multiple     spaces between      words",
    "line one\n\n\nline four\n",
    "  \n  \n  indented after blank lines",
    "spaces before newline   \nand after",
    "!!!\n\nend",
    "word\u00a0with\u00a0nbsp and\u3000ideographic\u3000space",
    "vertical\x0btab and form\x0cfeed and\u2028line separator",
    "x = {\"key\": [1, 2, 3], 'other': None}  # comment\n",
    "if (a && b || !c) { return a->b[0] >= 10; }",
    "<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>Describe this video.<|im_end|>\n"
    "<|im_start|>assistant\n",
    "<|im_start|>system\nBe brief.<|im_end|><|endoftext|>",
    "no space<|image_pad|><|image_pad|>between pads",
    "broken <|im_start and im_end|> are plain text, <|unknown|> too",
    "<tool_call>{\"name\": \"f\"}</tool_call> and <|fim_prefix|>code<|fim_suffix|>",
    "nested <<|im_end|>> brackets",
    "",
    " ",
    "\n",
    "a",
    "UPPER CASE SHOUTING AND MiXeD cAsE",
    "Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich.",
    "Ελληνικά και русский язык вместе",
    "rare chars: ꙮ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ∮ ⌘ ␣",
    "mixed\r\n\r\n\tblock  \n",
    "end with punctuation?!",
]


def build():
    tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    trainer = trainers.BpeTrainer(vocab_size=1200, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(TRAIN, trainer)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in PLAIN])
    return tok


def main():
    os.makedirs(out, exist_ok=True)
    tok = build()
    path = os.path.join(out, "tokenizer.json")
    # Written as Qwen's release writes it: merges as "a b" strings, and the decoder's flags false (the
    # Python binding's decoders.ByteLevel takes none; they do not change decoding).
    doc = json.loads(tok.to_str())
    doc["model"]["merges"] = [" ".join(m) for m in doc["model"]["merges"]]
    doc["decoder"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
    tok = Tokenizer.from_file(path)  # the cases come from the file as written
    cases = []
    for text in CASES:
        ids = tok.encode(text).ids
        cases.append({"text": text, "ids": ids, "decoded": tok.decode(ids, skip_special_tokens=False),
                      "decoded_skip_special": tok.decode(ids, skip_special_tokens=True)})
    # Decoding cut-off byte sequences: invalid UTF-8 becomes U+FFFD the way `tokenizers` does it.
    emoji = tok.encode("🎬🚀").ids
    cut = [{"ids": ids, "decoded": tok.decode(ids)} for ids in (emoji[:1], emoji[1:], emoji[:-1], [5, 1000000])]
    doc = {
        "generator": "packaging/make_qwen_tokenizer_fixture.py",
        "tokenizers_version": tokenizers.__version__,
        "vocab_size": tok.get_vocab_size(with_added_tokens=True),
        "token_ids": {t: tok.token_to_id(t) for t in SPECIAL + PLAIN + ["Ġthe", "ĠThe", "the"]},
        "cases": cases,
        "decode_cases": cut,
    }
    with open(os.path.join(out, "tokenizer_cases.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("vocab %d, %d cases, tokenizer.json %d bytes" % (doc["vocab_size"], len(cases), os.path.getsize(path)))


if __name__ == "__main__":
    main()
