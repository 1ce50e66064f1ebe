// SPDX-License-Identifier: Apache-2.0
// PyTorch `.pth` zip checkpoints (torch.save) read without executing anything: our own
// reader of the pickle subset a state dict uses. Like torch.load(weights_only=True) it is
// an allowlist: OrderedDict, the tensor rebuild functions and storage types; any other
// global (os.system, builtins.eval, ...) is refused with an error, never resolved.
#pragma once
#include <string>

#include "io/state_dict.h"

namespace ws::io {

StateDict read_pth(const std::string& path);

}  // namespace ws::io
