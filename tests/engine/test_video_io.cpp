// SPDX-License-Identifier: Apache-2.0
// The FFmpeg video library: exact frame indices (seeking, B-frames, variable frame rate),
// frame sampling arithmetic, resize/crop sizes, encode -> decode quality, rotation metadata,
// image files, and every kind of bad input failing with a one-line reason naming the file.
#include <QtTest/QtTest>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <filesystem>
#include <fstream>

#include "core/error.h"

#ifdef WANSTUDIO_HAVE_VIDEO
#include "data/clip_tensor.h"
#include "dataset/frame_sampling.h"
#include "data/synthetic.h"
#include "video/video_decode.h"
#include "video/video_encode.h"
#include "video/video_resize.h"
#include "test_paths.h"

extern "C" {
#include <libavcodec/avcodec.h>
}

using namespace ws;
namespace stdfs = std::filesystem;

namespace {

double psnr(const video::RgbFrame& a, const video::RgbFrame& b, int w, int h) {
  double se = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        double d = double(a.pixel(x, y)[c]) - double(b.pixel(x, y)[c]);
        se += d * d;
      }
  double mse = se / (double(w) * h * 3);
  return mse <= 1e-12 ? 99.0 : 10 * std::log10(255.0 * 255.0 / mse);
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

uint32_t crc32(const std::string& s) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char ch : s) {
    c ^= ch;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return c ^ 0xFFFFFFFFu;
}

std::string be32(uint32_t v) { return std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }

std::string png_chunk(const std::string& type, const std::string& data) {
  return be32(uint32_t(data.size())) + type + data + be32(crc32(type + data));
}

// A PNG whose header claims width x height (with valid CRCs) and whose pixel data is junk.
std::string png_claiming(uint32_t width, uint32_t height) {
  std::string ihdr = be32(width) + be32(height) + std::string{8, 2, 0, 0, 0};
  return std::string("\x89PNG\r\n\x1a\n", 8) + png_chunk("IHDR", ihdr) + png_chunk("IDAT", std::string(16, 'x')) +
         png_chunk("IEND", "");
}

// A baseline JPEG written straight through FFmpeg's mjpeg encoder (the library writes PNG only).
void write_jpeg(const std::string& path, const video::RgbFrame& rgb) {
  const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG);
  QVERIFY(codec);
  AVCodecContext* c = avcodec_alloc_context3(codec);
  c->width = rgb.width;
  c->height = rgb.height;
  c->pix_fmt = AV_PIX_FMT_YUVJ444P;
  c->time_base = AVRational{1, 1};
  c->flags |= AV_CODEC_FLAG_QSCALE;
  c->global_quality = FF_QP2LAMBDA * 2;
  QVERIFY(avcodec_open2(c, codec, nullptr) == 0);
  AVFrame* f = av_frame_alloc();
  f->format = c->pix_fmt;
  f->width = rgb.width;
  f->height = rgb.height;
  f->quality = c->global_quality;
  QVERIFY(av_frame_get_buffer(f, 0) == 0);
  for (int y = 0; y < rgb.height; ++y)
    for (int x = 0; x < rgb.width; ++x) {  // full-range BT.601, as JPEG defines it
      const uint8_t* p = rgb.pixel(x, y);
      double r = p[0], g = p[1], b = p[2];
      f->data[0][y * f->linesize[0] + x] =
          uint8_t(std::lround(std::clamp(0.299 * r + 0.587 * g + 0.114 * b, 0.0, 255.0)));
      f->data[1][y * f->linesize[1] + x] =
          uint8_t(std::lround(std::clamp(128 - 0.168736 * r - 0.331264 * g + 0.5 * b, 0.0, 255.0)));
      f->data[2][y * f->linesize[2] + x] =
          uint8_t(std::lround(std::clamp(128 + 0.5 * r - 0.418688 * g - 0.081312 * b, 0.0, 255.0)));
    }
  AVPacket* pkt = av_packet_alloc();
  QVERIFY(avcodec_send_frame(c, f) == 0);
  QVERIFY(avcodec_send_frame(c, nullptr) == 0);
  QVERIFY(avcodec_receive_packet(c, pkt) == 0);
  write_bytes(path, std::string(reinterpret_cast<const char*>(pkt->data), size_t(pkt->size)));
  av_packet_free(&pkt);
  av_frame_free(&f);
  avcodec_free_context(&c);
}

// The error must be a ws::Error, one line, naming the file.
void expect_clean_error(const std::function<void()>& fn, const std::string& path, const char* what) {
  try {
    fn();
  } catch (const Error& e) {
    std::string msg = e.what();
    QVERIFY2(msg.find(path) != std::string::npos,
             (std::string(what) + ": message does not name the file: " + msg).c_str());
    QVERIFY2(msg.find('\n') == std::string::npos, (std::string(what) + ": message is not one line: " + msg).c_str());
    qInfo("%s -> %s", what, msg.c_str());
    return;
  } catch (const std::exception& e) {
    QFAIL((std::string(what) + ": not a ws::Error: " + e.what()).c_str());
  }
  QFAIL((std::string(what) + ": no error").c_str());
}

}  // namespace

class TestVideoIo : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string dir() const { return tmp_.path().toStdString(); }

  // 64 frames 128x64 whose frame number is drawn as bars; keyframe every 8, B-frames on.
  std::string index_video(const std::string& name, bool vfr = false, const std::string& container = "mp4") {
    std::string path = dir() + "/" + name;
    video::EncodeOptions o;
    o.container = container;
    o.gop = 8;
    o.crf = 12;
    o.preset = "veryfast";
    video::VideoWriter w(path, 128, 64, o);
    int64_t pts = 0;
    for (int i = 0; i < 64; ++i) {
      w.write(data::make_index_frame(128, 64, i), pts);
      pts += vfr ? 1 + (i % 3) : 1;  // durations 1, 2, 3 ticks: variable frame rate
    }
    w.finish();
    return path;
  }

 private Q_SLOTS:
  void initTestCase() { QVERIFY(tmp_.isValid()); }

  void samplingArithmetic() {
    auto p = dataset::plan_clip(100, 17, 2);
    QCOMPARE(p.n, int64_t(17));
    QCOMPARE(p.clip_len, int64_t(33));
    QCOMPARE(p.max_start, int64_t(67));
    auto idx = dataset::clip_indices(p, 5);
    QCOMPARE(idx.size(), size_t(17));
    for (size_t i = 0; i < idx.size(); ++i) QCOMPARE(idx[i], int64_t(5 + 2 * i));
    // Too short for N: fewer frames, never dropped unless T < s.
    p = dataset::plan_clip(10, 17, 2);
    QCOMPARE(p.n, int64_t(5));
    QCOMPARE(p.clip_len, int64_t(9));
    QCOMPARE(p.max_start, int64_t(1));
    QCOMPARE(dataset::plan_clip(1, 17, 2).n, int64_t(0));
    QCOMPARE(dataset::plan_clip(81, 81, 1).max_start, int64_t(0));
    QVERIFY_THROWS_EXCEPTION(Error, dataset::sample_frame_indices(1, 17, 2, 0));
    QVERIFY_THROWS_EXCEPTION(Error, dataset::sample_frame_indices(100, 17, 2, 68));
  }

  void exactFrameIndices() {
    std::string path = index_video("index.mp4");
    video::VideoReader r(path);
    QCOMPARE(r.info().width, 128);
    QCOMPARE(r.info().height, 64);
    QCOMPARE(r.frame_count(), int64_t(64));
    // Sampled as training does: N = 9, stride 3, start 7, then 17..  (seeks across GOPs).
    auto idx = dataset::sample_frame_indices(64, 9, 3, 7);
    auto frames = r.read(idx);
    QCOMPARE(frames.size(), idx.size());
    for (size_t i = 0; i < idx.size(); ++i) QCOMPARE(data::read_index_frame(frames[i]), int(idx[i]));
    // Any order, repeats, backwards jumps, the last frame.
    std::vector<int64_t> odd = {63, 0, 31, 31, 8, 7, 9, 62, 1};
    frames = r.read(odd);
    for (size_t i = 0; i < odd.size(); ++i) QCOMPARE(data::read_index_frame(frames[i]), int(odd[i]));
    for (int64_t i : {40, 41, 47, 48, 2}) QCOMPARE(data::read_index_frame(r.read(i)), int(i));
    QVERIFY_THROWS_EXCEPTION(Error, r.read(64));
    QVERIFY_THROWS_EXCEPTION(Error, r.read(-1));
    // Sequential decoding agrees.
    video::VideoReader seq(path);
    video::RgbFrame f;
    int n = 0;
    while (seq.next(f)) {
      QCOMPARE(data::read_index_frame(f), n);
      ++n;
    }
    QCOMPARE(n, 64);
    video::VideoInfo vi = video::probe_video(path);
    QCOMPARE(vi.frames, int64_t(64));
    QVERIFY(vi.frames_counted);
    QCOMPARE(vi.codec, std::string("h264"));
    QVERIFY(std::fabs(vi.fps - 16.0) < 1e-6);
    QVERIFY(std::fabs(vi.duration_s - 4.0) < 0.01);
  }

  void variableFrameRate() {
    std::string path = index_video("vfr.mp4", true);
    video::VideoReader r(path);
    QCOMPARE(r.frame_count(), int64_t(64));
    for (int64_t i : {0, 5, 6, 7, 30, 63, 12}) {
      video::RgbFrame f = r.read(i);
      QCOMPARE(data::read_index_frame(f), int(i));
    }
    // Timestamps follow the variable durations (1, 2, 3 ticks of 1/16 s).
    video::RgbFrame f3 = r.read(3);
    QVERIFY2(std::fabs(f3.time_s - 6.0 / 16) < 1e-3, std::to_string(f3.time_s).c_str());
  }

  void otherContainers() {
    // Matroska and AVI carry timestamps differently; a raw H.264 stream has none at all, so
    // frames are counted and found by decoding from the start.
    for (auto [container, ext] :
         std::vector<std::pair<std::string, std::string>>{{"matroska", "mkv"}, {"avi", "avi"}, {"h264", "h264"}}) {
      std::string path = index_video("index." + ext, false, container);
      video::VideoReader r(path);
      QCOMPARE(r.frame_count(), int64_t(64));
      std::vector<int64_t> want = {5, 17, 63, 0, 40, 39, 8};
      auto frames = r.read(want);
      for (size_t i = 0; i < want.size(); ++i) {
        int got = data::read_index_frame(frames[i]);
        QVERIFY2(got == int(want[i]),
                 (ext + ": frame " + std::to_string(want[i]) + " read as " + std::to_string(got)).c_str());
      }
      QCOMPARE(r.info().width, 128);
      video::VideoInfo vi = video::probe_video(path);
      QCOMPARE(vi.frames, int64_t(64));
      QVERIFY2(std::fabs(vi.fps - 16.0) < 1e-6, (ext + ": fps " + std::to_string(vi.fps)).c_str());
    }
  }

  void resizeAndCropSizes() {
    video::RgbFrame in = data::make_synthetic_clip({97, 55, 1, 1}).front();
    for (auto [w, h] : std::vector<std::pair<int, int>>{{48, 32}, {200, 100}, {97, 55}, {31, 17}, {64, 64}}) {
      auto r = video::resize_rgb(in, w, h);
      QCOMPARE(r.width, w);
      QCOMPARE(r.height, h);
      QCOMPARE(r.data.size(), size_t(w) * h * 3);
      auto c = video::resize_cover_crop(in, w, h);
      QCOMPARE(c.width, w);
      QCOMPARE(c.height, h);
    }
    // The spec's worked example: 1920x1080 into the 480x816 bucket.
    auto [rh, rw] = video::cover_size(1080, 1920, 480, 816);
    QCOMPARE(rh, int64_t(480));
    QCOMPARE(rw, int64_t(853));
    QCOMPARE(video::center_crop_offset(853, 816), int64_t(18));  // 18.5 rounds to even
    QCOMPARE(video::center_crop_offset(5, 2), int64_t(2));       // 1.5 -> 2
    QCOMPARE(video::center_crop_offset(3, 2), int64_t(0));       // 0.5 -> 0
    auto p = video::pad_to_even(in);
    QCOMPARE(p.width, 98);
    QCOMPARE(p.height, 56);
    auto rot = video::rotate_rgb(in, 90);
    QCOMPARE(rot.width, 55);
    QCOMPARE(rot.height, 97);
    QVERIFY(std::memcmp(rot.pixel(54, 0), in.pixel(0, 0), 3) == 0);  // top-left goes top-right
    QVERIFY_THROWS_EXCEPTION(Error, video::resize_rgb(in, 0, 10));
    QVERIFY_THROWS_EXCEPTION(Error, video::resize_rgb(in, 100000, 100000));
    QVERIFY_THROWS_EXCEPTION(Error, video::crop_rgb(in, 90, 0, 10, 10));
    // The tensor path: cover + crop in torch, [3, T, H, W] in [-1, 1].
    auto frames = data::make_synthetic_clip({97, 55, 3, 2});
    auto x = data::frames_to_tensor(frames);
    QCOMPARE(x.sizes().vec(), (std::vector<int64_t>{3, 3, 55, 97}));
    auto y = data::to_model_clip(data::resize_cover_crop(x, 48, 48));
    QCOMPARE(y.sizes().vec(), (std::vector<int64_t>{3, 3, 48, 48}));
    QVERIFY(y.min().item<float>() >= -1.0f && y.max().item<float>() <= 1.0f);
  }

  void encodeDecodeRoundTrip() {
    for (auto [w, h] : std::vector<std::pair<int, int>>{{96, 64}, {97, 63}}) {
      auto frames = data::make_synthetic_clip({w, h, 17, 5});
      std::string path = dir() + "/rt_" + std::to_string(w) + ".mp4";
      video::EncodeOptions o;
      o.preset = "veryfast";
      video::VideoWriter vw(path, w, h, o);
      for (const auto& f : frames) vw.write(f);
      vw.finish();
      QVERIFY(!stdfs::exists(path + ".tmp." + std::to_string(::getpid())));
      qInfo("encoder: %s", vw.encoder_name().c_str());
      video::VideoReader r(path);
      QCOMPARE(r.info().width, w + w % 2);  // odd sizes are padded to even
      QCOMPARE(r.info().height, h + h % 2);
      QCOMPARE(r.frame_count(), int64_t(17));
      double worst = 99;
      for (int i = 0; i < 17; ++i) worst = std::min(worst, psnr(frames[size_t(i)], r.read(i), w, h));
      qInfo("%dx%d worst PSNR %.2f dB", w, h, worst);
      QVERIFY2(worst > 30.0, std::to_string(worst).c_str());
      // read_clip gives the training layout.
      auto clip = data::read_clip(path, {0, 4, 8}, 32, 48);
      QCOMPARE(clip.sizes().vec(), (std::vector<int64_t>{3, 3, 32, 48}));
    }
  }

  void faststartAndAtomicWrite() {
    std::string path = dir() + "/fs.mp4";
    video::write_video(path, data::make_synthetic_clip({64, 48, 5, 9}));
    std::string bytes = read_bytes(path);
    // +faststart: the index (moov) comes before the media data (mdat).
    QVERIFY(bytes.find("moov") < bytes.find("mdat"));
    // A writer dropped without finish() leaves no file and no temporary.
    std::string gone = dir() + "/gone.mp4";
    {
      video::VideoWriter w(gone, 64, 48);
      w.write(data::make_synthetic_clip({64, 48, 1, 9}).front());
    }
    QVERIFY(!stdfs::exists(gone));
    for (const auto& e : stdfs::directory_iterator(dir()))
      QVERIFY2(e.path().string().find(".tmp.") == std::string::npos, e.path().c_str());
  }

  void rotationMetadata() {
    video::RgbFrame src = data::make_synthetic_clip({96, 48, 1, 4}).front();
    for (int rot : {90, 180, 270}) {
      std::string path = dir() + "/rot" + std::to_string(rot) + ".mp4";
      video::EncodeOptions o;
      o.rotation = rot;
      o.preset = "veryfast";
      video::write_video(path, {src, src, src}, o);
      video::VideoInfo vi = video::probe_video(path);
      QCOMPARE(vi.rotation, rot);
      QCOMPARE(vi.coded_width, 96);
      QCOMPARE(vi.width, rot == 180 ? 96 : 48);
      QCOMPARE(vi.height, rot == 180 ? 48 : 96);
      video::RgbFrame got = video::read_video_frames(path, {1}).front();
      video::RgbFrame want = video::rotate_rgb(src, rot);
      QCOMPARE(got.width, want.width);
      QCOMPARE(got.height, want.height);
      double q = psnr(want, got, want.width, want.height);
      QVERIFY2(q > 30.0, (std::to_string(rot) + ": " + std::to_string(q)).c_str());
    }
  }

  void imageFiles() {
    video::RgbFrame src = data::make_synthetic_clip({37, 23, 1, 6}).front();
    std::string path = dir() + "/still.png";
    video::write_png(path, src);
    video::VideoInfo vi = video::probe_video(path);
    QVERIFY(vi.still_image);
    QCOMPARE(vi.frames, int64_t(1));
    QCOMPARE(vi.width, 37);
    QCOMPARE(vi.height, 23);
    video::RgbFrame got = video::read_image(path);
    QCOMPARE(got.width, 37);
    QVERIFY(got.data == src.data);  // PNG is lossless
    video::VideoReader r(path);
    QCOMPARE(r.frame_count(), int64_t(1));
    QVERIFY(r.read(0).data == src.data);
    // JPEG (odd size, full-range YUV): decoded within codec tolerance.
    std::string jpg = dir() + "/still.jpg";
    write_jpeg(jpg, src);
    vi = video::probe_video(jpg);
    QVERIFY(vi.still_image);
    QCOMPARE(vi.width, 37);
    QCOMPARE(vi.height, 23);
    QCOMPARE(vi.frames, int64_t(1));
    video::RgbFrame j = video::read_image(jpg);
    double q = psnr(src, j, 37, 23);
    qInfo("JPEG PSNR %.2f dB", q);
    QVERIFY2(q > 30.0, std::to_string(q).c_str());
  }

  void badInputs() {
    const std::string d = dir();
    expect_clean_error([&] { video::probe_video(d + "/missing.mp4"); }, d + "/missing.mp4", "missing file");
    write_bytes(d + "/empty.mp4", "");
    expect_clean_error([&] { video::probe_video(d + "/empty.mp4"); }, d + "/empty.mp4", "zero-byte file");
    expect_clean_error([&] { video::VideoReader r(d + "/empty.mp4"); }, d + "/empty.mp4", "zero-byte file (reader)");
    write_bytes(d + "/text.mp4", "This is not a video, just a text file with a misleading name.\n");
    expect_clean_error([&] { video::probe_video(d + "/text.mp4"); }, d + "/text.mp4", "text file named .mp4");
    expect_clean_error([&] { video::read_video_frames(d + "/text.mp4", {0}); }, d + "/text.mp4", "text file (reader)");
    expect_clean_error([&] { video::probe_video(d); }, d, "folder");

    // Truncated MP4: the index survives (faststart) but the media data is cut in half.
    std::string full = read_bytes(index_video("whole.mp4"));
    write_bytes(d + "/half.mp4", full.substr(0, full.size() / 2));
    expect_clean_error([&] { video::probe_video(d + "/half.mp4"); }, d + "/half.mp4", "truncated MP4 (probe)");
    expect_clean_error(
        [&] {
          video::VideoReader r(d + "/half.mp4");
          for (int64_t i = 0; i < 64; ++i) r.read(i);
        },
        d + "/half.mp4", "truncated MP4 (decode)");
    // Cut inside the index: cannot even be opened.
    write_bytes(d + "/head.mp4", full.substr(0, 200));
    expect_clean_error([&] { video::probe_video(d + "/head.mp4"); }, d + "/head.mp4", "truncated MP4 header");
    expect_clean_error([&] { video::VideoReader r(d + "/head.mp4"); }, d + "/head.mp4",
                       "truncated MP4 header (reader)");

    // Absurd dimensions in a picture header.
    write_bytes(d + "/huge.png", png_claiming(100000, 100000));
    expect_clean_error([&] { video::probe_video(d + "/huge.png"); }, d + "/huge.png", "100000x100000 PNG");
    expect_clean_error([&] { video::read_image(d + "/huge.png"); }, d + "/huge.png", "100000x100000 PNG (decode)");
    write_bytes(d + "/wide.png", png_claiming(40000, 8));
    expect_clean_error([&] { video::read_image(d + "/wide.png"); }, d + "/wide.png", "40000x8 PNG");
    // Truncated PNG.
    video::write_png(d + "/ok.png", data::make_synthetic_clip({40, 30, 1, 1}).front());
    std::string png = read_bytes(d + "/ok.png");
    write_bytes(d + "/cut.png", png.substr(0, png.size() / 2));
    expect_clean_error([&] { video::read_image(d + "/cut.png"); }, d + "/cut.png", "truncated PNG");

    // Writers refuse absurd sizes before allocating anything.
    expect_clean_error([&] { video::VideoWriter w(d + "/big.mp4", 100000, 100000); }, d + "/big.mp4",
                       "encode 100000x100000");
    expect_clean_error([&] { video::VideoWriter w(d + "/zero.mp4", 0, 16); }, d + "/zero.mp4", "encode 0x16");
    expect_clean_error([&] { video::write_png(d + "/neg.png", video::RgbFrame()); }, d + "/neg.png", "png 0x0");
    QVERIFY(!stdfs::exists(d + "/big.mp4"));
  }
};

#else  // built with -DWANSTUDIO_VIDEO=OFF: nothing to test here

class TestVideoIo : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void videoSupportNotBuilt() { QSKIP("built without video support (-DWANSTUDIO_VIDEO=OFF)"); }
};

#endif

QTEST_APPLESS_MAIN(TestVideoIo)
#include "test_video_io.moc"
