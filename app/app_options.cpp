// SPDX-License-Identifier: Apache-2.0
#include "app_options.h"

#include "jobs/preferences.h"

#include "jobs/worker_job.h"

namespace ws {
namespace {

// "--name value" or "--name=value"; advances i past the value.
bool takeValue(const QStringList& args, int& i, const QString& name, QString* value, QString* error) {
  const QString& a = args.at(i);
  if (a.startsWith(name + QLatin1Char('='))) {
    *value = a.mid(name.size() + 1);
    return true;
  }
  if (a != name) return false;
  if (i + 1 >= args.size()) {
    *error = QStringLiteral("%1 needs a value").arg(name);
    return true;
  }
  *value = args.at(++i);
  return true;
}

}  // namespace

bool AppOptions::wantsNoDisplay(const QStringList& args) {
  for (int i = 1; i < args.size(); ++i) {
    const QString& a = args.at(i);
    if (a == QLatin1String("--batch") || a == QLatin1String("--help") || a == QLatin1String("-h") ||
        a == QLatin1String("--version"))
      return true;
  }
  return false;
}

AppOptions AppOptions::parse(const QStringList& args) {
  AppOptions o;
  auto fail = [&o](const QString& msg) {
    o.mode = Mode::Error;
    o.error = msg;
    return o;
  };
  for (int i = 1; i < args.size(); ++i) {
    const QString& a = args.at(i);
    QString value, error;
    if (a == QLatin1String("--help") || a == QLatin1String("-h")) {
      o.mode = Mode::Help;
      return o;
    }
    if (a == QLatin1String("--version")) {
      o.mode = Mode::Version;
      return o;
    }
    if (a == QLatin1String("--batch")) {
      if (i + 1 >= args.size() || args.at(i + 1).startsWith(QLatin1String("--")))
        return fail(QStringLiteral("--batch needs a run YAML file: wanstudio --batch RUN.yaml [worker flags]"));
      o.mode = Mode::Batch;
      // Run files up to the first flag; the flags go to every run's worker.
      int j = i + 1;
      while (j < args.size() && !args.at(j).startsWith(QLatin1Char('-'))) o.runYamls << args.at(j++);
      o.runYaml = o.runYamls.first();
      o.workerArgs = args.mid(j);
      return o;
    }
    if (takeValue(args, i, QStringLiteral("--workspace"), &value, &error)) {
      if (!error.isEmpty()) return fail(error);
      o.workspace = value;
    } else if (takeValue(args, i, QStringLiteral("--configs"), &value, &error)) {
      if (!error.isEmpty()) return fail(error);
      o.configsDir = value;
    } else if (takeValue(args, i, QStringLiteral("--open"), &value, &error)) {
      if (!error.isEmpty()) return fail(error);
      o.openRun = value;
    } else if (takeValue(args, i, QStringLiteral("--dataset"), &value, &error)) {
      if (!error.isEmpty()) return fail(error);
      o.openDataset = value;
    } else if (takeValue(args, i, QStringLiteral("--tab"), &value, &error)) {
      if (!error.isEmpty()) return fail(error);
      o.runTab = value;
    } else if (takeValue(args, i, QStringLiteral("--compare"), &value, &error)) {
      if (!error.isEmpty()) return fail(error);
      // Two checkpoint folders: the value and the next argument.
      if (i + 1 >= args.size() || args.at(i + 1).startsWith(QLatin1String("--")))
        return fail(
            QStringLiteral("--compare needs two checkpoint folders: --compare RUN_A/checkpoint-N RUN_B/checkpoint-M"));
      o.compareA = value;
      o.compareB = args.at(++i);
    } else if (takeValue(args, i, QStringLiteral("--compare-input"), &value, &error)) {
      if (!error.isEmpty()) return fail(error);
      o.compareInput = value;
    } else if (takeValue(args, i, QStringLiteral("--screenshot"), &value, &error)) {
      if (!error.isEmpty()) return fail(error);
      o.screenshot = value;
    } else if (takeValue(args, i, QStringLiteral("--screenshot-size"), &value, &error)) {
      const QStringList wh = value.split(QLatin1Char('x'));
      const int w = wh.value(0).toInt(), h = wh.size() == 2 ? wh.value(1).toInt() : 0;
      if (!error.isEmpty() || w < 200 || h < 150)
        return fail(error.isEmpty()
                        ? QStringLiteral("--screenshot-size: expected WxH (at least 200x150), not %1").arg(value)
                        : error);
      o.screenshotSize = QSize(w, h);
    } else if (takeValue(args, i, QStringLiteral("--screenshot-delay-ms"), &value, &error)) {
      bool ok = false;
      o.screenshotDelayMs = value.toInt(&ok);
      if (!error.isEmpty() || !ok || o.screenshotDelayMs < 0)
        return fail(error.isEmpty() ? QStringLiteral("--screenshot-delay-ms: not a number: %1").arg(value) : error);
    } else if (takeValue(args, i, QStringLiteral("--quit-after-ms"), &value, &error)) {
      bool ok = false;
      o.quitAfterMs = value.toInt(&ok);
      if (!error.isEmpty() || !ok || o.quitAfterMs < 0)
        return fail(error.isEmpty() ? QStringLiteral("--quit-after-ms: not a number: %1").arg(value) : error);
    } else if (takeValue(args, i, QStringLiteral("--heartbeat-timeout"), &value, &error)) {
      bool ok = false;
      const double s = value.toDouble(&ok);
      if (!error.isEmpty() || !ok || s < 0)
        return fail(error.isEmpty() ? QStringLiteral("--heartbeat-timeout: not a number of seconds: %1").arg(value)
                                    : error);
      o.heartbeatTimeoutMs = int(s * 1000);
    } else if (a.startsWith(QLatin1Char('-'))) {
      return fail(QStringLiteral("unknown option %1 (see wanstudio --help)").arg(a));
    } else if (o.workspace.isEmpty()) {
      o.workspace = a;
    } else {
      return fail(QStringLiteral("unexpected argument %1 (see wanstudio --help)").arg(a));
    }
  }
  return o;
}

int AppOptions::effectiveHeartbeatTimeoutMs() const {
  if (heartbeatTimeoutMs >= 0) return heartbeatTimeoutMs;
  bool ok = false;
  const double s = qEnvironmentVariable("WANSTUDIO_HEARTBEAT_TIMEOUT").toDouble(&ok);
  if (ok && s >= 0) return int(s * 1000);
  if (const int chosen = prefs::heartbeatTimeoutS(); chosen >= 0) return chosen * 1000;  // Preferences
  return WorkerJob::kDefaultHeartbeatTimeoutMs;
}

QString AppOptions::helpText() {
  return QStringLiteral(
      "usage: wanstudio [WORKSPACE] [--workspace DIR] [--configs DIR] [--heartbeat-timeout S]\n"
      "                 [--open RUN_DIR] [--dataset META.json] [--tab NAME] [--screenshot FILE.png]\n"
      "                 [--compare CKPT_A CKPT_B --compare-input PROMPT|CLIP]\n"
      "       wanstudio [--heartbeat-timeout S] --batch RUN.yaml [RUN2.yaml...] [WORKER FLAGS...]\n"
      "\n"
      "Wan Studio: trains the Wan 2.2 latent upsampler and the dual DiT experts.\n"
      "\n"
      "  WORKSPACE, --workspace DIR  folder whose run directories (folders with events.jsonl\n"
      "                              or run.yaml) are listed; default: the last one used\n"
      "  --batch RUN.yaml            run the job of RUN.yaml (`job: upsampler|experts|vae`)\n"
      "                              without a display; the flags after RUN.yaml go to the\n"
      "                              worker, e.g. --max_train_steps 5. Ctrl-C cancels after\n"
      "                              the current step, a second Ctrl-C kills the worker.\n"
      "                              Exit code 0 completed, 1 failed, 130 cancelled.\n"
      "                              Several run files run one after another (the flags go\n"
      "                              to each), with a summary at the end; a failed run does\n"
      "                              not stop the others, a cancel does. Exit code: 0 when\n"
      "                              all completed, 130 when cancelled, else 1.\n"
      "                              --nproc N among them trains data parallel with N\n"
      "                              processes on this machine (wanstudio-engine launch).\n"
      "  --configs DIR               presets for File ▸ New Run (default: configs/ of the\n"
      "                              install or the source tree; also $WANSTUDIO_CONFIGS)\n"
      "  --heartbeat-timeout S       kill a worker silent for S seconds (default 60;\n"
      "                              also $WANSTUDIO_HEARTBEAT_TIMEOUT, 0 = never)\n"
      "  --open RUN_DIR              show this run folder at start\n"
      "  --dataset META.json         show this metadata.json on the Dataset page at start\n"
      "  --tab NAME                  the run page tab to show (events, validation, config,\n"
      "                              or a chart: loss, learning rate, grad norm, clips/s)\n"
      "  --compare CKPT_A CKPT_B     render two checkpoints (RUN/checkpoint-N, one run or two)\n"
      "                              on the Compare page at start, on --compare-input: a\n"
      "                              prompt for expert runs, a clip for upsampler runs\n"
      "  --screenshot FILE           render the window to FILE (PNG) once loaded and quit;\n"
      "                              with --compare, once both renders and the chart are done;\n"
      "                              works without a display: QT_QPA_PLATFORM=offscreen\n"
      "  --screenshot-size WxH       window size for --screenshot (default 1320x820)\n"
      "  --screenshot-delay-ms N     wait N ms for loading first (default 2500)\n"
      "  --quit-after-ms N           quit the window after N ms (smoke tests)\n"
      "  --help, --version\n"
      "\n"
      "The worker is $WANSTUDIO_ENGINE, else wanstudio-engine next to wanstudio.\n");
}

}  // namespace ws
