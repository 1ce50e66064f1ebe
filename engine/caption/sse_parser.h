// SPDX-License-Identifier: Apache-2.0
// Server-sent events as OpenAI-style servers stream them: `data:` lines, an event ending at a blank
// line. The body arrives in arbitrary pieces, so a line may be split anywhere (even inside a UTF-8
// character or between CR and LF); comments (`:` lines) and other fields (event:, id:, retry:) are
// skipped. Several `data:` lines of one event are joined with "\n", as the SSE spec says.
#pragma once
#include <functional>
#include <string>
#include <string_view>

namespace ws::caption {

class SseParser {
 public:
  using OnEvent = std::function<bool(const std::string& data)>;  // false: stop

  // Feeds the next piece of the body; false once `on_event` asked to stop (the rest is dropped).
  bool feed(std::string_view piece, const OnEvent& on_event);
  // The end of the body: an event not closed by a blank line still counts.
  bool finish(const OnEvent& on_event);
  size_t events() const { return events_; }

 private:
  bool line(std::string_view text, const OnEvent& on_event);
  bool dispatch(const OnEvent& on_event);

  std::string partial_;  // the line not yet ended
  std::string data_;     // the event being gathered
  bool has_data_ = false;
  bool stopped_ = false;
  size_t events_ = 0;
};

}  // namespace ws::caption
