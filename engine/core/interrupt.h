// SPDX-License-Identifier: Apache-2.0
// Stopping inside a long computation: the models' loops (each DiT block, each attention chunk,
// each VAE chunk) call interruption_point(), which throws ws::Interrupted once a stop has been
// asked for — but only in a process whose verb armed it with the question to ask. The models stay
// free of signals and policy; a verb decides (sample and the VAE verbs arm it with the cancel
// flag; training does not, since its contract is to finish the step and checkpoint).
#pragma once
#include "core/error.h"

namespace ws {

class Interrupted : public Error {
 public:
  Interrupted() : Error("interrupted") {}
};

// `check` answers "has a stop been asked for?"; nullptr disarms. Thread-safe.
void set_interrupt_check(bool (*check)());
// Throws ws::Interrupted when armed and `check` says yes; otherwise costs one atomic load.
void interruption_point();

}  // namespace ws
