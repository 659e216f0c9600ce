"""PRM scoring throughput on a GPU: a decoder of about 1.5B parameters in bfloat16, with SDPA.

The backbone is built from a config (Qwen2.5-1.5B's shape: 28 layers, hidden 1536, 12 query
and 2 key/value heads, MLP 8960, vocabulary 151,936) with random weights: speed does not
depend on the weights. The rows are real: PRM800K phase-1 training trajectories (MATH
solutions) tokenised with the offline MiniLM tokenizer plus the step token (their ids are
valid in the larger vocabulary), repeated up to ``--solutions``, and scored by the same
``scoring.prm.scorer.score_encoded`` the workers call (one pass per solution, length batches,
``torch.inference_mode``), with prefix trees off: the rows repeat, and a tree would read each
repeated row once, which is not the work the FLOPs below count.

Prints tokens/s (real tokens, padding not counted), rows/s (a trajectory is one row unless it
is longer than the context), steps/s, the share of padding,
and model FLOPs utilisation: the useful forward FLOPs per second (2 x non-embedding parameters
per token, plus causal attention, 2 x T^2 x hidden per layer and row) over the device's peak
dense bf16 rate (``--peak-tflops``; known for the H100 and H200). Goal (issue #5): MFU >= 40%
on an H100.

    .venv/bin/python bench/gpu_scoring.py [--solutions 4000] [--max-tokens 65536 --max-batch 256]
    .venv/bin/python bench/gpu_scoring.py --device cpu --tiny   # the same code on a tiny config
"""
import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from labeling.data import data_path  # noqa: E402 (after the repository is on the path)

DATA = data_path("prm800k/phase1_train.reconstructed.jsonl.gz")

# Dense bf16 tensor-core peak (no sparsity), TFLOP/s, by a substring of the device name.
PEAK_TFLOPS = {"H100": 989.4, "H200": 989.4}

QWEN25_15B = dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
                  num_key_value_heads=2, vocab_size=151936, max_position_embeddings=32768, tie_word_embeddings=True)
TINY = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            vocab_size=31000, max_position_embeddings=4096, tie_word_embeddings=True)


def build_prm(shape, device, dtype, max_length):
    import torch
    from transformers import Qwen2Config, Qwen2Model

    from scoring.prm.model import default_base_model, load_tokenizer, prm_on

    torch.manual_seed(0)
    config = Qwen2Config(**shape)
    config._attn_implementation = "sdpa"
    backbone = Qwen2Model(config).to(device=device, dtype=dtype)
    return prm_on(backbone, load_tokenizer(default_base_model()), max_length=max_length)


def model_flops(prm, rows):
    """Useful forward FLOPs of scoring ``rows``: weights 2N per token, causal attention 2 T^2 d per layer."""
    config = prm.backbone.config
    embedding = prm.backbone.get_input_embeddings().weight.numel()
    weights = sum(p.numel() for p in prm.parameters()) - embedding
    tokens = sum(len(row) for row in rows)
    attention = sum(2 * len(row) ** 2 * config.hidden_size for row in rows) * config.num_hidden_layers
    return 2 * weights * tokens + attention, weights


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tiny", action="store_true", help="a tiny config instead of the 1.5B one (a smoke run)")
    parser.add_argument("--solutions", type=int, default=4000, help="rows to score, the trajectories' rows repeated (default 4000)")
    parser.add_argument("--max-length", type=int, default=4096, help="context of the PRM (default 4096)")
    parser.add_argument("--max-tokens", type=int, default=None, help="padded tokens per batch (scorer's default)")
    parser.add_argument("--max-batch", type=int, default=None, help="rows per batch (scorer's default)")
    parser.add_argument("--peak-tflops", type=float, default=None, help="the device's dense bf16 peak (default by name)")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes over the solutions (default 3)")
    args = parser.parse_args()

    import torch

    from scoring.prm.data import read_prm800k
    from scoring.prm.inputs import encode_solution
    from scoring.prm.scorer import batching, score_encoded

    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("no CUDA device here: skipped (--device cpu --tiny runs the same code on a tiny config)")
        return 0
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    prm = build_prm(TINY if args.tiny else QWEN25_15B, device, dtype, args.max_length)
    examples = read_prm800k(DATA, alternatives=False)
    # one row per trajectory at this context; a longer one would be several (the sliding window)
    unique = [row for e in examples
              for row in encode_solution(prm.tokenizer, e.problem, e.steps, step_token_id=prm.step_token_id,
                                         max_length=prm.max_length, overflow=prm.overflow)]
    rows = [unique[i % len(unique)] for i in range(args.solutions)]
    steps = sum(row.n_scored for row in rows)
    flops, weights = model_flops(prm, rows)
    max_tokens, max_batch = batching(device, args.max_tokens, args.max_batch)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    peak = args.peak_tflops or next((v for k, v in PEAK_TFLOPS.items() if k in name), None)
    print(f"{name}, torch {torch.__version__}, {dtype}, SDPA; backbone {weights / 1e9:.2f}B non-embedding "
          f"parameters ({'tiny' if args.tiny else 'Qwen2.5-1.5B shape'}, random weights)")
    print(f"{len(rows)} rows ({len(unique)} distinct rows of {len(examples)} PRM800K trajectories: one each, a "
          f"trajectory past the context several), {steps} steps, "
          f"{sum(map(len, rows)):,} tokens; batches of at most {max_tokens} padded tokens and {max_batch} rows",
          flush=True)

    options = dict(max_tokens=max_tokens, max_batch=max_batch, share_prefixes=False)  # every row computed
    score_encoded(prm, rows[: max_batch * 2], **options)  # warm-up, kernels picked
    times = []
    for _ in range(args.repeats):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        score_encoded(prm, rows, **options)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append(time.perf_counter() - start)
    best = min(times)
    tokens = sum(map(len, rows))
    print(f"scoring: {best:.2f} s (best of {args.repeats}: {', '.join(f'{t:.2f}' for t in times)})")
    print(f"{tokens / best:,.0f} tokens/s   {len(rows) / best:,.1f} rows/s   {steps / best:,.0f} steps/s")
    print(f"model FLOPs: {flops / best / 1e12:.1f} TFLOP/s" + (
        f"   MFU {flops / best / (peak * 1e12):.1%} of {peak:g} TFLOP/s dense bf16" if peak else
        "   (MFU: give --peak-tflops for this device)"))
    if device.type == "cuda":
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated(device) / 2**30:.1f} GiB")
    print("goal: MFU >= 40% on an H100 (bf16, 1.5B decoder)")


if __name__ == "__main__":
    main()
