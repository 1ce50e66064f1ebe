// SPDX-License-Identifier: Apache-2.0
// `--device` as the verbs that run a model take it (sample, caption, bench caption).
#pragma once
#include <c10/core/Device.h>

#include <string>

namespace ws::cli {

// auto (a GPU when there is one), cpu, cuda or cuda:N. ws::UsageError for another spelling,
// ws::Error for a CUDA device this build or machine does not have.
c10::Device parse_device_option(const std::string& value);

}  // namespace ws::cli
