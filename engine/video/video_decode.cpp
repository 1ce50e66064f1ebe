// SPDX-License-Identifier: Apache-2.0
#include "video/video_decode.h"

extern "C" {
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>

#include "core/error.h"
#include "video/ffmpeg_util.h"
#include "video/video_resize.h"

namespace ws::video {
using namespace ff;

namespace {

// Presentation timestamps of every frame, from a packet scan (no decoding).
struct FrameIndex {
  std::vector<int64_t> pts;      // sorted: pts[i] is frame i
  std::vector<int64_t> key_pts;  // sorted keyframe timestamps
  bool pts_usable = true;        // false: missing or repeated timestamps -> count by decoding
  int64_t corrupt_packets = 0;
  std::string read_error;  // why the scan stopped early, if it did
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

FormatPtr open_format(const std::string& path) {
  init_logging();
  check_input_file(path);
  take_last_log();
  AVFormatContext* raw = nullptr;
  int ret = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
  if (ret < 0) fail(path, "not a video or image FFmpeg can read", ret);
  FormatPtr fmt(raw);
  ret = avformat_find_stream_info(fmt.get(), nullptr);
  if (ret < 0) fail(path, "cannot read the stream headers", ret);
  return fmt;
}

int video_stream(AVFormatContext* fmt, const std::string& path) {
  if (fmt->nb_streams == 0) throw Error(path + ": no streams found (truncated or damaged file?)");
  int idx = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (idx < 0) {
    bool audio = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, -1, nullptr, 0) >= 0;
    throw Error(
        path + (audio ? ": has no video stream (audio only)" : ": no video stream found (truncated or damaged file?)"));
  }
  // Only this stream's packets are read, which also makes scans cheap.
  for (unsigned i = 0; i < fmt->nb_streams; ++i)
    if (static_cast<int>(i) != idx) fmt->streams[i]->discard = AVDISCARD_ALL;
  return idx;
}

VideoInfo header_info(const std::string& path, AVFormatContext* fmt, AVStream* st) {
  VideoInfo vi;
  vi.path = path;
  const AVCodecParameters* par = st->codecpar;
  vi.coded_width = par->width;
  vi.coded_height = par->height;
  if (par->width <= 0 || par->height <= 0) fail(path, "cannot read the picture size (corrupt or truncated file?)");
  if (par->width > kMaxVideoSide || par->height > kMaxVideoSide || int64_t{par->width} * par->height > kMaxVideoPixels)
    throw Error(path + ": absurd picture size " + std::to_string(par->width) + "x" + std::to_string(par->height) +
                " (corrupt header? the limit is " + std::to_string(kMaxVideoSide) + " per side, 8192x8192 pixels)");
  vi.rotation = stream_rotation(st);
  bool swap = vi.rotation == 90 || vi.rotation == 270;
  vi.width = swap ? par->height : par->width;
  vi.height = swap ? par->width : par->height;
  vi.codec = avcodec_get_name(par->codec_id);
  vi.container = fmt->iformat->name;
  vi.still_image = vi.container == "image2" || ends_with(vi.container, "_pipe");
  vi.header_frames = st->nb_frames > 0 ? st->nb_frames : -1;
  // The average rate, unless it is within 3% of the nominal one (Matroska's millisecond
  // timestamps make 16 fps average 16.17).
  const double avg = st->avg_frame_rate.num > 0 && st->avg_frame_rate.den > 0 ? av_q2d(st->avg_frame_rate) : 0;
  const double nominal = st->r_frame_rate.num > 0 && st->r_frame_rate.den > 0 ? av_q2d(st->r_frame_rate) : 0;
  if (!vi.still_image)
    vi.fps = (avg > 0 && !(nominal > 0 && std::fabs(avg - nominal) < 0.03 * nominal)) ? avg : nominal;
  if (st->duration != AV_NOPTS_VALUE && st->duration > 0)
    vi.duration_s = static_cast<double>(st->duration) * av_q2d(st->time_base);
  else if (fmt->duration != AV_NOPTS_VALUE && fmt->duration > 0)
    vi.duration_s = static_cast<double>(fmt->duration) / AV_TIME_BASE;
  if (vi.still_image) {
    vi.frames = 1;
    vi.duration_s = 0;
  } else if (vi.header_frames > 0) {
    vi.frames = vi.header_frames;
  } else if (vi.fps > 0 && vi.duration_s > 0) {
    vi.frames = static_cast<int64_t>(std::llround(vi.duration_s * vi.fps));  // estimate until counted
  }
  return vi;
}

FrameIndex scan_packets(const std::string& path) {
  FormatPtr fmt = open_format(path);
  int idx = video_stream(fmt.get(), path);
  FrameIndex fi;
  PacketPtr pkt = make_packet();
  for (;;) {
    int ret = av_read_frame(fmt.get(), pkt.get());
    if (ret < 0) {
      if (ret != AVERROR_EOF) fi.read_error = describe(ret);
      break;
    }
    if (pkt->stream_index == idx && !(pkt->flags & AV_PKT_FLAG_DISCARD)) {
      // Decoded frames carry their packet's pts; a dts-only stream (AVI with B-frames, raw
      // H.264) cannot be matched that way and is read by counting decoded frames instead.
      int64_t ts = pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts;
      if (pkt->pts == AV_NOPTS_VALUE) fi.pts_usable = false;
      fi.pts.push_back(ts);
      if (pkt->flags & AV_PKT_FLAG_KEY) fi.key_pts.push_back(ts);
      if (pkt->flags & AV_PKT_FLAG_CORRUPT) ++fi.corrupt_packets;
    }
    av_packet_unref(pkt.get());
  }
  std::sort(fi.pts.begin(), fi.pts.end());
  std::sort(fi.key_pts.begin(), fi.key_pts.end());
  if (std::adjacent_find(fi.pts.begin(), fi.pts.end()) != fi.pts.end()) fi.pts_usable = false;
  return fi;
}

// Training reopens the same files every epoch: keep their scans (keyed by size and mtime).
std::shared_ptr<const FrameIndex> cached_index(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::make_shared<FrameIndex>(scan_packets(path));
  std::string key = path + "|" + std::to_string(st.st_size) + "|" + std::to_string(st.st_mtim.tv_sec) + "." +
                    std::to_string(st.st_mtim.tv_nsec);
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const FrameIndex>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto fi = std::make_shared<const FrameIndex>(scan_packets(path));
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() > 4096) cache.clear();  // bounded; rescanning is cheap
  cache[key] = fi;
  return fi;
}

void use_counted_frames(VideoInfo& vi, const FrameIndex& fi) {
  vi.frames = static_cast<int64_t>(fi.pts.size());
  vi.frames_counted = true;
}

}  // namespace

// ---------------------------------------------------------------------------------------

struct VideoReader::Impl {
  std::string path;
  DecodeOptions opts;
  FormatPtr fmt;
  CodecPtr dec;
  AVStream* st = nullptr;
  int stream = -1;
  PacketPtr pkt = make_packet();
  FramePtr frame = make_frame();
  struct SwsKey {
    int w, h, format, cs, range;
    bool operator==(const SwsKey& o) const {
      return w == o.w && h == o.h && format == o.format && cs == o.cs && range == o.range;
    }
  };
  SwsContext* sws = nullptr;  // rebuilt when the frame size, format or colour space changes
  SwsKey sws_key{};
  VideoInfo info;
  std::shared_ptr<const FrameIndex> index;
  bool draining = false;
  int64_t last_ts = AV_NOPTS_VALUE;  // timestamp of the last frame the decoder gave
  int64_t seq_next = 0;              // frames given since the start (valid while seq_valid)
  bool seq_valid = true;
  int64_t decoded_count = -1;  // frames counted by decoding (streams without timestamps)

  ~Impl() { sws_freeContext(sws); }

  void open() {
    dec.reset();
    fmt = open_format(path);
    stream = video_stream(fmt.get(), path);
    st = fmt->streams[stream];
    info = header_info(path, fmt.get(), st);
    if (index && index->pts_usable) use_counted_frames(info, *index);  // reopened: keep the count
    const AVCodec* codec = avcodec_find_decoder(st->codecpar->codec_id);
    if (!codec) throw Error(path + ": no decoder for codec '" + info.codec + "' in this FFmpeg");
    dec.reset(avcodec_alloc_context3(codec));
    if (!dec) throw Error("out of memory (avcodec_alloc_context3)");
    int ret = avcodec_parameters_to_context(dec.get(), st->codecpar);
    if (ret < 0) fail(path, "bad codec parameters", ret);
    dec->thread_count = std::max(0, opts.threads);
    dec->pkt_timebase = st->time_base;
    ret = avcodec_open2(dec.get(), codec, nullptr);
    if (ret < 0) fail(path, "cannot open the " + info.codec + " decoder", ret);
    draining = false;
    last_ts = AV_NOPTS_VALUE;
    seq_next = 0;
    seq_valid = true;
  }

  const FrameIndex& ensure_index() {
    if (!index) {
      index = cached_index(path);
      if (index->pts.empty())
        throw Error(path + ": no readable video frames" +
                    (index->read_error.empty() ? "" : " (" + index->read_error + ")"));
      if (index->pts_usable) use_counted_frames(info, *index);
    }
    return *index;
  }

  static int64_t frame_ts(const AVFrame* f) { return f->pts != AV_NOPTS_VALUE ? f->pts : f->best_effort_timestamp; }

  // Next decoded frame into `frame`; false at the end of the stream.
  bool decode_one() {
    for (;;) {
      int ret = avcodec_receive_frame(dec.get(), frame.get());
      if (ret == 0) {
        last_ts = frame_ts(frame.get());
        if (seq_valid) ++seq_next;
        return true;
      }
      if (ret == AVERROR_EOF) return false;
      if (ret != AVERROR(EAGAIN)) fail(path, "decoding failed", ret);
      if (draining) return false;
      ret = av_read_frame(fmt.get(), pkt.get());
      if (ret < 0) {
        avcodec_send_packet(dec.get(), nullptr);  // end of input (or read error): drain
        draining = true;
        continue;
      }
      if (pkt->stream_index == stream) {
        // A corrupt packet is skipped as players do; a missing frame is reported by read().
        avcodec_send_packet(dec.get(), pkt.get());
      }
      av_packet_unref(pkt.get());
    }
  }

  void seek(int64_t ts) {
    avcodec_flush_buffers(dec.get());
    draining = false;
    last_ts = AV_NOPTS_VALUE;
    seq_valid = false;
    if (av_seek_frame(fmt.get(), stream, ts, AVSEEK_FLAG_BACKWARD) < 0) open();  // rewinds to the start
  }

  RgbFrame convert() {
    const AVFrame* f = frame.get();
    auto pix = static_cast<AVPixelFormat>(f->format);
    const int range = f->color_range == AVCOL_RANGE_JPEG || pix == AV_PIX_FMT_YUVJ420P || pix == AV_PIX_FMT_YUVJ422P ||
                      pix == AV_PIX_FMT_YUVJ444P;
    const int cs = f->colorspace == AVCOL_SPC_UNSPECIFIED ? SWS_CS_DEFAULT : static_cast<int>(f->colorspace);
    const SwsKey key{f->width, f->height, f->format, cs, range};
    if (!sws || !(key == sws_key)) {
      sws_freeContext(sws);
      sws = sws_getContext(f->width, f->height, pix, f->width, f->height, AV_PIX_FMT_RGB24,
                           SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, nullptr, nullptr, nullptr);
      if (!sws)
        throw Error(path + ": cannot convert pixel format " +
                    std::string(av_get_pix_fmt_name(pix) ? av_get_pix_fmt_name(pix) : "?") + " to RGB");
      const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(pix);
      // Honour the stream's matrix and range (BT.709 HD video would shift colours otherwise).
      if (desc && !(desc->flags & AV_PIX_FMT_FLAG_RGB))
        sws_setColorspaceDetails(sws, sws_getCoefficients(cs), range, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0,
                                 1 << 16, 1 << 16);
      sws_key = key;
    }
    RgbFrame out(f->width, f->height);
    uint8_t* dst[4] = {out.data.data(), nullptr, nullptr, nullptr};
    int dst_stride[4] = {out.width * 3, 0, 0, 0};
    sws_scale(sws, f->data, f->linesize, 0, f->height, dst, dst_stride);
    if (info.rotation) out = rotate_rgb(out, info.rotation);
    int64_t ts = frame_ts(f);
    if (ts != AV_NOPTS_VALUE) {
      int64_t start = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
      out.time_s = static_cast<double>(ts - start) * av_q2d(st->time_base);
    }
    return out;
  }

  [[noreturn]] void missing(int64_t index, int64_t total) {
    std::string why = "frame " + std::to_string(index) + " of " + std::to_string(total) + " could not be decoded";
    if (info.header_frames > 0 && index >= static_cast<int64_t>(ensure_index().pts.size()))
      why += " (file ends early: truncated?)";
    fail(path, why);
  }

  // Decodes forward to the frame stamped `target`; nullopt when the stream passes it or ends.
  std::optional<RgbFrame> decode_until(int64_t target) {
    int past = 0;
    while (decode_one()) {
      if (last_ts == target) return convert();
      // A few frames of slack past the target: streams without reorder info in their
      // headers can come out of the decoder slightly out of order.
      if (last_ts != AV_NOPTS_VALUE && last_ts > target && ++past > 8) break;
    }
    return std::nullopt;
  }

  RgbFrame read_by_pts(int64_t index) {
    const FrameIndex& fi = ensure_index();
    const int64_t target = fi.pts[static_cast<size_t>(index)];
    size_t keys_before =
        static_cast<size_t>(std::upper_bound(fi.key_pts.begin(), fi.key_pts.end(), target) - fi.key_pts.begin());
    int64_t key = keys_before ? fi.key_pts[keys_before - 1] : fi.pts.front();
    // Already past the keyframe and before the target: just keep decoding.
    if (last_ts != AV_NOPTS_VALUE && last_ts < target && key <= last_ts)
      if (auto f = decode_until(target)) return std::move(*f);
    // Seek to the nearest keyframe; if the demuxer lands late, the one before; then the start.
    for (size_t attempt = 0; attempt < 3; ++attempt) {
      if (attempt < 2 && attempt < keys_before) seek(fi.key_pts[keys_before - 1 - attempt]);
      else open();
      if (auto f = decode_until(target)) return std::move(*f);
      if (attempt >= keys_before) break;  // decoded from the start and still missed it
    }
    missing(index, static_cast<int64_t>(fi.pts.size()));
  }

  RgbFrame read_sequential(int64_t index) {
    if (!seq_valid || index < seq_next) open();
    while (decode_one())
      if (seq_next - 1 == index) return convert();
    missing(index, seq_next);
  }

  int64_t count_by_decoding() {
    Impl other;
    other.path = path;
    other.opts = opts;
    other.open();
    int64_t n = 0;
    while (other.decode_one()) ++n;
    return n;
  }
};

VideoReader::VideoReader(const std::string& path, DecodeOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->opts = options;
  impl_->open();
}

VideoReader::~VideoReader() = default;

const VideoInfo& VideoReader::info() const { return impl_->info; }

int64_t VideoReader::frame_count() {
  const FrameIndex& fi = impl_->ensure_index();
  if (fi.pts_usable) return static_cast<int64_t>(fi.pts.size());
  if (impl_->decoded_count < 0) impl_->decoded_count = impl_->count_by_decoding();
  impl_->info.frames = impl_->decoded_count;
  impl_->info.frames_counted = true;
  return impl_->decoded_count;
}

RgbFrame VideoReader::read(int64_t index) {
  int64_t total = frame_count();
  if (index < 0 || index >= total) {
    const int64_t header = impl_->info.header_frames;
    if (index >= total && header > total)
      throw Error(impl_->path + ": frame " + std::to_string(index) + " is missing: the header lists " +
                  std::to_string(header) + " frames but only " + std::to_string(total) +
                  " are in the file (truncated?)");
    throw Error(impl_->path + ": frame " + std::to_string(index) + " is out of range (the video has " +
                std::to_string(total) + " frames)");
  }
  return impl_->index->pts_usable ? impl_->read_by_pts(index) : impl_->read_sequential(index);
}

std::vector<RgbFrame> VideoReader::read(const std::vector<int64_t>& indices) {
  // Decode in ascending order (forward decoding, no seeks back), then hand back as asked.
  std::vector<int64_t> order(indices);
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  std::map<int64_t, RgbFrame> got;
  for (int64_t i : order) got.emplace(i, read(i));
  std::map<int64_t, size_t> uses;
  for (int64_t i : indices) ++uses[i];
  std::vector<RgbFrame> out;
  out.reserve(indices.size());
  for (int64_t i : indices) {
    // Move a frame out on its last use: clips can be hundreds of MB.
    if (--uses[i] == 0) out.push_back(std::move(got.at(i)));
    else out.push_back(got.at(i));
  }
  return out;
}

bool VideoReader::next(RgbFrame& out) {
  if (!impl_->decode_one()) return false;
  out = impl_->convert();
  return true;
}

VideoInfo probe_video(const std::string& path, bool count_frames) {
  FormatPtr fmt = open_format(path);
  int idx = video_stream(fmt.get(), path);
  VideoInfo vi = header_info(path, fmt.get(), fmt->streams[idx]);
  fmt.reset();
  if (count_frames) {
    auto fi = cached_index(path);
    if (fi->pts.empty())
      throw Error(path + ": no readable video frames" + (fi->read_error.empty() ? "" : " (" + fi->read_error + ")"));
    use_counted_frames(vi, *fi);
    if (vi.header_frames > 0 && vi.frames < vi.header_frames)
      throw Error(path + ": truncated: the header lists " + std::to_string(vi.header_frames) + " frames but only " +
                  std::to_string(vi.frames) + " are in the file");
    if (fi->corrupt_packets > 0)
      throw Error(path + ": truncated or damaged: " + std::to_string(fi->corrupt_packets) + " incomplete frame(s)");
  }
  return vi;
}

std::vector<RgbFrame> read_video_frames(const std::string& path, const std::vector<int64_t>& indices) {
  VideoReader r(path);
  return r.read(indices);
}

RgbFrame read_image(const std::string& path) {
  VideoReader r(path);
  RgbFrame f;
  if (!r.next(f)) throw Error(path + ": no picture could be decoded");
  return f;
}

}  // namespace ws::video
