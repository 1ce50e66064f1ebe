// SPDX-License-Identifier: Apache-2.0
// Internal helpers shared by the FFmpeg translation units (video_*.cpp). Not part of the
// public video API: FFmpeg types appear here, so only FFmpeg-aware code includes it.
#pragma once
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
}

#include <memory>
#include <string>

namespace ws::video::ff {

// Routes FFmpeg's log into a per-thread "last error" instead of stderr (set
// WANSTUDIO_FFMPEG_LOG=1 to see everything). Idempotent.
void init_logging();
// The last error-level line FFmpeg logged on this thread (cleared by take).
std::string take_last_log();

// "Invalid data found when processing input" for an AVERROR code, plus FFmpeg's last
// logged error when it says more (e.g. "moov atom not found").
std::string describe(int averror);

// Throws ws::Error "<path>: <what> (<reason>)".
[[noreturn]] void fail(const std::string& path, const std::string& what, int averror);
[[noreturn]] void fail(const std::string& path, const std::string& what);

// Checks existence, type and size before FFmpeg sees the file, so the common mistakes get
// plain reasons ("no such file", "empty file").
void check_input_file(const std::string& path);

struct FormatCloser {
  void operator()(AVFormatContext* f) const { avformat_close_input(&f); }
};
struct CodecCloser {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct PacketFree {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct FrameFree {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
using FormatPtr = std::unique_ptr<AVFormatContext, FormatCloser>;
using CodecPtr = std::unique_ptr<AVCodecContext, CodecCloser>;
using PacketPtr = std::unique_ptr<AVPacket, PacketFree>;
using FramePtr = std::unique_ptr<AVFrame, FrameFree>;

PacketPtr make_packet();
FramePtr make_frame();

// Clockwise degrees (0, 90, 180, 270) a player turns the coded picture to display it,
// from the stream's display matrix; 0 when there is none or it is not a right angle.
int stream_rotation(const AVStream* st);
// Stores a display matrix asking players to turn the picture `degrees_cw` clockwise.
void set_stream_rotation(AVStream* st, int degrees_cw);

}  // namespace ws::video::ff
