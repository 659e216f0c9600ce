"""How many requests a second the LLM judge's client sends, by concurrency, against a local scripted server.

    .venv/bin/python -m bench.judge_throughput [--n 240] [--latency 0.05] [--rate-limit 600]

``scoring.judge.judge_all`` asks a ``tests/openai_server.ScriptedServer`` on 127.0.0.1 that
waits ``--latency`` seconds before each well-formed answer (a stand-in for the model's time), at
concurrency 1, 4 and 16, with no rate limit; then once at 16 under ``--rate-limit`` requests a
minute, to show the limiter holding. Each solution has three steps and every answer parses, so
requests = solutions. No database: this measures the client, its thread pool and the parsing.
With a real endpoint the model's own throughput is the limit.
"""
import argparse
import time


def _measure(server, n, concurrency, rate_limit=0):
    from scoring import judge

    config = judge.Config(base_url=server.url, model="bench", api_key="bench-key", concurrency=concurrency,
                          rate_limit=rate_limit, budget=n, max_attempts=1, timeout_s=30)
    items = [(i, f"Bench problem {i}: find $x$.", ["$x + 1 = 3$", "$x = 2$", "So $x = 2$."]) for i in range(n)]
    started = time.perf_counter()
    verdicts = [verdict for _, verdict in judge.judge_all(config, items)]
    seconds = time.perf_counter() - started
    assert all(verdict.status == judge.OK for verdict in verdicts), "every scripted answer parses"
    return sum(verdict.requests for verdict in verdicts), seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=240, help="solutions (requests) per concurrency level")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the server waits before each answer")
    parser.add_argument("--rate-limit", type=int, default=600, help="requests a minute for the limited line")
    args = parser.parse_args(argv)

    from tests.openai_server import ScriptedServer

    print(f"LLM judge client, {args.n} requests per line, {args.latency * 1000:.0f} ms per answer on 127.0.0.1")
    with ScriptedServer(latency=args.latency) as server:
        _measure(server, 4, 4)  # warm: the client's imports, the first connections
        for concurrency in (1, 4, 16):
            requests, seconds = _measure(server, args.n, concurrency)
            print(f"concurrency {concurrency:>2}, no rate limit     {requests / seconds:7.1f} requests/s   "
                  f"({requests} in {seconds:.2f} s; ideal {concurrency / args.latency:.0f}/s)")
        n = min(args.n, max(args.rate_limit // 12, 10))  # about 5 s under the limit
        requests, seconds = _measure(server, n, 16, rate_limit=args.rate_limit)
        print(f"concurrency 16, {args.rate_limit}/min limit    {requests / seconds:7.1f} requests/s   "
              f"({requests} in {seconds:.2f} s; the limit is {args.rate_limit / 60:.1f}/s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
