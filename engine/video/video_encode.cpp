// SPDX-License-Identifier: Apache-2.0
#include "video/video_encode.h"

extern "C" {
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "core/fs.h"
#include "video/ffmpeg_util.h"
#include "video/video_resize.h"

namespace ws::video {
using namespace ff;

namespace {

void check_dims(const std::string& path, int width, int height) {
  if (width <= 0 || height <= 0 || width > kMaxVideoSide || height > kMaxVideoSide ||
      int64_t{width} * height > kMaxVideoPixels)
    throw Error(path + ": cannot write a " + std::to_string(width) + "x" + std::to_string(height) +
                " picture (sizes must be 1.." + std::to_string(kMaxVideoSide) + " per side, at most 8192x8192 pixels)");
}

bool supports_yuv420p(const AVCodec* codec) {
  if (!codec->pix_fmts) return true;
  for (const AVPixelFormat* p = codec->pix_fmts; *p != AV_PIX_FMT_NONE; ++p)
    if (*p == AV_PIX_FMT_YUV420P) return true;
  return false;
}

// libx264 first, then any other H.264 encoder, then MPEG-4 Part 2.
std::vector<const AVCodec*> encoder_candidates(const std::string& forced) {
  std::vector<const AVCodec*> out;
  if (!forced.empty()) {
    if (const AVCodec* c = avcodec_find_encoder_by_name(forced.c_str())) out.push_back(c);
    return out;
  }
  if (const AVCodec* c = avcodec_find_encoder_by_name("libx264")) out.push_back(c);
  void* it = nullptr;
  while (const AVCodec* c = av_codec_iterate(&it))
    if (av_codec_is_encoder(c) && c->id == AV_CODEC_ID_H264 && std::strcmp(c->name, "libx264") != 0 &&
        supports_yuv420p(c))
      out.push_back(c);
  if (const AVCodec* c = avcodec_find_encoder(AV_CODEC_ID_MPEG4)) out.push_back(c);
  return out;
}

}  // namespace

struct VideoWriter::Impl {
  std::string path, tmp, name;
  int width = 0, height = 0;  // frames as given
  EncodeOptions opts;
  AVFormatContext* oc = nullptr;
  CodecPtr enc;
  AVStream* st = nullptr;
  FramePtr yuv = make_frame();
  FramePtr rgb = make_frame();  // padded RGB input of the conversion, zeroed once
  PacketPtr pkt = make_packet();
  SwsContext* sws = nullptr;
  int64_t next_pts = 0;  // the smallest timestamp the next frame may have
  int64_t frames = 0;
  bool header_written = false, finished = false;

  ~Impl() {
    sws_freeContext(sws);
    close_output();
    if (!finished && !tmp.empty()) ::unlink(tmp.c_str());
  }

  void close_output() {
    if (!oc) return;
    if (oc->pb) avio_closep(&oc->pb);
    avformat_free_context(oc);
    oc = nullptr;
  }

  bool try_open(const AVCodec* codec, int ew, int eh) {
    CodecPtr c(avcodec_alloc_context3(codec));
    if (!c) throw Error("out of memory (avcodec_alloc_context3)");
    c->width = ew;
    c->height = eh;
    c->pix_fmt = AV_PIX_FMT_YUV420P;
    AVRational rate = av_d2q(opts.fps, 1000000);
    c->time_base = av_inv_q(rate);
    c->framerate = rate;
    if (opts.gop > 0) c->gop_size = opts.gop;
    c->thread_count = opts.deterministic ? 1 : std::max(0, opts.threads);
    c->color_range = AVCOL_RANGE_MPEG;
    c->colorspace = AVCOL_SPC_BT709;
    c->color_primaries = AVCOL_PRI_BT709;
    c->color_trc = AVCOL_TRC_BT709;
    if (oc->oformat->flags & AVFMT_GLOBALHEADER) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    AVDictionary* o = nullptr;
    if (std::strcmp(codec->name, "libx264") == 0) {
      av_dict_set(&o, "crf", std::to_string(opts.crf).c_str(), 0);
      av_dict_set(&o, "preset", opts.preset.c_str(), 0);
      if (opts.deterministic) av_dict_set(&o, "x264-params", "mbtree=0", 0);
    } else if (codec->id == AV_CODEC_ID_MPEG4) {
      // Fixed quantiser: roughly CRF 18 -> q 3.
      c->flags |= AV_CODEC_FLAG_QSCALE;
      c->global_quality = FF_QP2LAMBDA * std::clamp(opts.crf / 6, 2, 31);
    } else {
      c->bit_rate = static_cast<int64_t>(static_cast<double>(ew) * eh * std::max(opts.fps, 1.0) * 0.2);
    }
    int ret = avcodec_open2(c.get(), codec, &o);
    av_dict_free(&o);
    if (ret < 0) return false;
    enc = std::move(c);
    return true;
  }

  void open(const std::string& p, int w, int h, EncodeOptions o) {
    init_logging();
    take_last_log();
    path = p;
    width = w;
    height = h;
    opts = std::move(o);
    check_dims(path, w, h);
    if (!(opts.fps > 0) || opts.fps > 1000) throw Error(path + ": bad frame rate " + std::to_string(opts.fps));
    int rot = ((opts.rotation % 360) + 360) % 360;
    if (rot % 90) throw Error(path + ": rotation must be 0, 90, 180 or 270 degrees");
    const int ew = w + w % 2, eh = h + h % 2;
    // A fresh name nobody could plant a link at; FFmpeg then opens the file made here.
    ::close(fs::create_temp_beside(path, 0644, &tmp));
    int ret = avformat_alloc_output_context2(&oc, nullptr, opts.container.c_str(), tmp.c_str());
    if (ret < 0 || !oc) fail(path, "cannot create a '" + opts.container + "' writer", ret);
    auto candidates = encoder_candidates(opts.encoder);
    for (const AVCodec* c : candidates)
      if (try_open(c, ew, eh)) break;
    if (!enc)
      throw Error(path + ": no usable video encoder" + (opts.encoder.empty() ? "" : " named '" + opts.encoder + "'") +
                  " in this FFmpeg");
    name = enc->codec->name;
    if (enc->codec->id != AV_CODEC_ID_H264 && opts.encoder.empty()) {
      static bool warned = false;
      if (!warned) std::fprintf(stderr, "warning: this FFmpeg has no H.264 encoder; writing MPEG-4 Part 2 video\n");
      warned = true;
    }
    st = avformat_new_stream(oc, nullptr);
    if (!st) throw Error("out of memory (avformat_new_stream)");
    ret = avcodec_parameters_from_context(st->codecpar, enc.get());
    if (ret < 0) fail(path, "cannot set stream parameters", ret);
    st->time_base = enc->time_base;
    set_stream_rotation(st, rot);

    yuv->format = AV_PIX_FMT_YUV420P;
    yuv->width = ew;
    yuv->height = eh;
    ret = av_frame_get_buffer(yuv.get(), 0);
    if (ret < 0) fail(path, "cannot allocate a frame", ret);
    // swscale's SIMD input readers go past the end of each row (and of the last one): they must
    // read our zeros, not whatever the heap held, or the same frames encode to different files.
    rgb->format = AV_PIX_FMT_RGB24;
    rgb->width = ew;
    rgb->height = eh;
    ret = av_frame_get_buffer(rgb.get(), 0);
    if (ret < 0) fail(path, "cannot allocate a frame", ret);
    for (AVBufferRef* b : rgb->buf)
      if (b) std::memset(b->data, 0, b->size);
    sws = sws_getContext(ew, eh, AV_PIX_FMT_RGB24, ew, eh, AV_PIX_FMT_YUV420P, SWS_BICUBIC | SWS_ACCURATE_RND, nullptr,
                         nullptr, nullptr);
    if (!sws) throw Error(path + ": cannot set up RGB -> YUV conversion");
    // Full-range RGB in, BT.709 limited range out: what the stream is tagged with.
    sws_setColorspaceDetails(sws, sws_getCoefficients(SWS_CS_DEFAULT), 1, sws_getCoefficients(SWS_CS_ITU709), 0, 0,
                             1 << 16, 1 << 16);

    ret = avio_open(&oc->pb, tmp.c_str(), AVIO_FLAG_WRITE);
    if (ret < 0) fail(path, "cannot write", ret);
    AVDictionary* mo = nullptr;
    if (opts.container == "mp4" || opts.container == "mov") av_dict_set(&mo, "movflags", "+faststart", 0);
    ret = avformat_write_header(oc, &mo);
    av_dict_free(&mo);
    if (ret < 0) fail(path, "cannot write the MP4 header", ret);
    header_written = true;
  }

  void drain() {
    for (;;) {
      int ret = avcodec_receive_packet(enc.get(), pkt.get());
      if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return;
      if (ret < 0) fail(path, "encoding failed", ret);
      // Encoders may leave the duration unset; the MP4 edit list then cuts the last frame.
      if (pkt->duration <= 0) pkt->duration = 1;
      av_packet_rescale_ts(pkt.get(), enc->time_base, st->time_base);
      pkt->stream_index = st->index;
      ret = av_interleaved_write_frame(oc, pkt.get());  // takes the packet's reference
      if (ret < 0) fail(path, "write failed", ret);
    }
  }
};

VideoWriter::VideoWriter(const std::string& path, int width, int height, EncodeOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->open(path, width, height, std::move(options));
}

VideoWriter::~VideoWriter() = default;

const std::string& VideoWriter::encoder_name() const { return impl_->name; }

void VideoWriter::write(const RgbFrame& frame) { write(frame, impl_->next_pts); }

void VideoWriter::write(const RgbFrame& frame, int64_t pts) {
  Impl& m = *impl_;
  if (pts < m.next_pts) throw Error(m.path + ": frame timestamps must increase");
  if (m.finished) throw Error(m.path + ": write after finish");
  if (frame.width != m.width || frame.height != m.height ||
      frame.data.size() != static_cast<size_t>(frame.width) * static_cast<size_t>(frame.height) * 3)
    throw Error(m.path + ": frame is " + std::to_string(frame.width) + "x" + std::to_string(frame.height) +
                ", the video is " + std::to_string(m.width) + "x" + std::to_string(m.height));
  RgbFrame even = pad_to_even(frame);
  int ret = av_frame_make_writable(m.yuv.get());
  if (ret < 0) fail(m.path, "cannot write a frame", ret);
  const size_t row = static_cast<size_t>(even.width) * 3;
  for (int y = 0; y < even.height; ++y)
    std::memcpy(m.rgb->data[0] + static_cast<ptrdiff_t>(y) * m.rgb->linesize[0], even.data.data() + y * row, row);
  sws_scale(m.sws, m.rgb->data, m.rgb->linesize, 0, even.height, m.yuv->data, m.yuv->linesize);
  m.yuv->pts = pts;
  m.next_pts = pts + 1;
  ret = avcodec_send_frame(m.enc.get(), m.yuv.get());
  if (ret < 0) fail(m.path, "encoding failed", ret);
  ++m.frames;
  m.drain();
}

void VideoWriter::finish() {
  Impl& m = *impl_;
  if (m.finished) return;
  if (m.frames == 0) throw Error(m.path + ": no frames to write");
  int ret = avcodec_send_frame(m.enc.get(), nullptr);
  if (ret < 0) fail(m.path, "encoding failed", ret);
  m.drain();
  ret = av_write_trailer(m.oc);
  if (ret < 0) fail(m.path, "cannot finish the MP4", ret);
  m.close_output();
  int fd = ::open(m.tmp.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  if (::rename(m.tmp.c_str(), m.path.c_str()) != 0)
    throw Error(m.path + ": rename failed (" + std::strerror(errno) + ")");
  m.finished = true;
  fs::fsync_dir(fs::dirname(m.path));
}

void write_video(const std::string& path, const std::vector<RgbFrame>& frames, const EncodeOptions& options) {
  if (frames.empty()) throw Error(path + ": no frames to write");
  VideoWriter w(path, frames.front().width, frames.front().height, options);
  for (const auto& f : frames) w.write(f);
  w.finish();
}

void write_png(const std::string& path, const RgbFrame& frame) {
  init_logging();
  check_dims(path, frame.width, frame.height);
  if (frame.data.size() != static_cast<size_t>(frame.width) * static_cast<size_t>(frame.height) * 3)
    throw Error(path + ": frame buffer does not match its size");
  const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
  if (!codec) throw Error(path + ": this FFmpeg has no PNG encoder");
  CodecPtr c(avcodec_alloc_context3(codec));
  if (!c) throw Error("out of memory (avcodec_alloc_context3)");
  c->width = frame.width;
  c->height = frame.height;
  c->pix_fmt = AV_PIX_FMT_RGB24;
  c->time_base = AVRational{1, 1};
  int ret = avcodec_open2(c.get(), codec, nullptr);
  if (ret < 0) fail(path, "cannot open the PNG encoder", ret);
  FramePtr f = make_frame();
  f->format = AV_PIX_FMT_RGB24;
  f->width = frame.width;
  f->height = frame.height;
  f->pts = 0;
  // Wrap the buffer without copying; the encoder only reads it.
  f->data[0] = const_cast<uint8_t*>(frame.data.data());
  f->linesize[0] = frame.width * 3;
  ret = avcodec_send_frame(c.get(), f.get());
  if (ret >= 0) ret = avcodec_send_frame(c.get(), nullptr);
  if (ret < 0) fail(path, "PNG encoding failed", ret);
  PacketPtr pkt = make_packet();
  ret = avcodec_receive_packet(c.get(), pkt.get());
  if (ret < 0) fail(path, "PNG encoding failed", ret);
  fs::write_file_atomic(path,
                        std::string_view(reinterpret_cast<const char*>(pkt->data), static_cast<size_t>(pkt->size)));
}

}  // namespace ws::video
