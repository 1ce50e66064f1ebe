// SPDX-License-Identifier: Apache-2.0
// Precompiled header for the engine: the expensive, stable includes.
#pragma once
#include <torch/torch.h>
#include <nlohmann/json.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>
