// SPDX-License-Identifier: Apache-2.0
#include "video/video_copy.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "core/fs.h"
#include "video/ffmpeg_util.h"
#include "video/video_decode.h"

namespace ws::video {
namespace {

using namespace ff;

struct PacketFacts {
  int64_t pts = 0, dts = 0;
  bool key = false;
};

FormatPtr open_input(const std::string& path, int* stream) {
  check_input_file(path);
  AVFormatContext* raw = nullptr;
  int ret = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
  if (ret < 0) fail(path, "cannot open", ret);
  FormatPtr in(raw);
  ret = avformat_find_stream_info(in.get(), nullptr);
  if (ret < 0) fail(path, "cannot read stream info", ret);
  *stream = av_find_best_stream(in.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (*stream < 0) fail(path, "no video stream");
  return in;
}

// The output, removed unless commit() ran.
struct Output {
  std::string path, tmp;
  AVFormatContext* oc = nullptr;
  bool committed = false;
  ~Output() {
    if (oc) {
      if (oc->pb) avio_closep(&oc->pb);
      avformat_free_context(oc);
    }
    if (!committed && !tmp.empty()) ::unlink(tmp.c_str());
  }
};

}  // namespace

bool copy_video_range(const std::string& src, int64_t first, int64_t end, const std::string& dst, std::string* why) {
  init_logging();
  const auto refuse = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  int si = -1;
  FormatPtr in = open_input(src, &si);
  AVStream* ist = in->streams[si];
  // Pass 1: every packet's timestamps and key flag, in decode (file) order.
  std::vector<PacketFacts> packets;
  PacketPtr pkt = make_packet();
  for (;;) {
    const int ret = av_read_frame(in.get(), pkt.get());
    if (ret == AVERROR_EOF) break;
    if (ret < 0) fail(src, "cannot read", ret);
    if (pkt->stream_index == si) {
      if (pkt->pts == AV_NOPTS_VALUE || pkt->dts == AV_NOPTS_VALUE) {
        av_packet_unref(pkt.get());
        return refuse("packets without timestamps");
      }
      packets.push_back({pkt->pts, pkt->dts, (pkt->flags & AV_PKT_FLAG_KEY) != 0});
    }
    av_packet_unref(pkt.get());
  }
  const auto n = static_cast<int64_t>(packets.size());
  if (first < 0 || end > n || first >= end) return refuse("range outside the video's " + std::to_string(n) + " frames");
  // Presentation order: packets sorted by pts; order[i] is the decode index of frame i.
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return packets[size_t(a)].pts < packets[size_t(b)].pts; });
  if (!packets[size_t(order[size_t(first)])].key) return refuse("frame " + std::to_string(first) + " is no keyframe");
  if (end < n && !packets[size_t(order[size_t(end)])].key)
    return refuse("frame " + std::to_string(end) + " is no keyframe");
  int64_t lo = n, hi = -1;
  for (int64_t f = first; f < end; ++f) {
    lo = std::min(lo, order[size_t(f)]);
    hi = std::max(hi, order[size_t(f)]);
  }
  if (hi - lo + 1 != end - first || lo != order[size_t(first)])
    return refuse("the range's frames depend on frames outside it (open GOP)");

  // Pass 2: the packets lo..hi (decode order) into the new file, timestamps from the first frame.
  in.reset();
  in = open_input(src, &si);
  ist = in->streams[si];
  Output out;
  out.path = dst;
  ::close(fs::create_temp_beside(dst, 0644, &out.tmp));
  int ret = avformat_alloc_output_context2(&out.oc, nullptr, "mp4", out.tmp.c_str());
  if (ret < 0 || !out.oc) fail(dst, "cannot create an mp4 writer", ret);
  AVStream* ost = avformat_new_stream(out.oc, nullptr);
  if (!ost) fail(dst, "cannot add a stream");
  ret = avcodec_parameters_copy(ost->codecpar, ist->codecpar);
  if (ret < 0) fail(dst, "cannot copy the stream's parameters", ret);
  ost->codecpar->codec_tag = 0;
  ost->time_base = ist->time_base;
  ost->avg_frame_rate = ist->avg_frame_rate;
  set_stream_rotation(ost, stream_rotation(ist));
  ret = avio_open(&out.oc->pb, out.tmp.c_str(), AVIO_FLAG_WRITE);
  if (ret < 0) fail(dst, "cannot write", ret);
  ret = avformat_write_header(out.oc, nullptr);
  if (ret < 0) fail(dst, "cannot write the MP4 header", ret);
  const int64_t offset = packets[size_t(order[size_t(first)])].pts;
  int64_t index = -1;
  for (;;) {
    ret = av_read_frame(in.get(), pkt.get());
    if (ret == AVERROR_EOF) break;
    if (ret < 0) fail(src, "cannot read", ret);
    if (pkt->stream_index == si && ++index >= lo && index <= hi) {
      pkt->pts -= offset;
      pkt->dts -= offset;
      pkt->pos = -1;
      pkt->stream_index = ost->index;
      av_packet_rescale_ts(pkt.get(), ist->time_base, ost->time_base);
      ret = av_interleaved_write_frame(out.oc, pkt.get());
      if (ret < 0) fail(dst, "cannot write a packet", ret);
    } else {
      av_packet_unref(pkt.get());
    }
    if (index > hi) break;
  }
  ret = av_write_trailer(out.oc);
  if (ret < 0) fail(dst, "cannot finish the MP4", ret);
  avio_closep(&out.oc->pb);
  // What was written must decode to the range's frames, or the copy is not used.
  const VideoInfo info = probe_video(out.tmp, true);
  if (info.frames != end - first)
    return refuse("the copy holds " + std::to_string(info.frames) + " frames, not " + std::to_string(end - first));
  int fd = ::open(out.tmp.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  if (::rename(out.tmp.c_str(), dst.c_str()) != 0) throw Error(dst + ": rename failed (" + std::strerror(errno) + ")");
  out.committed = true;
  fs::fsync_dir(fs::dirname(dst));
  return true;
}

}  // namespace ws::video
