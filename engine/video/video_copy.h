// SPDX-License-Identifier: Apache-2.0
// Cutting a video without re-encoding: the packets of a frame range copied into a new file, as
// `ffmpeg -c copy` does, when the range can be cut there. No FFmpeg types in this header.
#pragma once
#include <cstdint>
#include <string>

namespace ws::video {

// Copies frames [first, end) (presentation order, as VideoReader counts them) of `src`'s video
// stream into `dst` (an .mp4) without decoding, when: frame `first` is a keyframe, `end` is the
// stream's end or a keyframe, and the range's packets follow each other in decode order (no
// frame inside depends on one outside: a closed GOP). The file is written under a temporary name
// and renamed, then probed: it must hold end − first frames. Returns false with `why` (and
// nothing written) when the range cannot be copied; throws ws::Error on unreadable input or a
// failed write.
bool copy_video_range(const std::string& src, int64_t first, int64_t end, const std::string& dst, std::string* why);

}  // namespace ws::video
