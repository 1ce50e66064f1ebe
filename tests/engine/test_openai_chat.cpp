// SPDX-License-Identifier: Apache-2.0
// The OpenAI-compatible chat client (caption/openai_chat.h) against a loopback HTTP server written
// here: a plain socket thread on 127.0.0.1, port 0, that records each request and answers as the
// test scripts it. The real protocol, no Python, no host beyond loopback: a JSON answer in each body
// framing, a stream cut into awkward pieces, retries on 429/503, none on 400, a silent server, a
// closed port, cancelling a stream, and the concurrency limit.
#include <QtTest/QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QElapsedTimer>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "caption/base64.h"
#include "caption/http_client.h"
#include "caption/openai_chat.h"
#include "caption/sse_parser.h"
#include "core/error.h"
#include "test_util.h"

using namespace ws;
using nlohmann::json;
using ws::test::error_of;

namespace {

struct Request {
  std::string method, path, body;
  std::map<std::string, std::string> headers;  // names in lower case
};

// The loopback server: one request per connection, each served on a thread of its own by the
// scenario's handler (index: the request's place in the order they came).
class FakeServer {
 public:
  struct Peer {
    int fd;
    const std::atomic<bool>* stop;
    // False once the client is gone.
    bool send(std::string_view data) {
      while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n <= 0) return false;
        data.remove_prefix(static_cast<size_t>(n));
      }
      return true;
    }
    bool send_chunk(std::string_view data, const char* extension = "") {
      char size[32];
      std::snprintf(size, sizeof size, "%zX%s\r\n", data.size(), extension);
      return send(std::string(size) + std::string(data) + "\r\n");
    }
    void pause(double s) {
      for (double t = 0; t < s && !*stop; t += 0.005) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // True when the client closed the connection within `s` seconds.
    bool wait_for_hangup(double s) {
      for (double t = 0; t < s && !*stop; t += 0.02) {
        pollfd p{fd, POLLIN, 0};
        char c;
        if (::poll(&p, 1, 20) > 0 && ::recv(fd, &c, 1, 0) <= 0) return true;
      }
      return false;
    }
  };
  using Handler = std::function<void(Peer&, const Request&, int index)>;

  explicit FakeServer(Handler handler) : handler_(std::move(handler)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_fd_, 16) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      qFatal("the test server cannot listen on 127.0.0.1");
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~FakeServer() {
    stop_ = true;
    acceptor_.join();
    for (auto& w : workers_) w.join();
    ::close(listen_fd_);
  }

  int port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::vector<Request> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }
  int most_active() const { return most_active_; }
  // Handlers bracket their work with these to measure the requests in flight.
  void enter() {
    const int now = ++active_;
    int seen = most_active_;
    while (now > seen && !most_active_.compare_exchange_weak(seen, now)) {
    }
  }
  void leave() { --active_; }

 private:
  void accept_loop() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) workers_.emplace_back([this, fd] { serve(fd); });
    }
  }

  void serve(int fd) {
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // each piece leaves on its own
    Request r;
    if (read_request(fd, r)) {
      int index = 0;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        index = static_cast<int>(requests_.size());
        requests_.push_back(r);
      }
      Peer peer{fd, &stop_};
      handler_(peer, r, index);
    }
    ::close(fd);
  }

  // Reads bytes until `have` holds `want` of them; false when the client stops first.
  bool read_until(int fd, std::string& have, const std::function<bool()>& enough) {
    char buf[65536];
    while (!enough()) {
      if (stop_) return false;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return false;
      have.append(buf, static_cast<size_t>(n));
    }
    return true;
  }

  bool read_request(int fd, Request& r) {
    std::string data;
    if (!read_until(fd, data, [&] { return data.find("\r\n\r\n") != std::string::npos; })) return false;
    const size_t head_end = data.find("\r\n\r\n");
    std::istringstream head(data.substr(0, head_end));
    std::string line;
    std::getline(head, line);
    std::istringstream first(line);
    first >> r.method >> r.path;
    while (std::getline(head, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const size_t colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      r.headers[name] = line.substr(colon + 2);
    }
    const size_t length = r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
    if (!read_until(fd, data, [&] { return data.size() >= head_end + 4 + length; })) return false;
    r.body = data.substr(head_end + 4, length);
    return true;
  }

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> active_{0}, most_active_{0};
  std::thread acceptor_;
  std::vector<std::thread> workers_;  // only the acceptor adds, and it is joined first
  mutable std::mutex mutex_;
  std::vector<Request> requests_;
};

std::string reason(int status) { return status == 200 ? "OK" : status == 400 ? "Bad Request" : "Busy"; }

std::string json_response(int status, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) + " " + reason(status) +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

std::string chat_answer(const std::string& text) {
  return json{
      {"id", "chatcmpl-1"},
      {"object", "chat.completion"},
      {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", "stop"}}}}}
      .dump();
}

std::string delta_event(const json& content) {
  return "data: " + json{{"choices", {{{"index", 0}, {"delta", {{"content", content}}}}}}}.dump() + "\n\n";
}

caption::ChatOptions options_for(const FakeServer& server) {
  caption::ChatOptions o;
  o.endpoint = server.endpoint();
  o.model = "local-vlm";
  o.retry_backoff_s = 0.01;
  o.timeout_s = 5;
  return o;
}

// A PNG and a JPEG as far as their magic bytes go, with every byte value after it.
std::string fake_png() {
  std::string s("\x89PNG\r\n\x1a\n", 8);
  for (int i = 0; i < 256; ++i) s += static_cast<char>(i);
  return s;
}
std::string fake_jpeg() {
  std::string s("\xFF\xD8\xFF\xE0", 4);
  for (int i = 255; i >= 0; --i) s += static_cast<char>(i);
  return s + "x";
}

// The port of a socket bound and closed again: nothing listens there.
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace

class TestOpenAiChat : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void base64RoundTrips() {
    for (const std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar"})
      QCOMPARE(caption::base64_decode(caption::base64_encode(s)), s);
    QCOMPARE(caption::base64_encode("foobar"), std::string("Zm9vYmFy"));
    QCOMPARE(caption::base64_encode(fake_png()).size(), size_t{4 * ((264 + 2) / 3)});
    QCOMPARE(caption::base64_decode(caption::base64_encode(fake_jpeg())), fake_jpeg());
    for (const char* bad : {"Zg=", "Zm9!", "Zg=a", "Z==="})
      QVERIFY(!error_of([&] { caption::base64_decode(bad); }).isEmpty());
  }

  // The request as the server sees it: path, key, model, options, and both images intact.
  void plainAnswer() {
    FakeServer server([](FakeServer::Peer& peer, const Request&, int) {
      peer.send(json_response(200, chat_answer("A cat sits on a mat.")));
    });
    caption::ChatOptions o = options_for(server);
    o.endpoint += "/";  // a trailing slash is not doubled
    o.api_key = "sk-local";
    o.max_tokens = 77;
    o.temperature = 0.25;
    std::vector<std::string> deltas;
    const std::string text =
        caption::chat_caption(o, "Describe the clip.", {fake_png(), fake_jpeg()}, [&](const std::string& d) {
          deltas.push_back(d);
          return true;
        });
    QCOMPARE(text, std::string("A cat sits on a mat."));
    QCOMPARE(deltas, std::vector<std::string>{text});  // unstreamed: the whole text once

    const auto requests = server.requests();
    QCOMPARE(requests.size(), size_t{1});
    const Request& r = requests[0];
    QCOMPARE(r.method, std::string("POST"));
    QCOMPARE(r.path, std::string("/v1/chat/completions"));
    QCOMPARE(r.headers.at("authorization"), std::string("Bearer sk-local"));
    QCOMPARE(r.headers.at("content-type"), std::string("application/json"));
    QCOMPARE(r.headers.at("host"), "127.0.0.1:" + std::to_string(server.port()));
    const json body = json::parse(r.body);
    QCOMPARE(body["model"].get<std::string>(), std::string("local-vlm"));
    QCOMPARE(body["max_tokens"].get<int>(), 77);
    QCOMPARE(body["temperature"].get<double>(), 0.25);
    QCOMPARE(body["stream"].get<bool>(), false);
    QCOMPARE(body["messages"].size(), size_t{1});
    const json& message = body["messages"][0];
    QCOMPARE(message["role"].get<std::string>(), std::string("user"));
    const json& content = message["content"];
    QCOMPARE(content.size(), size_t{3});
    QCOMPARE(content[0]["type"].get<std::string>(), std::string("text"));
    QCOMPARE(content[0]["text"].get<std::string>(), std::string("Describe the clip."));
    const std::vector<std::pair<std::string, std::string>> images = {{"data:image/png;base64,", fake_png()},
                                                                     {"data:image/jpeg;base64,", fake_jpeg()}};
    for (size_t i = 0; i < images.size(); ++i) {
      const json& part = content[i + 1];
      QCOMPARE(part["type"].get<std::string>(), std::string("image_url"));
      const std::string url = part["image_url"]["url"].get<std::string>();
      const std::string& prefix = images[i].first;
      QVERIFY2(url.compare(0, prefix.size(), prefix) == 0, url.substr(0, 40).c_str());
      QCOMPARE(caption::base64_decode(url.substr(prefix.size())), images[i].second);
    }
  }

  // The same answer framed by Content-Length, chunks, and the end of the connection.
  void bodyFramings() {
    const std::string answer = chat_answer("framed");
    FakeServer server([&](FakeServer::Peer& peer, const Request&, int index) {
      const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n";
      if (index == 0) {
        peer.send(json_response(200, answer));
      } else if (index == 1) {
        peer.send(head + "Transfer-Encoding: chunked\r\n\r\n");
        peer.send_chunk(answer.substr(0, 7), ";name=value");
        peer.send_chunk(answer.substr(7));
        peer.send("0\r\nX-Trailer: 1\r\n\r\n");
      } else {
        peer.send(head + "\r\n");
        peer.send(answer.substr(0, 10));
        peer.pause(0.02);
        peer.send(answer.substr(10));
      }
    });
    for (int i = 0; i < 3; ++i) QCOMPARE(caption::chat_caption(options_for(server), "p", {}), std::string("framed"));
    QCOMPARE(server.requests().size(), size_t{3});
  }

  // A stream cut at awkward places (inside "data:", inside the JSON, inside a UTF-8 character, between
  // CR and LF), with comments, blank lines, a role-only and a usage-only event; chunked, then not.
  void streamedAnswer() {
    const std::string sse =
        ": keep-alive\r\n\r\n" +
        std::string("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n") +
        delta_event("A red ") + ": comment between events\n" + "event: message\r\n" +
        "data: " + json{{"choices", {{{"delta", {{"content", "fox \xE2\x80\x93 jumps"}}}}}}}.dump() + "\r\n\r\n\n" +
        delta_event(" over\nthe dog") + delta_event(nullptr) +
        "data: {\"choices\":[],\"usage\":{\"completion_tokens\":9}}\n\n" + "data: [DONE]\n\n";
    FakeServer server([&](FakeServer::Peer& peer, const Request&, int index) {
      const bool chunked = index == 0;
      peer.send(std::string("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n") +
                (chunked ? "Transfer-Encoding: chunked\r\n" : "") + "\r\n");
      const size_t cuts[] = {1, 3, 2, 5, 8, 13, 4, 21, 7, 34};
      for (size_t at = 0, k = 0; at < sse.size(); ++k) {
        const std::string piece = sse.substr(at, cuts[k % 10]);
        at += piece.size();
        if (!(chunked ? peer.send_chunk(piece, k % 3 == 0 ? ";x=y" : "") : peer.send(piece))) return;
        peer.pause(0.002);
      }
      if (chunked) peer.send("0\r\n\r\n");
    });
    caption::ChatOptions o = options_for(server);
    o.stream = true;
    for (int i = 0; i < 2; ++i) {
      std::vector<std::string> deltas;
      const std::string text = caption::chat_caption(o, "p", {fake_png()}, [&](const std::string& d) {
        deltas.push_back(d);
        return true;
      });
      QCOMPARE(deltas, (std::vector<std::string>{"A red ", "fox \xE2\x80\x93 jumps", " over\nthe dog"}));
      QCOMPARE(text, std::string("A red fox \xE2\x80\x93 jumps over\nthe dog"));
    }
    const auto requests = server.requests();
    QCOMPARE(requests.size(), size_t{2});
    QCOMPARE(json::parse(requests[0].body)["stream"].get<bool>(), true);
    QCOMPARE(requests[0].headers.at("accept"), std::string("text/event-stream"));
  }

  // An error event in the stream ends the call with the server's message.
  void streamedError() {
    FakeServer server([](FakeServer::Peer& peer, const Request&, int) {
      peer.send("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + delta_event("Half") +
                "data: {\"error\":{\"message\":\"out of memory\"}}\n\n");
    });
    caption::ChatOptions o = options_for(server);
    o.stream = true;
    const QString err = error_of([&] { caption::chat_caption(o, "p", {}); });
    QVERIFY2(err.contains("out of memory"), qPrintable(err));
    QCOMPARE(server.requests().size(), size_t{1});
  }

  // 429 and 503 are retried (with backoff) until the answer comes; the server counts the tries.
  void retriesOnBusyServer() {
    const std::string busy = json{{"error", {{"message", "loading model"}}}}.dump();
    FakeServer server([&](FakeServer::Peer& peer, const Request&, int index) {
      peer.send(index == 0   ? json_response(429, busy)
                : index == 1 ? json_response(503, busy)
                             : json_response(200, chat_answer("third time")));
    });
    caption::ChatOptions o = options_for(server);
    o.retries = 2;
    QCOMPARE(caption::chat_caption(o, "p", {}), std::string("third time"));
    QCOMPARE(server.requests().size(), size_t{3});

    FakeServer always_busy([&](FakeServer::Peer& peer, const Request&, int) { peer.send(json_response(503, busy)); });
    o = options_for(always_busy);
    o.retries = 1;
    const QString err = error_of([&] { caption::chat_caption(o, "p", {}); });
    QVERIFY2(err.contains("HTTP 503: loading model") && err.contains("tried 2 times"), qPrintable(err));
    QCOMPARE(always_busy.requests().size(), size_t{2});
  }

  // A 4xx is the request's fault: no retry, and the server's message in one line.
  void clientErrorIsNotRetried() {
    FakeServer server([](FakeServer::Peer& peer, const Request&, int) {
      peer.send(
          json_response(400, json{{"error", {{"message", "bad model\nuse another"}, {"type", "invalid"}}}}.dump()));
    });
    caption::ChatOptions o = options_for(server);
    o.retries = 3;
    const QString err = error_of([&] { caption::chat_caption(o, "p", {fake_png()}); });
    QVERIFY2(err.contains("HTTP 400: bad model use another"), qPrintable(err));
    QVERIFY(!err.contains('\n'));
    QCOMPARE(server.requests().size(), size_t{1});
  }

  // A server that takes the request and never answers: the timeout, not a hang.
  void silentServerTimesOut() {
    std::atomic<bool> hung_up{false};
    FakeServer server([&](FakeServer::Peer& peer, const Request&, int) { hung_up = peer.wait_for_hangup(20); });
    caption::ChatOptions o = options_for(server);
    o.timeout_s = 0.5;
    o.retries = 0;
    QElapsedTimer clock;
    clock.start();
    const QString err = error_of([&] { caption::chat_caption(o, "p", {}); });
    const qint64 ms = clock.elapsed();
    QVERIFY2(err.contains("/v1/chat/completions did not answer within 0.5 s"), qPrintable(err));
    QVERIFY2(ms >= 450 && ms < 3000, qPrintable(QString::number(ms)));
    QCOMPARE(server.requests().size(), size_t{1});
    QTRY_VERIFY_WITH_TIMEOUT(hung_up, 5000);  // the client closed its end
  }

  void closedPortSaysNoServer() {
    const int port = closed_port();
    caption::ChatOptions o;
    o.endpoint = "http://127.0.0.1:" + std::to_string(port) + "/v1";
    o.model = "m";
    o.retries = 0;
    QCOMPARE(error_of([&] { caption::chat_caption(o, "p", {}); }),
             QString("no server at http://127.0.0.1:%1 (is it running?)").arg(port));
    o.retries = 1;
    o.retry_backoff_s = 0.01;
    QVERIFY(error_of([&] { caption::chat_caption(o, "p", {}); }).endsWith("(is it running?); tried 2 times"));
  }

  // on_delta returning false closes the connection; the server sees the hang-up.
  void cancelStopsReading() {
    std::atomic<bool> hung_up{false};
    std::atomic<int> sent{0};
    FakeServer server([&](FakeServer::Peer& peer, const Request&, int) {
      peer.send("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
      for (int i = 0; i < 500; ++i) {
        if (!peer.send_chunk(delta_event("word" + std::to_string(i) + " "))) {
          hung_up = true;
          return;
        }
        ++sent;
        peer.pause(0.01);
      }
    });
    caption::ChatOptions o = options_for(server);
    o.stream = true;
    int calls = 0;
    QElapsedTimer clock;
    clock.start();
    const std::string text = caption::chat_caption(o, "p", {}, [&](const std::string&) { return ++calls < 2; });
    QVERIFY2(clock.elapsed() < 2000, qPrintable(QString::number(clock.elapsed())));
    QCOMPARE(calls, 2);
    QCOMPARE(text, std::string("word0 word1 "));
    QTRY_VERIFY_WITH_TIMEOUT(hung_up, 5000);
    QVERIFY(sent < 400);
    QCOMPARE(server.requests().size(), size_t{1});  // a cancel is not retried
  }

  // Six threads sharing a limit of two: never more than two requests at the server at once.
  void concurrencyLimit() {
    FakeServer* self = nullptr;
    FakeServer server([&](FakeServer::Peer& peer, const Request&, int) {
      self->enter();
      peer.pause(0.1);
      self->leave();
      peer.send(json_response(200, chat_answer("ok")));
    });
    self = &server;
    caption::ChatOptions o = options_for(server);
    o.limit = std::make_shared<caption::ConcurrencyLimit>(2);
    std::atomic<int> ok{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 6; ++i)
      threads.emplace_back([&] {
        if (caption::chat_caption(o, "p", {}) == "ok") ++ok;
      });
    for (auto& t : threads) t.join();
    QCOMPARE(ok.load(), 6);
    QCOMPARE(server.requests().size(), size_t{6});
    QCOMPARE(server.most_active(), 2);
  }

  // Refused before any connection: https (no TLS here), a non-image, missing endpoint or model.
  void badInputIsRefused() {
    caption::ChatOptions o;
    o.endpoint = "https://api.example.com/v1";
    o.model = "m";
    const QString tls = error_of([&] { caption::chat_caption(o, "p", {}); });
    QVERIFY2(tls.contains("https:// is not supported") && tls.contains("http://"), qPrintable(tls));
    o.endpoint = "http://127.0.0.1:9/v1";
    QCOMPARE(error_of([&] { caption::chat_caption(o, "p", {"GIF89a..."}); }),
             QString("image 0 is neither PNG nor JPEG (9 bytes)"));
    o.model.clear();
    QVERIFY(error_of([&] { caption::chat_caption(o, "p", {}); }).contains("--model"));
    QVERIFY(error_of([] { caption::parse_http_url("http://host:99999/v1"); }).contains("bad port"));
    QVERIFY(error_of([] { caption::parse_http_url("ftp://host/v1"); }).contains("not an http:// URL"));
  }

  // The event parser alone, fed a byte at a time.
  void sseParserSplitsAnywhere() {
    const std::string text = ": c\r\ndata: a\r\n\r\ndata:b\ndata: c\n\nid: 3\nretry: 5\n\ndata: [DONE]";
    caption::SseParser parser;
    std::vector<std::string> events;
    const auto on_event = [&](const std::string& d) {
      events.push_back(d);
      return true;
    };
    for (char c : text) QVERIFY(parser.feed(std::string_view(&c, 1), on_event));
    QVERIFY(parser.finish(on_event));
    QCOMPARE(events, (std::vector<std::string>{"a", "b\nc", "[DONE]"}));
  }
};

QTEST_GUILESS_MAIN(TestOpenAiChat)
#include "test_openai_chat.moc"
