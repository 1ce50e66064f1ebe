// SPDX-License-Identifier: Apache-2.0
#include "runfolder/run_events.h"
#include "runfolder/regular_file.h"

#include <QFile>

#include <algorithm>
#include <cmath>

namespace ws {
namespace {

// Cheap test for a `"type": "step"` member (with or without spaces) without parsing the line.
// Inside JSON strings quotes are escaped, so `"type"` only matches a key.
bool looksLikeStep(QByteArrayView line) {
  const qsizetype k = line.indexOf(QByteArrayView("\"type\""));
  if (k < 0) return false;
  qsizetype i = k + 6;
  while (i < line.size() && (line[i] == ' ' || line[i] == ':')) ++i;
  return line.sliced(i).startsWith(QByteArrayView("\"step\""));
}

// Events that are "points" of the training curve: a resume discards the ones past its step.
bool isPointType(const QString& t) {
  namespace et = contract::event_type;
  return t == QLatin1String(et::kEval) || t == QLatin1String(et::kValidation) || t == QLatin1String(et::kCheckpoint);
}

}  // namespace

RunEvents::StepPoint RunEvents::StepPoint::fromEvent(const RunEvent& ev) {
  const contract::StepEvent e = contract::StepEvent::from_json(ev.raw);
  StepPoint p;
  p.step = e.step;
  p.expert = QString::fromStdString(e.expert);
  p.expertStep = e.expert_step;
  p.time = ev.time;
  p.loss = e.loss;
  p.lr = e.lr;
  p.gradNorm = e.grad_norm;
  p.samplesPerS = e.samples_per_s;
  p.etaS = e.eta_s;
  auto seconds = [&](const char* key) {
    const auto it = e.extra.find(key);
    return it != e.extra.end() && it->is_number() ? it->get<double>() : std::nan("");
  };
  p.dataWaitS = seconds("data_wait_s");
  p.vaeS = seconds("vae_s");
  p.modelS = seconds("model_s");
  p.stepS = seconds("step_s");
  p.swapWaitS = seconds("swap_wait_s");
  return p;
}

RunEvents::RunEvents(QObject* parent) : QObject(parent) {}

void RunEvents::clear() {
  events_.clear();
  steps_.clear();
  log_.clear();
  summary_ = RunSummary();
  lastHeartbeat_ = RunEvent();
  pending_.clear();
  lazyStep_.clear();
  lazyStepBefore_.clear();
  lazySkipped_ = 0;
  skippedLines_ = 0;
  segment_ = 0;
  firstNewRow_ = firstNewStep_ = -1;
  reset_ = summaryDirty_ = false;
  Q_EMIT cleared();
}

void RunEvents::appendData(QByteArrayView chunk) {
  qsizetype start = 0;
  while (start < chunk.size()) {
    const qsizetype nl = chunk.indexOf('\n', start);
    if (nl < 0) {
      pending_.append(chunk.sliced(start));
      break;
    }
    if (pending_.isEmpty()) {
      ingestLine(chunk.sliced(start, nl - start));
    } else {
      pending_.append(chunk.sliced(start, nl - start));
      ingestLine(pending_);
      pending_.clear();
    }
    start = nl + 1;
  }
  flushSignals();
}

void RunEvents::finishData() {
  if (!pending_.isEmpty()) {
    ingestLine(pending_);
    pending_.clear();
  }
  flushSignals();
}

void RunEvents::appendEvent(const RunEvent& ev) {
  ingest(ev);
  flushSignals();
}

bool RunEvents::loadFile(const QString& path, QString* error) {
  clear();
  QFile f(path);
  if (!openRegularFile(f, QIODevice::ReadOnly, error)) return false;
  appendData(f.readAll());
  finishData();
  return true;
}

void RunEvents::ingestLine(QByteArrayView line) {
  if (line.trimmed().isEmpty()) return;
  if (!keepHistory_ && looksLikeStep(line)) {
    if (!lazyStep_.isEmpty()) ++lazySkipped_;
    lazyStepBefore_.swap(lazyStep_);
    lazyStep_ = line.toByteArray();
    return;
  }
  flushLazySteps();
  if (auto ev = parseEventLine(line)) {
    ingest(*ev);
  } else {
    ++skippedLines_;  // torn or foreign line: never an error
  }
}

void RunEvents::flushLazySteps() {
  if (lazyStep_.isEmpty()) return;
  auto ev = parseEventLine(lazyStep_);
  if (!ev && !lazyStepBefore_.isEmpty()) {
    ++skippedLines_;
    ev = parseEventLine(lazyStepBefore_);
  }
  summary_.eventCount += lazySkipped_;
  if (ev) ingest(*ev);
  else ++skippedLines_;
  lazyStep_.clear();
  lazyStepBefore_.clear();
  lazySkipped_ = 0;
}

void RunEvents::ingest(const RunEvent& in) {
  RunSummary& s = summary_;
  summaryDirty_ = true;
  ++s.eventCount;
  if (s.firstTime == 0) s.firstTime = in.time;
  s.lastTime = std::max(s.lastTime, in.time);

  namespace et = contract::event_type;
  if (in.type == QLatin1String(et::kHeartbeat)) {
    lastHeartbeat_ = in;
    const auto hb = contract::HeartbeatEvent::from_json(in.raw);
    s.peakRssBytes = std::max(s.peakRssBytes, double(hb.rss_bytes));
    s.peakGpuMemBytes = std::max(s.peakGpuMemBytes, double(hb.gpu_mem_bytes.value_or(0)));
    return;
  }
  if (in.type == QLatin1String(et::kStep)) {
    StepPoint p = StepPoint::fromEvent(in);
    if (p.step >= s.lastStep) {
      s.lastStep = p.step;
      s.lastLoss = p.loss;
    }
    if (!keepHistory_) return;
    p.segment = segment_;
    if (firstNewStep_ < 0) firstNewStep_ = int(steps_.size());
    if (firstNewRow_ < 0) firstNewRow_ = int(log_.size());
    log_.push_back({true, int(steps_.size())});
    steps_.push_back(p);
    return;
  }

  RunEvent ev = in;
  if (ev.type == QLatin1String(et::kStarted)) {
    const auto st = contract::StartedEvent::from_json(ev.raw);
    ++segment_;
    s.segments = segment_;
    s.job = QString::fromStdString(st.job);
    s.config = ev.fields.value(QLatin1StringView("config")).toObject();
    s.resumeStep = st.resume_step;
    s.maxTrainSteps = st.max_train_steps;
    s.worldSize = st.world_size;
    s.attemptStarted = true;
    s.finished = false;
    s.finishedStatus.clear();
    s.finishedStep = -1;
    s.errors.clear();
    if (segment_ > 1) applyResume(s.resumeStep);
  } else if (ev.type == QLatin1String(et::kError)) {
    // An error after a `finished` opens a new attempt (a restart that failed its config check).
    if (s.finished) {
      s.attemptStarted = false;
      s.finished = false;
      s.finishedStatus.clear();
      s.finishedStep = -1;
      s.errors.clear();
    }
    s.errors << QString::fromStdString(contract::ErrorEvent::from_json(ev.raw).message);
  } else if (ev.type == QLatin1String(et::kFinished)) {
    if (s.finished) {  // a second `finished` without a `started`: a fresh attempt
      s.attemptStarted = false;
      s.errors.clear();
    }
    const auto fin = contract::FinishedEvent::from_json(ev.raw);
    s.finished = true;
    s.finishedStatus = QString::fromStdString(fin.status);
    s.finishedStep = fin.step;
  }
  if (!keepHistory_) return;
  ev.segment = segment_;
  if (firstNewRow_ < 0) firstNewRow_ = int(log_.size());
  log_.push_back({false, int(events_.size())});
  events_.push_back(ev);
}

void RunEvents::applyResume(qint64 resumeStep) {
  // Points trained after the checkpoint we resumed from were lost by the crash.
  for (StepPoint& p : steps_) {
    if (p.segment < segment_ && !p.dropped && p.step > resumeStep) {
      p.dropped = true;
      reset_ = true;
    }
  }
  for (RunEvent& e : events_) {
    if (e.segment < segment_ && !e.dropped && isPointType(e.type) && e.step(-1) > resumeStep) {
      e.dropped = true;
      reset_ = true;
    }
  }
  summary_.lastStep = resumeStep;
  summary_.lastLoss = std::nan("");
  qint64 best = -1;
  for (const StepPoint& p : steps_) {
    if (!p.dropped && p.step >= best) {
      best = p.step;
      summary_.lastLoss = p.loss;
    }
  }
}

void RunEvents::flushSignals() {
  flushLazySteps();
  if (reset_) {
    reset_ = false;
    firstNewStep_ = -1;  // pointsReset covers the new steps too
    Q_EMIT pointsReset();
  }
  if (firstNewStep_ >= 0) {
    const int first = firstNewStep_;
    firstNewStep_ = -1;
    Q_EMIT stepsAppended(first);
  }
  if (firstNewRow_ >= 0) {
    const int first = firstNewRow_;
    firstNewRow_ = -1;
    Q_EMIT rowsAppended(first, int(log_.size()) - 1);
  }
  if (summaryDirty_) {
    summaryDirty_ = false;
    Q_EMIT summaryChanged();
  }
}

}  // namespace ws
