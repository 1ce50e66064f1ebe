// SPDX-License-Identifier: Apache-2.0
// Precompiled header shared by the engine tests.
#pragma once
#include <torch/torch.h>
#include <nlohmann/json.hpp>
#include <QtTest/QtTest>
