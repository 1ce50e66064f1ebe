// SPDX-License-Identifier: Apache-2.0
#include "video/ffmpeg_util.h"

extern "C" {
#include <libavutil/display.h>
}

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/error.h"

namespace ws::video::ff {
namespace {

thread_local std::string t_last_log;
bool g_echo = false;

void log_callback(void* avcl, int level, const char* fmt, va_list vl) {
  if (level > AV_LOG_ERROR && !g_echo) return;
  char line[1024];
  int print_prefix = 1;
  va_list copy;
  va_copy(copy, vl);
  av_log_format_line2(avcl, level, fmt, copy, line, sizeof line, &print_prefix);
  va_end(copy);
  if (g_echo && level <= av_log_get_level()) std::fputs(line, stderr);
  if (level <= AV_LOG_ERROR) {
    std::string s = line;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    // Drop FFmpeg's "[mov,mp4,... @ 0x55..] " prefix: the user cannot act on it.
    if (!s.empty() && s[0] == '[') {
      auto close = s.find("] ");
      if (close != std::string::npos) s = s.substr(close + 2);
    }
    if (!s.empty()) t_last_log = s;
  }
}

}  // namespace

void init_logging() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("WANSTUDIO_FFMPEG_LOG");
    g_echo = env && *env && std::strcmp(env, "0") != 0;
    av_log_set_callback(log_callback);
  });
}

std::string take_last_log() {
  std::string s;
  s.swap(t_last_log);
  return s;
}

std::string describe(int averror) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(averror, buf, sizeof buf);
  std::string msg = buf;
  std::string extra = take_last_log();
  if (!extra.empty() && extra != msg) msg += ": " + extra;
  return msg;
}

void fail(const std::string& path, const std::string& what, int averror) {
  throw Error(path + ": " + what + " (" + describe(averror) + ")");
}

void fail(const std::string& path, const std::string& what) {
  std::string extra = take_last_log();
  throw Error(path + ": " + what + (extra.empty() ? "" : " (" + extra + ")"));
}

void check_input_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) throw Error(path + ": no such file");
    throw Error(path + ": cannot read (" + std::strerror(errno) + ")");
  }
  if (S_ISDIR(st.st_mode)) throw Error(path + ": is a folder, not a video or image file");
  if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file (a pipe, socket or device)");
  if (S_ISREG(st.st_mode) && st.st_size == 0) throw Error(path + ": empty file (0 bytes)");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(path + ": cannot read (" + std::strerror(errno) + ")");
  std::fclose(f);
}

PacketPtr make_packet() {
  PacketPtr p(av_packet_alloc());
  if (!p) throw Error("out of memory (av_packet_alloc)");
  return p;
}

FramePtr make_frame() {
  FramePtr f(av_frame_alloc());
  if (!f) throw Error("out of memory (av_frame_alloc)");
  return f;
}

namespace {
const int32_t* display_matrix(const AVStream* st) {
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 31, 102)
  const AVPacketSideData* sd = av_packet_side_data_get(st->codecpar->coded_side_data, st->codecpar->nb_coded_side_data,
                                                       AV_PKT_DATA_DISPLAYMATRIX);
  if (sd && sd->size >= 9 * 4) return reinterpret_cast<const int32_t*>(sd->data);
  return nullptr;
#else
  size_t size = 0;
  const uint8_t* data = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &size);
  if (data && size >= 9 * 4) return reinterpret_cast<const int32_t*>(data);
  return nullptr;
#endif
}
}  // namespace

int stream_rotation(const AVStream* st) {
  const int32_t* m = display_matrix(st);
  if (!m) return 0;
  double ccw = av_display_rotation_get(m);
  if (std::isnan(ccw)) return 0;
  // Same normalisation as the ffmpeg tool: clockwise degrees in [0, 360).
  double cw = -std::round(ccw);
  cw -= 360 * std::floor(cw / 360 + 0.9 / 360);
  for (int r : {0, 90, 180, 270, 360})
    if (std::fabs(cw - r) < 1.0) return r % 360;
  return 0;
}

void set_stream_rotation(AVStream* st, int degrees_cw) {
  if (degrees_cw % 360 == 0) return;
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 31, 102)
  AVPacketSideData* sd = av_packet_side_data_new(&st->codecpar->coded_side_data, &st->codecpar->nb_coded_side_data,
                                                 AV_PKT_DATA_DISPLAYMATRIX, 9 * 4, 0);
  uint8_t* data = sd ? sd->data : nullptr;
#else
  uint8_t* data = av_stream_new_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, 9 * 4);
#endif
  if (!data) throw Error("out of memory (display matrix)");
  // av_display_rotation_set and _get disagree on the sign in some FFmpeg versions: pick the
  // matrix that reads back (through stream_rotation's rule) as the rotation asked for.
  auto* m = reinterpret_cast<int32_t*>(data);
  const int want = ((degrees_cw % 360) + 360) % 360;
  av_display_rotation_set(m, static_cast<double>(want));
  double cw = -std::round(av_display_rotation_get(m));
  cw -= 360 * std::floor(cw / 360 + 0.9 / 360);
  if (std::fabs(cw - want) >= 1.0) av_display_rotation_set(m, -static_cast<double>(want));
}

}  // namespace ws::video::ff
