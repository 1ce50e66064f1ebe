// SPDX-License-Identifier: Apache-2.0
#include "video/video_jpeg.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "video/ffmpeg_util.h"

namespace ws::video {
using namespace ff;

namespace {

const char* const kWhat = "JPEG round trip";

inline uint8_t to_u8(float v) { return static_cast<uint8_t>(std::clamp(std::nearbyint(v), 0.0f, 255.0f)); }

// RGB24 -> JFIF YCbCr (BT.601, full range) with 4:2:0 chroma as the 2x2 box mean, which is
// what libjpeg does. We convert ourselves rather than through swscale so the chroma siting and
// rounding are the JPEG ones, whatever the swscale version.
void rgb_to_yuv420(const uint8_t* rgb, int w, int h, AVFrame* f, std::vector<float>& cb, std::vector<float>& cr) {
  cb.assign(static_cast<size_t>(w) * h, 0.0f);
  cr.assign(static_cast<size_t>(w) * h, 0.0f);
  for (int y = 0; y < h; ++y) {
    const uint8_t* s = rgb + static_cast<size_t>(y) * w * 3;
    uint8_t* yrow = f->data[0] + static_cast<ptrdiff_t>(y) * f->linesize[0];
    float* cbr = cb.data() + static_cast<size_t>(y) * w;
    float* crr = cr.data() + static_cast<size_t>(y) * w;
    for (int x = 0; x < w; ++x) {
      const float r = s[3 * x], g = s[3 * x + 1], b = s[3 * x + 2];
      yrow[x] = to_u8(0.299f * r + 0.587f * g + 0.114f * b);
      cbr[x] = -0.168736f * r - 0.331264f * g + 0.5f * b + 128.0f;
      crr[x] = 0.5f * r - 0.418688f * g - 0.081312f * b + 128.0f;
    }
  }
  const int cw = (w + 1) / 2, ch = (h + 1) / 2;
  for (int j = 0; j < ch; ++j) {
    const int y0 = 2 * j, y1 = std::min(2 * j + 1, h - 1);
    uint8_t* ub = f->data[1] + static_cast<ptrdiff_t>(j) * f->linesize[1];
    uint8_t* vr = f->data[2] + static_cast<ptrdiff_t>(j) * f->linesize[2];
    for (int i = 0; i < cw; ++i) {
      const int x0 = 2 * i, x1 = std::min(2 * i + 1, w - 1);
      // Odd edges repeat the last row/column, so the mean is over the pixels that exist.
      const size_t a = static_cast<size_t>(y0) * w, b = static_cast<size_t>(y1) * w;
      ub[i] = to_u8(0.25f * (cb[a + x0] + cb[a + x1] + cb[b + x0] + cb[b + x1]));
      vr[i] = to_u8(0.25f * (cr[a + x0] + cr[a + x1] + cr[b + x0] + cr[b + x1]));
    }
  }
}

// JFIF YCbCr 4:2:0 -> RGB24 with libjpeg's "fancy" (triangle, 3/4 + 1/4) chroma upsampling.
void yuv420_to_rgb(const AVFrame* f, int w, int h, uint8_t* rgb) {
  const int cw = (w + 1) / 2, ch = (h + 1) / 2;
  for (int y = 0; y < h; ++y) {
    const int j = y / 2;
    const int jn = std::clamp((y % 2) ? j + 1 : j - 1, 0, ch - 1);
    const uint8_t* yrow = f->data[0] + static_cast<ptrdiff_t>(y) * f->linesize[0];
    const uint8_t* b0 = f->data[1] + static_cast<ptrdiff_t>(j) * f->linesize[1];
    const uint8_t* b1 = f->data[1] + static_cast<ptrdiff_t>(jn) * f->linesize[1];
    const uint8_t* r0 = f->data[2] + static_cast<ptrdiff_t>(j) * f->linesize[2];
    const uint8_t* r1 = f->data[2] + static_cast<ptrdiff_t>(jn) * f->linesize[2];
    uint8_t* d = rgb + static_cast<size_t>(y) * w * 3;
    for (int x = 0; x < w; ++x) {
      const int i = x / 2;
      const int in = std::clamp((x % 2) ? i + 1 : i - 1, 0, cw - 1);
      const float cb = 0.5625f * b0[i] + 0.1875f * (b0[in] + b1[i]) + 0.0625f * b1[in] - 128.0f;
      const float cr = 0.5625f * r0[i] + 0.1875f * (r0[in] + r1[i]) + 0.0625f * r1[in] - 128.0f;
      const float yy = yrow[x];
      d[3 * x] = to_u8(yy + 1.402f * cr);
      d[3 * x + 1] = to_u8(yy - 0.344136f * cb - 0.714136f * cr);
      d[3 * x + 2] = to_u8(yy + 1.772f * cb);
    }
  }
}

}  // namespace

struct JpegRoundTrip::Impl {
  int width = 0, height = 0, qscale = 0;
  CodecPtr enc, dec;
  FramePtr yuv = make_frame(), decoded = make_frame();
  PacketPtr pkt = make_packet();
  std::vector<float> cb, cr;
  int64_t pts = 0;
  size_t last_bytes = 0;
};

JpegRoundTrip::JpegRoundTrip(int width, int height, int qscale) : impl_(std::make_unique<Impl>()) {
  init_logging();
  take_last_log();
  Impl& m = *impl_;
  if (width <= 0 || height <= 0 || width > kMaxVideoSide || height > kMaxVideoSide)
    throw Error(std::string(kWhat) + ": bad picture size " + std::to_string(width) + "x" + std::to_string(height));
  // qmin defaults to 2 for the MPEG-family encoders, and 31 is their largest quantiser.
  if (qscale < 2 || qscale > 31)
    throw Error(std::string(kWhat) + ": qscale " + std::to_string(qscale) + " is not in 2..31");
  m.width = width;
  m.height = height;
  m.qscale = qscale;

  const AVCodec* ec = avcodec_find_encoder(AV_CODEC_ID_MJPEG);
  const AVCodec* dc = avcodec_find_decoder(AV_CODEC_ID_MJPEG);
  if (!ec || !dc) throw Error(std::string(kWhat) + ": this FFmpeg has no MJPEG encoder/decoder");
  m.enc.reset(avcodec_alloc_context3(ec));
  m.dec.reset(avcodec_alloc_context3(dc));
  if (!m.enc || !m.dec) throw Error("out of memory (avcodec_alloc_context3)");
  AVCodecContext* e = m.enc.get();
  e->width = width;
  e->height = height;
  e->pix_fmt = AV_PIX_FMT_YUVJ420P;
  e->color_range = AVCOL_RANGE_JPEG;
  e->time_base = AVRational{1, 25};
  // Fixed quantiser: the frame's quality (a lambda) sets qscale; qmin = qmax pins it.
  e->flags |= AV_CODEC_FLAG_QSCALE;
  e->global_quality = FF_QP2LAMBDA * qscale;
  e->qmin = e->qmax = qscale;
  e->thread_count = 1;
  int ret = avcodec_open2(e, ec, nullptr);
  if (ret < 0) fail(kWhat, "cannot open the MJPEG encoder", ret);
  m.dec->thread_count = 1;
  ret = avcodec_open2(m.dec.get(), dc, nullptr);
  if (ret < 0) fail(kWhat, "cannot open the MJPEG decoder", ret);

  m.yuv->format = AV_PIX_FMT_YUVJ420P;
  m.yuv->width = width;
  m.yuv->height = height;
  ret = av_frame_get_buffer(m.yuv.get(), 0);
  if (ret < 0) fail(kWhat, "cannot allocate a frame", ret);
}

JpegRoundTrip::~JpegRoundTrip() = default;

size_t JpegRoundTrip::last_jpeg_bytes() const { return impl_->last_bytes; }

void JpegRoundTrip::encode_packet(const uint8_t* rgb_in) {
  Impl& m = *impl_;
  // The encoder may still hold a reference to the last picture.
  int ret = av_frame_make_writable(m.yuv.get());
  if (ret < 0) fail(kWhat, "cannot write a frame", ret);
  rgb_to_yuv420(rgb_in, m.width, m.height, m.yuv.get(), m.cb, m.cr);
  m.yuv->quality = FF_QP2LAMBDA * m.qscale;
  m.yuv->pts = m.pts++;
  ret = avcodec_send_frame(m.enc.get(), m.yuv.get());
  if (ret < 0) fail(kWhat, "encoding failed", ret);
  ret = avcodec_receive_packet(m.enc.get(), m.pkt.get());
  if (ret < 0) fail(kWhat, "encoding failed", ret);
  m.last_bytes = static_cast<size_t>(m.pkt->size);
}

std::string JpegRoundTrip::encode(const uint8_t* rgb_in) {
  encode_packet(rgb_in);
  const AVPacket* p = impl_->pkt.get();
  std::string out(reinterpret_cast<const char*>(p->data), static_cast<size_t>(p->size));
  av_packet_unref(impl_->pkt.get());
  return out;
}

void JpegRoundTrip::run(const uint8_t* rgb_in, uint8_t* rgb_out) {
  Impl& m = *impl_;
  encode_packet(rgb_in);
  int ret = avcodec_send_packet(m.dec.get(), m.pkt.get());
  av_packet_unref(m.pkt.get());
  if (ret < 0) fail(kWhat, "decoding failed", ret);
  ret = avcodec_receive_frame(m.dec.get(), m.decoded.get());
  if (ret < 0) fail(kWhat, "decoding failed", ret);
  const AVFrame* d = m.decoded.get();
  if ((d->format != AV_PIX_FMT_YUVJ420P && d->format != AV_PIX_FMT_YUV420P) || d->width != m.width ||
      d->height != m.height)
    throw Error(std::string(kWhat) + ": the decoder returned an unexpected picture format");
  yuv420_to_rgb(d, m.width, m.height, rgb_out);
  av_frame_unref(m.decoded.get());
}

std::string encode_jpeg(const RgbFrame& frame, int qscale) {
  if (frame.data.size() != static_cast<size_t>(frame.width) * static_cast<size_t>(frame.height) * 3)
    throw Error(std::string(kWhat) + ": frame buffer does not match its size");
  return JpegRoundTrip(frame.width, frame.height, qscale).encode(frame.data.data());
}

RgbFrame jpeg_roundtrip(const RgbFrame& frame, int qscale) {
  if (frame.data.size() != static_cast<size_t>(frame.width) * static_cast<size_t>(frame.height) * 3)
    throw Error(std::string(kWhat) + ": frame buffer does not match its size");
  JpegRoundTrip j(frame.width, frame.height, qscale);
  RgbFrame out(frame.width, frame.height);
  out.time_s = frame.time_s;
  j.run(frame.data.data(), out.data.data());
  return out;
}

}  // namespace ws::video
