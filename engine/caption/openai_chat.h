// SPDX-License-Identifier: Apache-2.0
// The "local server" captioning backend: one chat completion with images from any OpenAI-compatible
// endpoint (vLLM, llama.cpp's server, Ollama, LM Studio), streamed or not, with a timeout, retries
// and an optional cap on requests in flight (docs/design/captioning.md).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "caption/concurrency_limit.h"

namespace ws::caption {

struct ChatOptions {
  std::string endpoint;  // the API root, ".../v1": requests go to {endpoint}/chat/completions
  std::string model;
  std::string api_key;         // sent as "Authorization: Bearer KEY" when set
  double timeout_s = 120;      // the longest silence: connecting, sending, or between bytes of the answer
  int retries = 2;             // further tries after a connection error, a timeout, HTTP 429 or 5xx
  double retry_backoff_s = 1;  // the wait before retry k is retry_backoff_s * 2^k (at most 60 s)
  int max_tokens = 512;
  double temperature = 0;
  bool stream = false;
  std::shared_ptr<ConcurrencyLimit> limit;  // shared by the threads that caption together; none: no cap
};

// Asks `options.model` to answer `prompt` about `images` (the raw PNG or JPEG bytes of each; the type
// is read from the magic bytes) and returns the answer's text. Streaming hands each piece of text to
// `on_delta` as it arrives; without streaming `on_delta` gets the whole text once. `on_delta` returning
// false cancels: the connection is closed and the text so far is returned. A stream that already
// delivered text is not retried (the caller would see it twice). ws::Error on failure, in one line,
// with the server's own message when it sent one.
std::string chat_caption(const ChatOptions& options, const std::string& prompt,
                         const std::vector<std::string>& png_or_jpeg_images,
                         const std::function<bool(const std::string& delta)>& on_delta = {});

// "image/png" or "image/jpeg" from the first bytes; ws::Error naming image `index` for anything else.
std::string image_mime_type(const std::string& bytes, size_t index);

}  // namespace ws::caption
