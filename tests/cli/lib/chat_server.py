#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in OpenAI-compatible chat server for tests/cli/caption.sh (Python's standard library
only, loopback only). Answers POST /v1/chat/completions with a caption that names the request's
number, how many images it carried and the first image's size, streamed as server-sent events when
asked; logs every request (model, prompt, image count and types) as a JSON line.
  chat_server.py PORT_FILE LOG_FILE        DELAY_FILE beside PORT_FILE (seconds) slows answers"""
import base64
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port_file, log_file = sys.argv[1], sys.argv[2]
delay_file = os.path.join(os.path.dirname(port_file), "delay")
lock = threading.Lock()
count = [0]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/v1/chat/completions":
            return self.reply(404, {"error": {"message": "no route " + self.path}})
        content = body["messages"][0]["content"]
        prompt = "".join(c["text"] for c in content if c["type"] == "text")
        images = [c["image_url"]["url"] for c in content if c["type"] == "image_url"]
        first = base64.b64decode(images[0].split(",", 1)[1]) if images else b""
        with lock:
            count[0] += 1
            n = count[0]
            with open(log_file, "a") as f:
                f.write(json.dumps({"n": n, "model": body["model"], "prompt": prompt, "images": len(images),
                                    "jpeg": all(u.startswith("data:image/jpeg;base64,") for u in images)
                                    and first[:2] == b"\xff\xd8", "stream": body.get("stream", False),
                                    "max_tokens": body.get("max_tokens")}) + "\n")
        if body["model"] != "tiny-vl":
            return self.reply(404, {"error": {"message": "model '%s' not found" % body["model"]}})
        try:
            time.sleep(float(open(delay_file).read()))
        except (OSError, ValueError):
            pass
        text = "Caption %d of %d frames, %d bytes first." % (n, len(images), len(first))
        if not body.get("stream"):
            return self.reply(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        words = text.split(" ")
        for i, w in enumerate(words):
            piece = w + (" " if i + 1 < len(words) else "")
            event = "data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": piece}}]}) + "\n\n"
            self.chunk(event.encode())
        self.chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def reply(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
