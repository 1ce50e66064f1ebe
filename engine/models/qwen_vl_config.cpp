// SPDX-License-Identifier: Apache-2.0
#include "models/qwen_vl_config.h"

#include <string>

#include "core/error.h"
#include "io/json_fields.h"

namespace ws::models {
namespace {

using json = nlohmann::json;

using Reader = io::JsonFields;

// An integer or a list of integers (eos_token_id), always kept as a list.
void get_ids(const Reader& r, const char* k, std::vector<int64_t>& v) {
  if (!r.has(k)) return;
  if (!r.value(k).is_array()) {
    int64_t id = 0;
    r.get(k, id);
    v = {id};
    return;
  }
  r.get(k, v);
}

void read_vision(const Reader& r, QwenVisionConfig& v) {
  r.get("depth", v.depth);
  r.get("hidden_size", v.hidden_size);
  r.get("intermediate_size", v.intermediate_size);
  r.get("num_heads", v.num_heads);
  r.get("in_chans", v.in_chans);     // the release's spelling
  r.get("in_channels", v.in_chans);  // transformers'
  r.get("out_hidden_size", v.out_hidden_size);
  r.get("patch_size", v.patch_size);
  r.get("spatial_merge_size", v.spatial_merge_size);
  r.get("temporal_patch_size", v.temporal_patch_size);
  r.get("window_size", v.window_size);
  r.get("fullatt_block_indexes", v.fullatt_block_indexes);
  r.get("tokens_per_second", v.tokens_per_second);
  const std::string act = r.str("hidden_act");
  if (!act.empty() && act != "silu") r.fail("hidden_act", "is \"" + act + "\": only silu is built");
}

// The rotary settings: rope_scaling (the release) or rope_parameters (transformers 5).
void read_rope(const Reader& r, QwenTextConfig& t) {
  r.get("rope_theta", t.rope_theta);
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    const json* o = r.object(key);
    if (!o) continue;
    const Reader named = r.child(*o, key);
    named.get("mrope_section", t.mrope_section);
    named.get("rope_theta", t.rope_theta);
    std::string type = named.str("rope_type");
    if (type.empty()) type = named.str("type");
    if (!type.empty() && type != "mrope" && type != "default")
      r.fail(key, "has rope type \"" + type + "\": only M-RoPE (mrope / default) is built");
  }
}

void read_text(const Reader& r, QwenTextConfig& t) {
  r.get("vocab_size", t.vocab_size);
  r.get("hidden_size", t.hidden_size);
  r.get("intermediate_size", t.intermediate_size);
  r.get("num_hidden_layers", t.num_hidden_layers);
  r.get("num_attention_heads", t.num_attention_heads);
  r.get("num_key_value_heads", t.num_key_value_heads);
  r.get("rms_norm_eps", t.rms_norm_eps);
  bool tie = false;
  r.get("tie_word_embeddings", tie);
  t.tie_word_embeddings = t.tie_word_embeddings || tie;  // either level ties (transformers 5 does the same)
  read_rope(r, t);
  const std::string act = r.str("hidden_act");
  if (!act.empty() && act != "silu") r.fail("hidden_act", "is \"" + act + "\": only silu is built");
  // transformers' eager/sdpa attention ignores the window too, but a window would change the
  // flash-attention results the model was meant to have: refuse rather than guess.
  bool sliding = false;
  r.get("use_sliding_window", sliding);
  if (sliding) r.fail("use_sliding_window", "is true: sliding-window attention is not built");
}

}  // namespace

QwenVlConfig QwenVlConfig::from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw Error(where + ": Qwen2.5-VL config is not a JSON object");
  QwenVlConfig c;
  const Reader top(j, where + ": Qwen2.5-VL config");
  // Released layout: the text keys at the top level; transformers 5: under text_config.
  read_text(top, c.text);
  if (const json* tj = top.object("text_config")) {
    const Reader text = top.child(*tj, "text_config");
    read_text(text, c.text);
    get_ids(text, "eos_token_id", c.eos_token_ids);
  }
  get_ids(top, "eos_token_id", c.eos_token_ids);
  if (const json* vj = top.object("vision_config")) read_vision(top.child(*vj, "vision_config"), c.vision);
  top.get("image_token_id", c.image_token_id);
  top.get("video_token_id", c.video_token_id);
  top.get("vision_start_token_id", c.vision_start_token_id);
  top.get("vision_end_token_id", c.vision_end_token_id);
  c.validate(where);
  return c;
}

void QwenVlConfig::validate(const std::string& where) const {
  auto fail = [&](const std::string& m) { throw Error(where + ": Qwen2.5-VL config: " + m); };
  auto s = [](int64_t v) { return std::to_string(v); };
  const QwenTextConfig& t = text;
  if (t.vocab_size < 1 || t.hidden_size < 1 || t.intermediate_size < 1 || t.num_hidden_layers < 1 ||
      t.num_attention_heads < 1 || t.num_key_value_heads < 1)
    fail("text sizes must be positive");
  if (t.hidden_size % t.num_attention_heads)
    fail("hidden_size " + s(t.hidden_size) + " is not a multiple of num_attention_heads " + s(t.num_attention_heads));
  if (t.num_attention_heads % t.num_key_value_heads)
    fail("num_attention_heads " + s(t.num_attention_heads) + " is not a multiple of num_key_value_heads " +
         s(t.num_key_value_heads));
  if (t.head_dim() % 2) fail("the text head size " + s(t.head_dim()) + " must be even (rotary pairs)");
  if (t.mrope_section.size() != 3) fail("mrope_section must have 3 entries (time, height, width)");
  int64_t pairs = 0;
  for (int64_t m : t.mrope_section) {
    if (m < 0) fail("mrope_section entries must not be negative");
    pairs += m;
  }
  if (pairs != t.head_dim() / 2)
    fail("mrope_section sums to " + s(pairs) + ", the head size " + s(t.head_dim()) + " needs " + s(t.head_dim() / 2));
  if (!(t.rms_norm_eps > 0)) fail("rms_norm_eps must be positive");
  if (!(t.rope_theta > 0)) fail("rope_theta must be positive");

  const QwenVisionConfig& v = vision;
  if (v.depth < 1 || v.hidden_size < 1 || v.intermediate_size < 1 || v.num_heads < 1 || v.in_chans < 1 ||
      v.out_hidden_size < 1 || v.patch_size < 1 || v.spatial_merge_size < 1 || v.temporal_patch_size < 1)
    fail("vision sizes must be positive");
  if (v.hidden_size % v.num_heads)
    fail("vision hidden_size " + s(v.hidden_size) + " is not a multiple of num_heads " + s(v.num_heads));
  // The tower's rotary splits each head in half (rows, columns), each half in rotary pairs.
  if (v.head_dim() % 4) fail("the vision head size " + s(v.head_dim()) + " must be a multiple of 4");
  const int64_t unit = v.spatial_merge_size * v.patch_size;
  if (v.window_size < unit || v.window_size % unit)
    fail("window_size " + s(v.window_size) + " is not a multiple of spatial_merge_size × patch_size = " + s(unit));
  for (int64_t i : v.fullatt_block_indexes)
    if (i < 0 || i >= v.depth) fail("fullatt_block_indexes entry " + s(i) + " is outside 0.." + s(v.depth - 1));
  if (v.out_hidden_size != t.hidden_size)
    fail("vision out_hidden_size " + s(v.out_hidden_size) + " differs from the text hidden_size " + s(t.hidden_size));
  if (!(v.tokens_per_second > 0)) fail("tokens_per_second must be positive");
  if (!(v.eps > 0)) fail("the vision eps must be positive");

  for (int64_t id : {image_token_id, video_token_id, vision_start_token_id, vision_end_token_id})
    if (id < 0 || id >= t.vocab_size) fail("token id " + s(id) + " is outside the vocabulary of " + s(t.vocab_size));
  if (eos_token_ids.empty()) fail("eos_token_id must name at least one token");
  for (int64_t id : eos_token_ids)
    if (id < 0 || id >= t.vocab_size)
      fail("eos_token_id " + s(id) + " is outside the vocabulary of " + s(t.vocab_size));
}

}  // namespace ws::models
