// SPDX-License-Identifier: Apache-2.0
// The studio's events.jsonl reader: any bytes, in any chunking, update the run's summary and
// curves without a crash; feeding the same bytes in one piece or in two gives the same steps.
#include <QByteArrayView>

#include <cstdint>
#include <cstdlib>

#include "runfolder/run_events.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const QByteArrayView all(reinterpret_cast<const char*>(data), qsizetype(size));
  ws::RunEvents whole, split;
  whole.appendData(all);
  whole.finishData();
  const qsizetype cut = size ? qsizetype(data[0]) % qsizetype(size) : 0;
  split.appendData(all.first(cut));
  split.appendData(all.sliced(cut));
  split.finishData();
  if (whole.steps().size() != split.steps().size()) std::abort();
  (void)whole.summary();
  return 0;
}
