// SPDX-License-Identifier: Apache-2.0
#include "caption/sse_parser.h"

#include "core/error.h"

namespace ws::caption {
namespace {
constexpr size_t kMaxLine = size_t{16} << 20;  // one delta is a few bytes; this only stops a runaway line
}

bool SseParser::feed(std::string_view piece, const OnEvent& on_event) {
  while (!stopped_ && !piece.empty()) {
    const size_t nl = piece.find('\n');
    if (nl == std::string_view::npos) {
      if (partial_.size() + piece.size() > kMaxLine) throw Error("event stream: a line over 16 MiB");
      partial_.append(piece);
      return true;
    }
    std::string_view text = piece.substr(0, nl);
    piece.remove_prefix(nl + 1);
    if (!partial_.empty()) {
      partial_.append(text);
      text = partial_;
    }
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    const bool go_on = line(text, on_event);
    partial_.clear();
    if (!go_on) stopped_ = true;
  }
  return !stopped_;
}

bool SseParser::finish(const OnEvent& on_event) {
  if (stopped_) return false;
  if (!partial_.empty()) {
    std::string last;
    last.swap(partial_);
    if (!last.empty() && last.back() == '\r') last.pop_back();
    if (!line(last, on_event)) stopped_ = true;
  }
  if (!stopped_ && !dispatch(on_event)) stopped_ = true;
  return !stopped_;
}

bool SseParser::line(std::string_view text, const OnEvent& on_event) {
  if (text.empty()) return dispatch(on_event);
  if (text[0] == ':') return true;  // a comment: keep-alives
  const size_t colon = text.find(':');
  const std::string_view field = text.substr(0, colon);
  if (field != "data") return true;
  std::string_view value = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  if (has_data_) data_ += '\n';
  data_.append(value);
  has_data_ = true;
  return true;
}

bool SseParser::dispatch(const OnEvent& on_event) {
  if (!has_data_) return true;
  std::string data;
  data.swap(data_);
  has_data_ = false;
  ++events_;
  return on_event(data);
}

}  // namespace ws::caption
