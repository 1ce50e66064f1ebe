// SPDX-License-Identifier: Apache-2.0
#include "caption/openai_chat.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "caption/base64.h"
#include "caption/http_client.h"
#include "caption/sse_parser.h"
#include "core/error.h"
#include "core/json_depth.h"

namespace ws::caption {
namespace {

using nlohmann::json;

// Discarded for no JSON, and for JSON nested past the project's limit (walking it would recurse).
json parse_or_discard(const std::string& text) {
  try {
    check_json_nesting(text, "answer");
  } catch (const Error&) {
    return json(json::value_t::discarded);
  }
  return json::parse(text, nullptr, false);
}

// One line of at most `max` bytes (cut at a UTF-8 character boundary): the server's message goes
// into a one-line error.
std::string one_line(const std::string& text, size_t max = 300) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  if (out.size() > max) {
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
    out += "...";
  }
  return out;
}

// The message of an error body: OpenAI's {"error":{"message":...}}, Ollama's {"error":"..."},
// FastAPI's {"detail":...}; else the text itself.
std::string server_message(const std::string& body) {
  const json j = parse_or_discard(body);
  if (j.is_object()) {
    if (j.contains("error")) {
      const json& e = j["error"];
      if (e.is_object() && e.contains("message") && e["message"].is_string())
        return one_line(e["message"].get<std::string>());
      if (e.is_string()) return one_line(e.get<std::string>());
    }
    if (j.contains("message") && j["message"].is_string()) return one_line(j["message"].get<std::string>());
    if (j.contains("detail"))
      return one_line(j["detail"].is_string() ? j["detail"].get<std::string>() : j["detail"].dump());
  }
  return one_line(body);
}

// The text of a message's `content`: a string, or a list of {type: text, text} parts.
bool content_text(const json& content, std::string& text) {
  if (content.is_string()) {
    text = content.get<std::string>();
    return true;
  }
  if (!content.is_array()) return false;
  text.clear();
  for (const json& part : content)
    if (part.is_object() && part.contains("text") && part["text"].is_string()) text += part["text"].get<std::string>();
  return true;
}

std::string request_body(const ChatOptions& o, const std::string& prompt, const std::vector<std::string>& images) {
  json content = json::array({{{"type", "text"}, {"text", prompt}}});
  for (size_t i = 0; i < images.size(); ++i) {
    const std::string url = "data:" + image_mime_type(images[i], i) + ";base64," + base64_encode(images[i]);
    content.push_back({{"type", "image_url"}, {"image_url", {{"url", url}}}});
  }
  const json body = {{"model", o.model},
                     {"messages", json::array({{{"role", "user"}, {"content", std::move(content)}}})},
                     {"max_tokens", o.max_tokens},
                     {"temperature", o.temperature},
                     {"stream", o.stream}};
  // A prompt with broken UTF-8 is sent with U+FFFD rather than refused.
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

// What one try gave: the text, or an error and whether another try may help.
struct Attempt {
  bool ok = false;
  std::string text;
  std::string error;
  bool retryable = false;
};

Attempt status_failure(const std::string& url, const HttpResponse& r) {
  const std::string msg = server_message(r.body);
  Attempt a;
  a.error = url + " answered HTTP " + std::to_string(r.status) + (msg.empty() ? "" : ": " + msg);
  a.retryable = r.status == 429 || r.status >= 500;  // busy or broken now; other 4xx will not change
  return a;
}

// The text of a non-streamed answer.
std::string answer_text(const std::string& url, const std::string& body) {
  const json j = parse_or_discard(body);
  if (j.is_discarded()) throw Error(url + " answered with no JSON: " + one_line(body, 120));
  if (j.is_object() && j.contains("error")) throw Error(url + " answered with an error: " + server_message(body));
  std::string text;
  const json* content = nullptr;
  if (j.is_object() && j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) {
    const json& choice = j["choices"][0];
    if (choice.is_object() && choice.contains("message") && choice["message"].is_object() &&
        choice["message"].contains("content"))
      content = &choice["message"]["content"];
  }
  if (content == nullptr || !content_text(*content, text))
    throw Error(url + " answered without choices[0].message.content: " + one_line(body, 120));
  return text;
}

Attempt try_plain(const ChatOptions& o, const std::string& url, const std::string& body, const HttpHeaders& headers,
                  const std::function<bool(const std::string&)>& on_delta) {
  const HttpResponse r = post_json(url, body, headers, o.timeout_s);
  if (r.status / 100 != 2) return status_failure(url, r);
  Attempt a;
  a.text = answer_text(url, r.body);
  a.ok = true;
  if (on_delta) on_delta(a.text);
  return a;
}

Attempt try_stream(const ChatOptions& o, const std::string& url, const std::string& body, const HttpHeaders& headers,
                   const std::function<bool(const std::string&)>& on_delta, bool& delivered) {
  Attempt a;
  SseParser sse;
  bool done = false;
  std::string raw;  // the body while it holds no event: a server that ignored "stream": true
  const SseParser::OnEvent on_event = [&](const std::string& data) {
    if (data == "[DONE]") {
      done = true;
      return false;  // stop reading: some servers keep the connection open after it
    }
    const json j = parse_or_discard(data);
    if (j.is_discarded()) throw Error(url + " streamed an event that is not JSON: " + one_line(data, 120));
    if (j.is_object() && j.contains("error")) throw Error(url + " streamed an error: " + server_message(data));
    if (!j.is_object() || !j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) return true;
    const json& choice = j["choices"][0];  // a usage-only event has no choices
    if (!choice.is_object() || !choice.contains("delta") || !choice["delta"].is_object()) return true;
    const json& delta = choice["delta"];
    std::string piece;
    if (!delta.contains("content") || !content_text(delta["content"], piece) || piece.empty()) return true;
    a.text += piece;
    delivered = true;
    return !on_delta || on_delta(piece);
  };
  const std::function<bool(std::string_view)> on_body = [&](std::string_view bytes) {
    if (sse.events() == 0 && raw.size() < (1 << 20)) raw.append(bytes);
    return sse.feed(bytes, on_event);
  };
  const HttpResponse r = post_json_streaming(url, body, headers, o.timeout_s, on_body);
  if (r.status / 100 != 2) return status_failure(url, r);
  a.ok = true;
  if (r.cancelled || done || !sse.finish(on_event)) return a;
  if (sse.events() == 0) {
    a.text = answer_text(url, raw);
    if (on_delta) on_delta(a.text);
  }
  return a;
}

}  // namespace

std::string image_mime_type(const std::string& bytes, size_t index) {
  if (bytes.size() >= 8 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n", 8) == 0) return "image/png";
  if (bytes.size() >= 3 && bytes.compare(0, 3, "\xFF\xD8\xFF", 3) == 0) return "image/jpeg";
  throw Error("image " + std::to_string(index) + " is neither PNG nor JPEG (" + std::to_string(bytes.size()) +
              " bytes)");
}

std::string chat_caption(const ChatOptions& o, const std::string& prompt, const std::vector<std::string>& images,
                         const std::function<bool(const std::string& delta)>& on_delta) {
  if (o.endpoint.empty()) throw Error("no chat endpoint given (--endpoint http://127.0.0.1:PORT/v1)");
  if (o.model.empty()) throw Error("no model named for " + o.endpoint + " (--model)");
  if (o.retries < 0 || !(o.retry_backoff_s >= 0) || !(o.timeout_s > 0) || o.max_tokens < 1)
    throw Error("chat options: retries and backoff must be 0 or more, timeout and max_tokens above 0");
  std::string url = o.endpoint;
  while (!url.empty() && url.back() == '/') url.pop_back();
  url += "/chat/completions";
  parse_http_url(url);  // https:// and malformed URLs fail here, before any image is encoded
  const std::string body = request_body(o, prompt, images);
  HttpHeaders headers;
  add_bearer(headers, o.api_key);
  if (o.stream) headers.emplace_back("Accept", "text/event-stream");

  for (int attempt = 0;; ++attempt) {
    Attempt a;
    bool delivered = false;
    {
      ConcurrencyLimit::Slot slot(o.limit.get());  // held for the exchange, not for the backoff
      try {
        a = o.stream ? try_stream(o, url, body, headers, on_delta, delivered)
                     : try_plain(o, url, body, headers, on_delta);
      } catch (const HttpError& e) {
        a.error = e.what();
        a.retryable = e.retryable() && !delivered;
      }
    }
    if (a.ok) return a.text;
    if (!a.retryable || attempt >= o.retries) {
      if (attempt > 0) a.error += "; tried " + std::to_string(attempt + 1) + " times";
      throw Error(a.error);
    }
    const double wait = std::min(60.0, o.retry_backoff_s * double(1 << std::min(attempt, 16)));
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
}

}  // namespace ws::caption
