// SPDX-License-Identifier: Apache-2.0
// Qwen2.5-VL in the engine against transformers 5.25.0 (tests/data/qwen_vl, a tiny random model
// made by packaging/make_qwen_vl_fixture.py): the config in both layouts, smart_resize, the
// frames' patches, the vision tower's window order and output, the M-RoPE positions, the chat
// prompt's ids, the prefill logits, and greedy generation with the KV cache step by step. Then
// what the fixture cannot show: both weight namings, strict loading, bf16, seeded sampling.
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "io/safetensors.h"
#include "models/qwen_vl.h"
#include "models/qwen_vl_preprocess.h"
#include "models/qwen_vl_rope_index.h"
#include "models/qwen_vl_vision.h"
#include "test_paths.h"
#include "test_util.h"
#include "text/qwen_tokenizer.h"

using namespace ws;
using nlohmann::json;
using ws::test::error_of;

namespace {

const std::string kDir = std::string(WS_TEST_DATA) + "/qwen_vl";

json read_json(const std::string& path) { return json::parse(ws::test::read_bytes(path)); }
const json& case_json() {
  static const json j = read_json(kDir + "/case.json");
  return j;
}
const io::StateDict& case_tensors() {
  static const io::StateDict t = io::read_safetensors(kDir + "/case.safetensors");
  return t;
}
const torch::Tensor& T(const std::string& key) { return case_tensors().at(key); }
models::QwenVlConfig config() {
  return models::QwenVlConfig::from_json(read_json(kDir + "/config.json"), "config.json");
}
const models::QwenVl& model() {
  static const models::QwenVl m = models::QwenVl::load(kDir);
  return m;
}

// The vision tower's weights by the released names, "visual." dropped.
io::StateDict vision_weights() {
  io::StateDict out;
  for (const auto& [k, v] : io::read_safetensors(kDir + "/model.safetensors"))
    if (k.rfind("visual.", 0) == 0) out[k.substr(7)] = v;
  return out;
}

double max_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat) - b.to(torch::kFloat)).abs().max().item<double>();
}
std::vector<int64_t> ids_of(const torch::Tensor& t) {
  auto c = t.to(torch::kLong).contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}
// The first n ids the fixture generated.
std::vector<int64_t> first_generated(size_t n) {
  const auto all = ids_of(T("generated_ids"));
  return {all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n)};
}
std::array<int64_t, 3> grid() {
  auto g = ids_of(T("video_grid_thw"));
  return {g[0], g[1], g[2]};
}
models::QwenVideoInput video_input() {
  models::QwenVideoInput v;
  v.patches = T("pixel_values_videos");
  v.grid = grid();
  v.second_per_grid = case_json()["second_per_grid_ts"].get<double>();
  return v;
}
models::QwenGenerateOptions greedy(int64_t n) {
  models::QwenGenerateOptions o;
  o.max_new_tokens = n;
  o.stop_at_eos = false;  // the fixture generated its 12 tokens without stopping
  return o;
}

}  // namespace

class TestQwenVl : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void configBothLayouts() {
    const auto a = config();
    const auto b = models::QwenVlConfig::from_json(read_json(kDir + "/config_nested.json"), "nested");
    for (const auto* c : {&a, &b}) {
      QCOMPARE(c->text.hidden_size, int64_t{64});
      QCOMPARE(c->text.num_key_value_heads, int64_t{2});
      QCOMPARE(c->text.mrope_section, (std::vector<int64_t>{2, 3, 3}));
      QCOMPARE(c->vision.depth, int64_t{3});
      QCOMPARE(c->vision.window_size, int64_t{56});
      QCOMPARE(c->vision.fullatt_block_indexes, (std::vector<int64_t>{1}));
      QCOMPARE(c->video_token_id, int64_t{1124});
    }
    QCOMPARE(a.text.vocab_size, b.text.vocab_size);
    QCOMPARE(a.eos_token_ids, b.eos_token_ids);
    json bad = read_json(kDir + "/config.json");
    bad["rope_scaling"]["mrope_section"] = {2, 3, 4};
    QVERIFY(error_of([&] { models::QwenVlConfig::from_json(bad, "bad.json"); }).contains("mrope_section"));
    bad = read_json(kDir + "/config.json");
    bad["num_attention_heads"] = "four";
    QVERIFY(error_of([&] { models::QwenVlConfig::from_json(bad, "bad.json"); }).contains("num_attention_heads"));
  }

  // The config.json of the 7B and 3B Instruct releases, as published: parsed, sizes consistent.
  void releasedConfigs() {
    const json seven =
        json::parse(R"({"architectures": ["Qwen2_5_VLForConditionalGeneration"], "attention_dropout": 0.0,
      "bos_token_id": 151643, "eos_token_id": 151645, "vision_start_token_id": 151652, "vision_end_token_id": 151653,
      "vision_token_id": 151654, "image_token_id": 151655, "video_token_id": 151656, "hidden_act": "silu",
      "hidden_size": 3584, "initializer_range": 0.02, "intermediate_size": 18944, "max_position_embeddings": 128000,
      "max_window_layers": 28, "model_type": "qwen2_5_vl", "num_attention_heads": 28, "num_hidden_layers": 28,
      "num_key_value_heads": 4, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768,
      "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.41.2", "use_cache": true,
      "use_sliding_window": false, "vision_config": {"depth": 32, "hidden_act": "silu", "hidden_size": 1280,
      "intermediate_size": 3420, "num_heads": 16, "in_chans": 3, "out_hidden_size": 3584, "patch_size": 14,
      "spatial_merge_size": 2, "spatial_patch_size": 14, "window_size": 112, "fullatt_block_indexes": [7, 15, 23, 31],
      "tokens_per_second": 2, "temporal_patch_size": 2}, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
      "vocab_size": 152064})");
    const auto c7 = models::QwenVlConfig::from_json(seven, "7B");
    QCOMPARE(c7.text.head_dim(), int64_t{128});
    QCOMPARE(c7.text.num_key_value_heads, int64_t{4});
    QCOMPARE(c7.vision.window_units(), int64_t{4});
    QCOMPARE(c7.vision.fullatt_block_indexes, (std::vector<int64_t>{7, 15, 23, 31}));
    QVERIFY(!c7.text.tie_word_embeddings);
    json three = seven;
    for (auto [k, v] : std::initializer_list<std::pair<const char*, int64_t>>{{"hidden_size", 2048},
                                                                              {"intermediate_size", 11008},
                                                                              {"num_hidden_layers", 36},
                                                                              {"num_attention_heads", 16},
                                                                              {"num_key_value_heads", 2},
                                                                              {"vocab_size", 151936}})
      three[k] = v;
    three["tie_word_embeddings"] = true;
    three["vision_config"]["out_hidden_size"] = 2048;
    const auto c3 = models::QwenVlConfig::from_json(three, "3B");
    QCOMPARE(c3.text.head_dim(), int64_t{128});
    QVERIFY(c3.text.tie_word_embeddings);
    three["vision_config"]["out_hidden_size"] = 3584;  // the merger must feed the decoder's width
    QVERIFY(!error_of([&] { models::QwenVlConfig::from_json(three, "3B"); }).isEmpty());
  }

  void smartResize() {
    int checked = 0;
    for (const auto& c : case_json()["smart_resize_cases"]) {
      auto run = [&] {
        return models::qwen_smart_resize(c["height"], c["width"], c["factor"], c["min_pixels"], c["max_pixels"]);
      };
      if (c.contains("error")) {
        QVERIFY2(!error_of(run).isEmpty(), c.dump().c_str());
      } else {
        const auto s = run();
        QVERIFY2(s.height == c["out_height"].get<int64_t>() && s.width == c["out_width"].get<int64_t>(),
                 c.dump().c_str());
      }
      ++checked;
    }
    QVERIFY(checked >= 10);
  }

  void videoPatches() {
    std::array<int64_t, 3> g{};
    const auto p = models::qwen_video_patches(T("frames"), config().vision, &g);
    QCOMPARE(g, grid());
    QCOMPARE(p.sizes().vec(), T("pixel_values_videos").sizes().vec());
    QVERIFY2(max_diff(p, T("pixel_values_videos")) < 1e-5,
             std::to_string(max_diff(p, T("pixel_values_videos"))).c_str());
    // An odd frame count repeats the last frame, as the processor pads.
    const auto odd = models::qwen_video_patches(T("frames").slice(0, 0, 3), config().vision, &g);
    QCOMPARE(g[0], int64_t{2});
    const auto last = models::qwen_video_patches(torch::cat({T("frames").slice(0, 0, 3), T("frames").slice(0, 2, 3)}),
                                                 config().vision, &g);
    QCOMPARE(max_diff(odd, last), 0.0);
  }

  void visionTower() {
    const auto [index, cu] = models::qwen_window_index(config().vision, grid());
    QCOMPARE(ids_of(index), ids_of(T("vision_window_index")));
    QCOMPARE(cu, ids_of(T("vision_cu_window_seqlens")));
    models::QwenVisionTower tower(config().vision, vision_weights());
    models::QwenVisionTrace trace;
    const auto out = tower.forward(T("pixel_values_videos"), grid(), &trace);
    QCOMPARE(out.sizes().vec(), T("vision_embeds").sizes().vec());
    QVERIFY2(max_diff(trace.tensors.at("block0_out"), T("vision_block0_out")) < 5e-5, "block 0");
    QVERIFY2(max_diff(out, T("vision_embeds")) < 1e-4, std::to_string(max_diff(out, T("vision_embeds"))).c_str());
    // A missing weight is named.
    auto w = vision_weights();
    w.erase("blocks.1.attn.qkv.bias");
    QVERIFY(error_of([&] { models::QwenVisionTower(config().vision, w, "tiny"); }).contains("blocks.1.attn.qkv.bias"));
  }

  void ropeIndex() {
    const auto c = config();
    // The captioning case: both rules agree on it.
    for (auto rule : {models::QwenPositionRule::Release, models::QwenPositionRule::Transformers}) {
      const auto r = models::qwen_rope_index(ids_of(T("input_ids")), {grid()},
                                             {case_json()["second_per_grid_ts"].get<double>()}, c, rule);
      QCOMPARE(ids_of(r.positions), ids_of(T("position_ids")));
      QCOMPARE(r.delta, case_json()["rope_delta"].get<int64_t>());
    }
    // transformers 5.25's rule on every case; the release's (text resumes one past the largest
    // position) agrees where the video's time extent is not the largest, and elsewhere moves the
    // text after the video up to there.
    int checked = 0, differ = 0;
    for (const auto& k : case_json()["rope_index_cases"]) {
      if (!k["image_grid_thw"].is_null()) continue;
      std::vector<int64_t> ids;  // the token kinds as ids: text, then the video's pads
      const auto kinds = k["mm_token_type_ids"].get<std::vector<int64_t>>();
      for (int64_t t : kinds) ids.push_back(t == 2 ? c.video_token_id : 7);
      std::vector<std::array<int64_t, 3>> grids;
      for (const auto& gg : k["video_grid_thw"]) grids.push_back({gg[0], gg[1], gg[2]});
      const auto spg = k["second_per_grid_ts"].get<std::vector<double>>();
      const auto tf = models::qwen_rope_index(ids, grids, spg, c, models::QwenPositionRule::Transformers);
      std::vector<int64_t> want;
      for (const auto& row : k["position_ids"])
        for (int64_t v : row.get<std::vector<int64_t>>()) want.push_back(v);
      QVERIFY2(ids_of(tf.positions) == want, k.dump().c_str());
      QCOMPARE(tf.delta, k["rope_delta"].get<int64_t>());
      // The release's rule, derived from the same case: each text token after a video sits one
      // past the largest position before it (text before any video is unchanged).
      const auto rel = models::qwen_rope_index(ids, grids, spg, c);
      const auto L = static_cast<int64_t>(ids.size());
      const auto p = rel.positions.accessor<int64_t, 2>();
      int64_t top = -1;
      for (int64_t i = 0; i < L; ++i) {
        if (kinds[i] == 0 && i > 0 && kinds[i - 1] == 2)
          for (int s = 0; s < 3; ++s) QCOMPARE(p[s][i], top + 1);
        for (int s = 0; s < 3; ++s) top = std::max(top, p[s][i]);
      }
      QCOMPARE(rel.delta, top + 1 - L);
      differ += ids_of(rel.positions) != want;
      ++checked;
    }
    QVERIFY(checked >= 3);
    QVERIFY(differ >= 1);  // the cases do tell the rules apart
  }

  void chatPromptIds() {
    text::QwenTokenizer tok(kDir + "/tokenizer.json");
    const int64_t pads = case_json()["num_video_tokens"].get<int64_t>();
    QCOMPARE(tok.encode(models::qwen_chat_prompt(case_json()["user_text"], {pads})), ids_of(T("input_ids")));
    QCOMPARE(models::qwen_chat_prompt(case_json()["user_text"], {1}), case_json()["prompt_text"].get<std::string>());
  }

  // The whole model from the patches: prefill logits and 12 greedy steps through the KV cache.
  void greedyGeneration() {
    models::QwenGenerateTrace trace;
    const auto out = model().generate(ids_of(T("input_ids")), {video_input()}, greedy(12), {}, &trace);
    QCOMPARE(out, ids_of(T("generated_ids")));
    QVERIFY2(max_diff(trace.prefill_logits, T("prefill_logits")) < 1e-4, "prefill logits");
    QCOMPARE(static_cast<int64_t>(trace.step_logits.size()), int64_t{12});
    for (int64_t s = 0; s < 12; ++s)
      QVERIFY2(max_diff(trace.step_logits[s].reshape({-1}), T("step_logits")[s]) < 1e-4,
               ("step " + std::to_string(s)).c_str());
    // on_token sees each id and can stop.
    std::vector<int64_t> seen;
    const auto three = model().generate(ids_of(T("input_ids")), {video_input()}, greedy(12), [&](int64_t id) {
      seen.push_back(id);
      return seen.size() < 3;
    });
    QCOMPARE(three, std::vector<int64_t>(out.begin(), out.begin() + 3));
  }

  // Stopping at an end-of-turn id: the answer ends before it.
  void stopsAtEos() {
    auto o = greedy(12);
    o.stop_at_eos = true;
    o.eos_token_ids = {ids_of(T("generated_ids"))[4]};
    const auto out = model().generate(ids_of(T("input_ids")), {video_input()}, o);
    QCOMPARE(out, first_generated(4));
  }

  // transformers 5's names (model.visual.*, model.language_model.*) load to the same model; a
  // missing or mis-shaped weight is a clear error.
  void bothNamingsAndStrictLoad() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    io::StateDict renamed;
    for (const auto& [k, v] : io::read_safetensors(kDir + "/model.safetensors")) {
      if (k.rfind("visual.", 0) == 0) renamed["model." + k] = v;
      else if (k.rfind("model.", 0) == 0) renamed["model.language_model." + k.substr(6)] = v;
      else renamed[k] = v;
    }
    io::write_safetensors(dir + "/model.safetensors", renamed);
    ws::test::write_bytes(dir + "/config.json", ws::test::read_bytes(kDir + "/config_nested.json"));
    const auto m = models::QwenVl::load(dir);
    const auto out = m.generate(ids_of(T("input_ids")), {video_input()}, greedy(4));
    QCOMPARE(out, first_generated(4));

    renamed.erase("model.language_model.layers.1.mlp.up_proj.weight");
    io::write_safetensors(dir + "/model.safetensors", renamed);
    QVERIFY(error_of([&] { models::QwenVl::load(dir); }).contains("layers.1.mlp.up_proj.weight"));
    QVERIFY(error_of([&] { models::QwenVl::load(dir + "/nowhere"); }).contains("nowhere"));
  }

  // The 3B's layout ties lm_head to the token embedding: a tied folder without lm_head.weight gives
  // what the untied model gives with lm_head set to the embedding.
  void tiedEmbeddings() {
    QTemporaryDir untied_dir, tied_dir;
    io::StateDict w = io::read_safetensors(kDir + "/model.safetensors");
    w["lm_head.weight"] = w.at("model.embed_tokens.weight").clone();
    io::write_safetensors(untied_dir.path().toStdString() + "/model.safetensors", w);
    ws::test::write_bytes(untied_dir.path().toStdString() + "/config.json",
                          ws::test::read_bytes(kDir + "/config.json"));
    w.erase("lm_head.weight");
    io::write_safetensors(tied_dir.path().toStdString() + "/model.safetensors", w);
    json cfg = read_json(kDir + "/config.json");
    cfg["tie_word_embeddings"] = true;
    ws::test::write_bytes(tied_dir.path().toStdString() + "/config.json", cfg.dump());
    models::QwenGenerateTrace a, b;
    const auto x = models::QwenVl::load(untied_dir.path().toStdString())
                       .generate(ids_of(T("input_ids")), {video_input()}, greedy(6), {}, &a);
    const auto y = models::QwenVl::load(tied_dir.path().toStdString())
                       .generate(ids_of(T("input_ids")), {video_input()}, greedy(6), {}, &b);
    QCOMPARE(y, x);
    QCOMPARE(max_diff(a.prefill_logits, b.prefill_logits), 0.0);
    QVERIFY(x != first_generated(6));  // the head did change the answer: the test can tell
  }

  // bf16 compute: the same first greedy tokens on this tiny model, logits near fp32's.
  void bf16() {
    const auto m = models::QwenVl::load(kDir, torch::kBFloat16);
    models::QwenGenerateTrace trace;
    const auto out = m.generate(ids_of(T("input_ids")), {video_input()}, greedy(2), {}, &trace);
    QCOMPARE(static_cast<int64_t>(out.size()), int64_t{2});
    const double d = max_diff(trace.step_logits[0].reshape({-1}), T("step_logits")[0]);
    const double scale = T("step_logits")[0].abs().max().item<double>();
    QVERIFY2(d < 0.05 * scale, (std::to_string(d) + " vs " + std::to_string(scale)).c_str());
  }

  // Sampling: a seed repeats itself, another seed gives another answer, a tiny top_p is greedy.
  void seededSampling() {
    auto o = greedy(12);
    o.temperature = 1.5;
    o.seed = 1;
    const auto a = model().generate(ids_of(T("input_ids")), {video_input()}, o);
    QCOMPARE(model().generate(ids_of(T("input_ids")), {video_input()}, o), a);
    o.seed = 2;
    QVERIFY(model().generate(ids_of(T("input_ids")), {video_input()}, o) != a);
    o.top_p = 1e-6;  // only the most likely token survives
    QCOMPARE(model().generate(ids_of(T("input_ids")), {video_input()}, o), ids_of(T("generated_ids")));
  }
};

QTEST_GUILESS_MAIN(TestQwenVl)
#include "test_qwen_vl.moc"
