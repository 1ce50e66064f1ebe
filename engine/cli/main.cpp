// SPDX-License-Identifier: Apache-2.0
// wanstudio-engine: the worker process. Dispatches to a verb; every error the user can
// cause becomes one line on stderr and exit code 1.
#include <c10/util/Exception.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/interrupt.h"
#include "io/printable.h"
#include "cli/build_info.h"
#include "cli/verb.h"
#include "models/cpu_attention.h"
#include "models/cpu_gemm.h"
#include "runtime/blas_threads.h"
#include "runtime/signal_thread.h"

namespace {

void print_help() {
  std::printf(
      "usage: wanstudio-engine <verb> [options]\n\n"
      "The Wan Studio worker: trains the latent upsampler (and the demo's tiny VAE) in LibTorch,\n"
      "runs the Wan2.2 VAE, upsampler and DiT experts, parity checks against the reference,\n"
      "weights and dataset inspection. Training verbs print events (JSON lines) on stdout.\n\nverbs:\n");
  for (const auto& v : ws::cli::verbs()) std::printf("  %-18s %s\n", v.name.c_str(), v.summary.c_str());
  std::printf(
      "\n`wanstudio-engine <verb> --help` describes a verb.\n"
      "Exit codes: 0 success, 1 failure, 130 cancelled.\n");
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread starts, so that every thread inherits the blocked signals.
  ws::runtime::route_signals_to_one_thread();
  ws::runtime::shorten_blas_spin();
  try {
    // A bad WANSTUDIO_GEMM or WANSTUDIO_ATTENTION stops here, not in a run's first product.
    ws::models::cpu_gemm_backend();
    ws::models::cpu_attention_choice();
  } catch (const ws::Error& e) {
    std::fprintf(stderr, "error: %s\n", ws::io::printable(e.what(), 4096).c_str());
    return 1;
  }
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    print_help();
    return argc < 2 ? 1 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::fputs(ws::cli::build_info().c_str(), stdout);
    return 0;
  }
  const ws::cli::Verb* verb = ws::cli::find_verb(argv[1]);
  if (!verb) {
    std::fprintf(stderr, "error: unknown verb '%s' (see wanstudio-engine --help)\n",
                 ws::io::printable(argv[1]).c_str());
    return 1;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  // Messages quote file names and contents: one line, control bytes escaped.
  auto line = [](const std::string& m) { return ws::io::printable(m, 4096); };
  try {
    return verb->fn(args);
  } catch (const ws::Interrupted&) {
    // A verb that stops inside its computations (runtime::stop_inside_computations) was cancelled.
    std::fprintf(stderr, "%s: cancelled\n", argv[1]);
    return 130;
  } catch (const ws::UsageErrors& e) {
    for (size_t i = 0; i + 1 < e.lines().size(); ++i) std::fprintf(stderr, "error: %s\n", line(e.lines()[i]).c_str());
    std::fprintf(stderr, "error: %s (see wanstudio-engine %s --help)\n", line(e.lines().back()).c_str(), argv[1]);
  } catch (const ws::UsageError& e) {
    std::fprintf(stderr, "error: %s (see wanstudio-engine %s --help)\n", line(e.what()).c_str(), argv[1]);
  } catch (const ws::Error& e) {
    std::fprintf(stderr, "error: %s\n", line(e.what()).c_str());
  } catch (const c10::Error& e) {
    // LibTorch messages carry a backtrace after the first line: keep the first.
    std::string msg = e.what_without_backtrace();
    std::fprintf(stderr, "error: %s\n", line(msg.substr(0, msg.find('\n'))).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", line(e.what()).c_str());
  }
  return 1;
}
