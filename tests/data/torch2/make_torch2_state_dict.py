#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes torch2_state_dict.pth with torch.save of PyTorch 2.x (the zip layout 2.x writes: byteorder,
.format_version, .storage_alignment, .data/serialization_id, storages aligned to 64 bytes) and its
twin torch2_state_dict.safetensors with the safetensors package, for tests/engine/test_pth.cpp.
Run with the project's Python: `.venv/bin/python tests/data/torch2/make_torch2_state_dict.py`
(`packaging/python_env.sh --reference` installs torch and safetensors there)."""
import collections
import os

import torch
from safetensors.torch import save_file

os.chdir(os.path.dirname(os.path.abspath(__file__)))
torch.manual_seed(7)
base = torch.randn(6, 8)
sd = collections.OrderedDict()
sd["conv.weight"] = torch.randn(4, 3, 3, 3)
sd["norm.weight"] = torch.randn(16).to(torch.bfloat16)
sd["half.weight"] = torch.randn(5, 7).to(torch.float16)
sd["steps"] = torch.tensor(12345678901, dtype=torch.int64)
sd["view.rows"] = base[2:5]  # a view at an offset into a storage another entry shares
sd["view.t"] = base.t()  # non-contiguous, the same storage
sd["double"] = torch.randn(3, dtype=torch.float64)
sd._metadata = {"": {"version": 1}}
torch.save(sd, "torch2_state_dict.pth")
save_file({k: v.contiguous() for k, v in sd.items()}, "torch2_state_dict.safetensors",
          metadata={"torch": torch.__version__})
print("torch", torch.__version__)
