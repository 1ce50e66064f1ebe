// SPDX-License-Identifier: Apache-2.0
#include "caption/http_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <sstream>

namespace ws::caption {
namespace {

constexpr size_t kMaxHead = 64 << 10;          // status line and headers
constexpr size_t kMaxBody = size_t{64} << 20;  // a collected (non-streamed) body

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool all_digits(std::string_view s, bool hex) {
  return std::all_of(s.begin(), s.end(), [hex](char ch) {
    const auto u = static_cast<unsigned char>(ch);
    return hex ? std::isxdigit(u) != 0 : std::isdigit(u) != 0;
  });
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

// Closes the socket however the exchange ends.
struct Socket {
  int fd = -1;
  Socket() = default;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

// Waits for `events`; false when timeout_s passes first (EINTR restarts with the time left).
bool wait_for(int fd, short events, double timeout_s) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::ceil(left * 1000)));
    if (rc > 0) return true;
    if (rc == 0) continue;            // rounding: the loop re-checks the deadline
    if (errno != EINTR) return true;  // let the following call report the error
  }
}

// One established connection to `url`, with the bytes received but not yet consumed.
class Connection {
 public:
  Connection(const HttpUrl& url, const std::string& full_url, double timeout_s)
      : url_(url), full_url_(full_url), timeout_s_(timeout_s) {
    connect_any();
  }

  void send_all(std::string_view data) {
    while (!data.empty()) {
      if (!wait_for(sock_.fd, POLLOUT, timeout_s_)) throw timeout();
      const ssize_t n = ::send(sock_.fd, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
        throw HttpError(
            HttpError::Kind::kConnect,
            url_.origin() + " closed the connection while the request was sent (" + std::strerror(errno) + ")");
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
  }

  // Receives more bytes; false at the end of the stream.
  bool fill() {
    // Drop what was consumed, so a long stream does not grow the buffer.
    if (pos_ == buf_.size() || pos_ > (1 << 16)) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
    char tmp[1 << 16];
    for (;;) {
      if (!wait_for(sock_.fd, POLLIN, timeout_s_)) throw timeout();
      const ssize_t n = ::recv(sock_.fd, tmp, sizeof tmp, 0);
      if (n > 0) {
        buf_.append(tmp, static_cast<size_t>(n));
        return true;
      }
      if (n == 0) return false;
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      throw HttpError(HttpError::Kind::kConnect,
                      url_.origin() + " dropped the connection (" + std::strerror(errno) + ")");
    }
  }

  size_t available() const { return buf_.size() - pos_; }
  std::string_view peek() const { return std::string_view(buf_).substr(pos_); }
  void consume(size_t n) { pos_ += n; }

  // A line ending in LF (its CR dropped); false at the end of the stream before any byte of it.
  bool read_line(std::string& line, size_t max) {
    for (;;) {
      const size_t nl = buf_.find('\n', pos_);
      if (nl != std::string::npos) {
        line.assign(buf_, pos_, nl - pos_);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        pos_ = nl + 1;
        return true;
      }
      if (available() > max) throw protocol("a header or chunk line longer than " + std::to_string(max) + " bytes");
      if (!fill()) {
        if (available() == 0) return false;
        throw cut_short();
      }
    }
  }

  HttpError timeout() const {
    return HttpError(HttpError::Kind::kTimeout,
                     full_url_ + " did not answer within " + format_seconds(timeout_s_) + " s");
  }
  HttpError protocol(const std::string& what) const {
    return HttpError(HttpError::Kind::kProtocol, url_.origin() + " did not answer in HTTP/1.1: " + what);
  }
  HttpError no_answer() const {
    return HttpError(HttpError::Kind::kConnect, url_.origin() + " closed the connection without answering");
  }
  HttpError cut_short() const {
    return HttpError(HttpError::Kind::kConnect, url_.origin() + " closed the connection in the middle of its answer");
  }

 private:
  void connect_any() {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(url_.host.c_str(), std::to_string(url_.port).c_str(), &hints, &found);
    if (rc != 0) {
      // EAI_AGAIN is a resolver that may answer next time; the others will not.
      throw HttpError(rc == EAI_AGAIN ? HttpError::Kind::kConnect : HttpError::Kind::kProtocol,
                      "cannot resolve the host of " + url_.origin() + " (" + ::gai_strerror(rc) + ")");
    }
    bool refused = false, timed_out = false;
    std::string other;
    for (addrinfo* a = found; a != nullptr && sock_.fd < 0; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) {
        other = std::strerror(errno);
        continue;
      }
      int err = 0;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
        err = errno;
        if (err == EINPROGRESS || err == EINTR) {
          if (!wait_for(fd, POLLOUT, timeout_s_)) {
            err = ETIMEDOUT;
          } else {
            socklen_t len = sizeof err;
            if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
          }
        }
      }
      if (err == 0) {
        sock_.fd = fd;
        break;
      }
      ::close(fd);
      if (err == ECONNREFUSED) refused = true;
      else if (err == ETIMEDOUT) timed_out = true;
      else other = std::strerror(err);
    }
    ::freeaddrinfo(found);
    if (sock_.fd >= 0) return;
    if (refused) throw HttpError(HttpError::Kind::kConnect, "no server at " + url_.origin() + " (is it running?)");
    if (timed_out) throw timeout();
    throw HttpError(HttpError::Kind::kConnect, "cannot connect to " + url_.origin() + " (" + other + ")");
  }

  const HttpUrl& url_;
  const std::string& full_url_;
  double timeout_s_;
  Socket sock_;
  std::string buf_;
  size_t pos_ = 0;
};

// Status line and headers; 1xx interim answers are skipped.
void read_head(Connection& c, HttpResponse& r) {
  for (bool first = true;; first = false) {
    std::string line;
    if (!c.read_line(line, kMaxHead)) throw first ? c.no_answer() : c.cut_short();
    // "HTTP/1.1 200 OK": the version, a space, three digits.
    if (line.size() < 12 || line.compare(0, 5, "HTTP/") != 0 || line[8] != ' ' ||
        !all_digits(std::string_view(line).substr(9, 3), false))
      throw c.protocol("status line '" + line.substr(0, 60) + "'");
    r.status = std::stoi(line.substr(9, 3));
    r.headers.clear();
    size_t head_bytes = line.size();
    for (;;) {
      if (!c.read_line(line, kMaxHead)) throw c.cut_short();
      if (line.empty()) break;
      head_bytes += line.size();
      if (head_bytes > kMaxHead) throw c.protocol("headers over " + std::to_string(kMaxHead) + " bytes");
      const size_t colon = line.find(':');
      if (colon == std::string::npos || colon == 0) throw c.protocol("header line '" + line.substr(0, 60) + "'");
      r.headers.emplace_back(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
    }
    if (r.status >= 200) return;
  }
}

// Hands exactly `n` body bytes to `sink` as they arrive; false when the sink stopped.
bool copy_exact(Connection& c, uint64_t n, const std::function<bool(std::string_view)>& sink) {
  while (n > 0) {
    if (c.available() == 0 && !c.fill()) throw c.cut_short();
    const size_t take = static_cast<size_t>(std::min<uint64_t>(n, c.available()));
    const std::string_view piece = c.peek().substr(0, take);
    c.consume(take);
    n -= take;
    if (!sink(piece)) return false;
  }
  return true;
}

bool copy_chunked(Connection& c, const std::function<bool(std::string_view)>& sink) {
  std::string line;
  for (;;) {
    if (!c.read_line(line, 4096)) throw c.cut_short();
    const std::string size_text = trim(line.substr(0, line.find(';')));  // chunk extensions ignored
    if (size_text.empty() || size_text.size() > 15 || !all_digits(size_text, true))
      throw c.protocol("chunk size '" + line.substr(0, 40) + "'");
    const uint64_t size = std::stoull(size_text, nullptr, 16);
    if (size == 0) {
      // Trailers up to the blank line; a server that just closes is forgiven.
      while (c.read_line(line, kMaxHead) && !line.empty()) {
      }
      return true;
    }
    if (!copy_exact(c, size, sink)) return false;
    if (!c.read_line(line, 2) || !line.empty()) throw c.protocol("no line end after a chunk");
  }
}

bool copy_to_close(Connection& c, const std::function<bool(std::string_view)>& sink) {
  for (;;) {
    if (c.available() > 0) {
      const std::string_view piece = c.peek();
      c.consume(piece.size());
      if (!sink(piece)) return false;
    }
    if (!c.fill()) return true;
  }
}

HttpResponse exchange(const std::string& url, const std::string& body, const HttpHeaders& headers, double timeout_s,
                      const std::function<bool(std::string_view)>* on_body) {
  const HttpUrl u = parse_http_url(url);
  if (!(timeout_s > 0)) throw Error("HTTP timeout must be above 0 s (got " + format_seconds(timeout_s) + ")");
  Connection c(u, url, timeout_s);

  const bool v6 = u.host.find(':') != std::string::npos;
  std::string head = "POST " + u.path + " HTTP/1.1\r\nHost: " + (v6 ? "[" + u.host + "]" : u.host);
  if (u.port != 80) head += ":" + std::to_string(u.port);
  head +=
      "\r\nUser-Agent: wanstudio\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n";
  for (const auto& [name, value] : headers) {
    if ((name + value).find_first_of("\r\n") != std::string::npos)
      throw Error("HTTP header '" + name + "' has a line break");
    head += name + ": " + value + "\r\n";
  }
  head += "\r\n";
  HttpResponse r;
  try {
    c.send_all(head);
    c.send_all(body);
  } catch (const HttpError& sending) {
    // A server may answer (413, 400) and close before taking the whole request: read that answer.
    if (sending.kind() != HttpError::Kind::kConnect) throw;
    try {
      read_head(c, r);
    } catch (const HttpError&) {
      throw sending;
    }
  }
  if (r.status == 0) read_head(c, r);
  const bool stream = on_body != nullptr && *on_body && r.status / 100 == 2;
  const std::function<bool(std::string_view)> collect = [&](std::string_view piece) {
    if (r.body.size() + piece.size() > kMaxBody)
      throw c.protocol("an answer over " + std::to_string(kMaxBody >> 20) + " MiB");
    r.body.append(piece);
    return true;
  };
  const auto& sink = stream ? *on_body : collect;

  if (r.status == 204 || r.status == 304) return r;
  bool done = true;
  if (lower(r.header("Transfer-Encoding")).find("chunked") != std::string::npos) {
    done = copy_chunked(c, sink);
  } else if (const std::string length = r.header("Content-Length"); !length.empty()) {
    if (length.size() > 18 || !all_digits(length, false))
      throw c.protocol("Content-Length '" + length.substr(0, 40) + "'");
    done = copy_exact(c, std::stoull(length), sink);
  } else {
    done = copy_to_close(c, sink);
  }
  r.cancelled = !done;
  return r;
}

}  // namespace

std::string HttpUrl::origin() const {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

HttpUrl parse_http_url(const std::string& url) {
  const size_t scheme_end = url.find("://");
  const std::string scheme = lower(url.substr(0, scheme_end == std::string::npos ? 0 : scheme_end));
  if (scheme == "https")
    throw Error("https:// is not supported (this client has no TLS): use a local http:// endpoint or a TLS proxy (" +
                url + ")");
  if (scheme != "http") throw Error("not an http:// URL: '" + url + "'");
  HttpUrl u;
  const size_t start = scheme_end + 3;
  const size_t slash = url.find_first_of("/?#", start);
  const std::string authority = url.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
  if (slash != std::string::npos) u.path = url.substr(slash, url.find('#', slash) - slash);
  if (u.path.empty() || u.path[0] != '/') u.path = "/" + u.path;
  if (authority.find('@') != std::string::npos)
    throw Error("user:password@ is not supported in a URL (use the API key): " + url);

  std::string port_text;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) throw Error("unclosed '[' in the host of " + url);
    u.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') throw Error("bad host in " + url);
      port_text = authority.substr(close + 2);
    }
  } else {
    const size_t colon = authority.find(':');
    u.host = authority.substr(0, colon);
    if (colon != std::string::npos) port_text = authority.substr(colon + 1);
  }
  if (u.host.empty()) throw Error("no host in " + url);
  if (!port_text.empty() || authority.back() == ':') {
    const bool digits = !port_text.empty() && port_text.size() <= 5 && all_digits(port_text, false);
    u.port = digits ? std::stoi(port_text) : 0;
    if (u.port < 1 || u.port > 65535) throw Error("bad port '" + port_text + "' in " + url);
  }
  return u;
}

std::string HttpResponse::header(std::string_view name) const {
  const std::string want = lower(name);
  for (const auto& [n, v] : headers)
    if (lower(n) == want) return v;
  return {};
}

HttpResponse post_json(const std::string& url, const std::string& body, const HttpHeaders& headers, double timeout_s) {
  return exchange(url, body, headers, timeout_s, nullptr);
}

HttpResponse post_json_streaming(const std::string& url, const std::string& body, const HttpHeaders& headers,
                                 double timeout_s, const std::function<bool(std::string_view)>& on_body) {
  return exchange(url, body, headers, timeout_s, &on_body);
}

void add_bearer(HttpHeaders& headers, const std::string& key) {
  if (!key.empty()) headers.emplace_back("Authorization", "Bearer " + key);
}

std::string format_seconds(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

}  // namespace ws::caption
