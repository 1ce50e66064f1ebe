// SPDX-License-Identifier: Apache-2.0
// A small HTTP/1.1 client for local model servers (vLLM, llama.cpp's server, Ollama, LM Studio):
// one POST per connection (`Connection: close`) over a plain TCP socket. No TLS: an https:// URL is
// refused with a one-line error; put such a server behind a local http:// endpoint or a proxy.
// Bodies framed by Content-Length, chunked transfer encoding, or the end of the connection.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace ws::caption {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// http://host[:port][/path]; IPv6 hosts in brackets. ws::Error for any other scheme (https:// included).
struct HttpUrl {
  std::string host;  // without brackets
  int port = 80;
  std::string path = "/";      // with the query, if any
  std::string origin() const;  // "http://host:port", as errors name the server
};
HttpUrl parse_http_url(const std::string& url);

// A failure of the exchange itself, not an HTTP status: the caller may retry kConnect and kTimeout
// (the server down, reset or slow); kProtocol (an answer that is not HTTP) is not worth a retry.
class HttpError : public Error {
 public:
  enum class Kind { kConnect, kTimeout, kProtocol };
  HttpError(Kind kind, const std::string& msg) : Error(msg), kind_(kind) {}
  Kind kind() const { return kind_; }
  bool retryable() const { return kind_ != Kind::kProtocol; }

 private:
  Kind kind_;
};

struct HttpResponse {
  int status = 0;
  HttpHeaders headers;
  std::string body;        // empty when a streaming call handed the body to its callback
  bool cancelled = false;  // the callback asked to stop; the connection was closed
  // The first header of that name (case-insensitive); empty when absent.
  std::string header(std::string_view name) const;
};

// POST `body` as application/json. `timeout_s` bounds each wait: connecting, every write, and every
// read (a silent server fails after timeout_s; a server that keeps sending does not). Throws
// HttpError for a server that is down, silent or not speaking HTTP; any status is returned.
HttpResponse post_json(const std::string& url, const std::string& body, const HttpHeaders& headers, double timeout_s);

// The same, with a 2xx body handed to `on_body` piece by piece as it arrives (server-sent events);
// `on_body` returning false stops reading. Other statuses' bodies are collected in `body` (the error
// message) and `on_body` is not called.
HttpResponse post_json_streaming(const std::string& url, const std::string& body, const HttpHeaders& headers,
                                 double timeout_s, const std::function<bool(std::string_view)>& on_body);

// "Authorization: Bearer KEY" (the OpenAI-style API key); nothing when `key` is empty.
void add_bearer(HttpHeaders& headers, const std::string& key);

// "0.5", "120": seconds as the errors print them.
std::string format_seconds(double s);

}  // namespace ws::caption
