// SPDX-License-Identifier: Apache-2.0
// LoRA adapters for the Wan DiT's block Linears (docs/design/lora.md): y = W·x + b +
// m·(α/r)·U·drop(D·x), D [r, in] (kaiming-uniform, a = √5), U [out, r] (zeros), so a fresh
// adapter changes nothing. The adapters live outside the model's state dict; attach() points the
// chosen Linears at them, so the model (its forward, validation, eval) uses them as they are.
// Files: the `lora_unet_<path with _>.{lora_down.weight, lora_up.weight, alpha}` keys that
// musubi-tuner writes and ComfyUI loads, or PEFT's `<prefix>.<module>.lora_{A,B}.weight`
// (diffusers or official module names; α folded into B).
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

#include "io/state_dict.h"

namespace ws::models {

class WanModelImpl;

// The Linears of a block an adapter may sit on, by their path inside the block.
const std::vector<std::string>& wan_lora_block_linears();  // self_attn.q … ffn.2 (10)

struct LoraSpec {
  int64_t rank = 32;
  double alpha = 32;                 // ≤ 0: the rank (scale 1), as musubi-tuner reads alpha 0
  double dropout = 0;                // on the rank-r activations, training only (musubi-tuner's place)
  std::vector<std::string> targets;  // paths inside a block; empty: all of wan_lora_block_linears()
};

// What one Linear reads at forward time (tensor handles shared with WanLora's entries).
struct LoraAdapter {
  torch::Tensor down, up;
  double scale = 1.0;  // multiplier · α / r
  double dropout = 0.0;
  bool defined() const { return down.defined(); }
  // The adapter's term for x (any dtype; computed in the adapters' dtype, returned in `out_dtype`).
  torch::Tensor delta(const torch::Tensor& x, bool training, torch::ScalarType out_dtype) const;
};

enum class LoraFormat { Musubi, Peft };

class WanLora {
 public:
  struct Entry {
    std::string path;  // "blocks.3.self_attn.q"
    torch::Tensor down, up;
    double alpha = 0;
  };

  // Fresh adapters for every block of `model` at spec.targets (torch's global generator draws D).
  static WanLora create(const WanModelImpl& model, const LoraSpec& spec);
  // From a file's tensors in either format; `source` names it in errors.
  static WanLora from_state_dict(const io::StateDict& sd, const std::string& source);
  static WanLora load(const std::string& path);
  // Is this a LoRA file's state dict (either format)?
  static bool looks_like_lora(const io::StateDict& sd, LoraFormat* format = nullptr);

  // Points the model's Linears at the adapters (every entry must name one of its block Linears
  // with matching shapes). Replaces adapters attached before.
  void attach(WanModelImpl& model, double multiplier = 1.0, double dropout = 0.0) const;
  static void detach(WanModelImpl& model);
  // W += multiplier·(α/r)·U·D for every entry, in the weight's dtype.
  void merge_into(WanModelImpl& model, double multiplier = 1.0) const;

  io::StateDict state_dict(LoraFormat format = LoraFormat::Musubi) const;
  void save(const std::string& path, LoraFormat format = LoraFormat::Musubi) const;  // atomic
  // The trainable tensors, named as in the Musubi file (down then up per entry).
  std::vector<std::pair<std::string, torch::Tensor>> named_parameters() const;
  void to(const torch::Device& device);

  const std::vector<Entry>& entries() const { return entries_; }
  int64_t rank() const;  // of the first entry (0 when empty)
  double alpha() const;
  int64_t parameter_count() const;
  // "blocks.3.self_attn.q" -> "lora_unet_blocks_3_self_attn_q"
  static std::string musubi_name(const std::string& path);

 private:
  std::vector<Entry> entries_;
};

}  // namespace ws::models
