// SPDX-License-Identifier: Apache-2.0
// The `dataset` verb's subcommands, one function each (cli/verbs/dataset*.cpp).
#pragma once
#include <string>
#include <vector>

namespace ws::cli {

int run_dataset_import(const std::vector<std::string>& argv);
int run_dataset_split(const std::vector<std::string>& argv);
int run_dataset_dedupe(const std::vector<std::string>& argv);
int run_dataset_score(const std::vector<std::string>& argv);
int run_dataset_export_captions(const std::vector<std::string>& argv);
int run_dataset_trim(const std::vector<std::string>& argv);

// Throws ws::Error when this worker was built without FFmpeg.
void require_video(const char* what);

}  // namespace ws::cli
