// SPDX-License-Identifier: Apache-2.0
// The jobs a run can be [contract]: the `job` name written in run.yaml and shown by the studio,
// and the worker verb that runs it. One table for the worker's `schema`, the studio's New Run
// dialog, Resume and `wanstudio --batch`.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace ws::contract {

struct Job {
  const char* job;    // "upsampler"
  const char* verb;   // "train-upsampler"
  const char* title;  // "Latent upsampler", for menus
  bool new_run;       // offered by the studio's New Run dialog (the VAE is fine-tuned from run.yaml files)
};

const std::vector<Job>& jobs();
// "upsampler" -> "train-upsampler"; "" for an unknown job.
std::string verb_for_job(std::string_view job);
// "train-upsampler" -> "upsampler"; "" for a verb that is no training job.
std::string job_for_verb(std::string_view verb);

}  // namespace ws::contract
