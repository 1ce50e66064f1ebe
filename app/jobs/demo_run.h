// SPDX-License-Identifier: Apache-2.0
// "Try the demo" from the start page: the built-in demo run (configs/demo-upsampler.yaml) set up in
// a folder the user chose, never in the program's own folder: the demo data goes to
// <folder>/data (written by the worker on first use, demo_data: auto), the run to
// <folder>/demo-upsampler[-N]/, and the preset's own files (model YAML, tiny VAE) are named by
// absolute paths, so the run folder works from anywhere.
#pragma once

#include <QString>

namespace ws {

// Writes <folder>/demo-upsampler[-N]/run.yaml from `presetYaml`; the run.yaml's path, or "" with
// *error. The folder is made when missing.
QString writeDemoRun(const QString& presetYaml, const QString& folder, QString* error);

}  // namespace ws
