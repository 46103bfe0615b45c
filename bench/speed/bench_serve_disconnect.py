"""Does a local server keep generating for a client that went away? (issue 29)

Starts the packaged SmolLM2 with `s3kg llm serve`'s server (or uses the server of ``--base-url`` and
``--model``), then for streaming and non-streaming requests in turn: sends a long request
(``max_tokens`` 300), closes the connection after ``--abandon-after`` seconds, and at once sends
a short request (``max_tokens`` 8) and times it. A server that cancels on disconnect
answers the short request in about its own time; one that keeps generating for the abandoned
request answers it only after finishing that one.

    python -m bench.speed.bench_serve_disconnect [--abandon-after 2] [--base-url URL --model NAME]

Prints one line per mode: the short request's latency, the same request's latency on an idle
server, and the verdict.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

from s3kg_core.llm.serve import local_server


def _post(base_url: str, body: dict, *, abandon_after: float | None = None) -> float:
    """Send ``body``; read the whole reply (or drop the connection after ``abandon_after`` s)."""
    parts = urlsplit(base_url)
    con = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)
    started = time.perf_counter()
    con.request(
        "POST",
        f"{parts.path}/chat/completions",
        json.dumps(body),
        {"Content-Type": "application/json"},
    )
    if abandon_after is not None:
        con.sock.settimeout(abandon_after)
        try:
            resp = con.getresponse()
            while resp.read(1):
                if time.perf_counter() - started > abandon_after:
                    break
        except TimeoutError:
            pass
        con.close()
        return time.perf_counter() - started
    resp = con.getresponse()
    resp.read()
    con.close()
    return time.perf_counter() - started


@contextlib.contextmanager
def _server(base_url: str | None, model: str | None) -> Iterator[tuple[str, str]]:
    if base_url and model:
        yield base_url, model
        return
    with local_server("smollm2") as server:
        yield server.base_url, server.model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--abandon-after", type=float, default=2.0)
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--model", default=None)
    args = parser.parse_args()
    with _server(args.base_url, args.model) as (base_url, model):
        long = {
            "model": model,
            "messages": [{"role": "user", "content": "Write a long story about a lighthouse."}],
            "max_tokens": 300,
            "temperature": 0,
        }
        short = {
            "model": model,
            "messages": [{"role": "user", "content": "Say hello."}],
            "max_tokens": 8,
            "temperature": 0,
        }
        _post(base_url, short)  # warm up
        idle = min(_post(base_url, short) for _ in range(2))
        whole = _post(base_url, long)
        print(f"idle short request {idle:.2f} s; long request alone {whole:.2f} s")
        for stream in (False, True):
            _post(base_url, {**long, "stream": stream}, abandon_after=args.abandon_after)
            after = _post(base_url, {**short, "stream": stream})
            kept = after > idle + 0.5 * (whole - args.abandon_after)
            verdict = "keeps generating for the abandoned request" if kept else "cancels it"
            print(
                f"stream={stream}: short request after abandoning a long one "
                f"{after:.2f} s (idle {idle:.2f} s): {verdict}"
            )
            time.sleep(whole)  # let a server that kept generating finish before the next mode


if __name__ == "__main__":
    main()
