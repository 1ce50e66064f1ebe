// SPDX-License-Identifier: Apache-2.0
// The words a form shows for a config key: "gradient_accumulation_steps" reads "Gradient
// accumulation steps", "lr_warmup_steps" "Learning-rate warmup steps". The key itself stays
// beside it, as it is what a run file and the documentation use.
#pragma once

#include <QString>

namespace ws {

QString plainLabel(const QString& key);

}  // namespace ws
