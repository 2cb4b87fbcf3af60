"""A loopback OpenAI-compatible server (chat and text completions, streaming) for
regenerating the AIPerf and SGLang fixtures: it streams a bounded number of small
chunks with a short, varying delay, and fails every FAIL_EVERY-th request with
HTTP 500, so the exports hold real error records. GET /server_info and POST
/flush_cache answer as an SGLang server's would. It stops by itself after
MAX_SECONDS.

Usage: python mock_server.py PORT
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAIL_EVERY = 9
MAX_SECONDS = 300
_count = 0
_lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path.startswith("/server_info"):
            body = json.dumps({"version": "mock", "model_path": "mock-model"}).encode()
        else:
            body = json.dumps({"object": "list", "data": [{"id": "mock-model", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        global _count
        n = int(self.headers.get("Content-Length", "0"))
        req = json.loads(self.rfile.read(n) or b"{}")
        if self.path.startswith("/flush_cache"):
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        chat = self.path.startswith("/v1/chat")
        with _lock:
            _count += 1
            k = _count
        if k % FAIL_EVERY == 0:
            body = json.dumps({"error": {"message": "mock overload for request %d" % k, "type": "server_error"}}).encode()
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        tokens = max(2, min(int(req.get("max_completion_tokens") or req.get("max_tokens") or 16), 64))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        created = int(time.time())
        time.sleep(0.004 + 0.001 * (k % 5))  # prefill
        for i in range(tokens):
            if chat:
                chunk = {"id": "cmpl-%d" % k, "object": "chat.completion.chunk", "created": created, "model": "mock-model",
                         "choices": [{"index": 0, "delta": {"content": " tok%d" % i}, "finish_reason": None}]}
            else:
                chunk = {"id": "cmpl-%d" % k, "object": "text_completion", "created": created, "model": "mock-model",
                         "choices": [{"index": 0, "text": " tok%d" % i, "finish_reason": None}]}
            self._chunk(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            time.sleep(0.001 + 0.0005 * ((i * k) % 7))
        usage = {"id": "cmpl-%d" % k, "object": "chat.completion.chunk", "created": created, "model": "mock-model",
                 "choices": [{"index": 0, "delta": {}, "text": "", "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 32, "completion_tokens": tokens, "total_tokens": 32 + tokens}}
        self._chunk(b"data: " + json.dumps(usage).encode() + b"\n\n")
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _chunk(self, b):
        self.wfile.write(b"%x\r\n" % len(b) + b + b"\r\n")
        self.wfile.flush()


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    threading.Timer(MAX_SECONDS, srv.shutdown).start()
    srv.serve_forever()


if __name__ == "__main__":
    main()
