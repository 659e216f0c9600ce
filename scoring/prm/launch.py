"""Training on several processes: the same run under ``accelerate launch``.

``launched_checkpoint`` writes the run's examples and settings to a spec file and starts
``accelerate launch --num_processes N [--config_file F] -m scoring.prm.launch SPEC``: each
process runs ``scoring.prm.training_run.train_here`` (the Trainer takes its process group from the
launch: DDP by default, FSDP or DeepSpeed ZeRO as the researcher's accelerate config file says;
gloo on a CPU, NCCL on GPUs), and the main process saves the checkpoint. This process follows
the metrics log for the step hook, then loads the checkpoint and records the caller's metrics
in it. A launch that fails raises with its exit status; the checkpoint directory is only ever
written whole (``save_checkpoint``), and the Trainer's own checkpoints in ``work_dir`` let a
rerun resume.
"""
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from scoring.prm.data import Example


def launch_command(config, spec_path, *, device=None):
    """The ``accelerate launch`` command line that trains the spec at ``spec_path``."""
    command = [sys.executable, "-m", "accelerate.commands.launch", "--num_machines", "1", "--dynamo_backend", "no"]
    if config.accelerate_config:
        command += ["--config_file", str(config.accelerate_config)]
    elif config.processes > 1:
        command += ["--multi_gpu"]  # DDP; on a CPU host the Trainer's process group is gloo
    command += ["--num_processes", str(config.processes)]
    return command + ["-m", "scoring.prm.launch", str(spec_path)]


def launched_checkpoint(examples, out, *, base, config, device=None, max_length=None, overflow="window", log_path=None,
                        meta=None, metrics=None, on_step=None, work_dir=None, resume=False):
    """``train_checkpoint`` over ``config.processes`` processes; returns its ``TrainedCheckpoint``."""
    from scoring.prm.checkpoint import load_checkpoint, read_meta, update_meta
    from scoring.prm.splits import split_by_problem
    from scoring.prm.training_run import TrainedCheckpoint

    with tempfile.TemporaryDirectory(prefix="stepmark-launch-") as tmp:
        log_path = Path(log_path) if log_path else Path(tmp) / "train.jsonl"
        work_dir = work_dir or Path(tmp) / "trainer"  # one directory for every process's part of a save
        spec = {"examples": [dataclasses.asdict(e) for e in examples], "out": str(out), "base": str(base),
                "config": dataclasses.asdict(config), "device": None if device is None else str(device),
                "max_length": max_length, "overflow": overflow, "log_path": str(log_path), "meta": meta or {},
                "work_dir": None if work_dir is None else str(work_dir), "resume": resume}
        spec_path = Path(tmp) / "spec.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        history = _run(launch_command(config, spec_path, device=device), log_path, on_step)
    prm = load_checkpoint(out, device=device)
    summary = read_meta(out)["metrics"]
    if metrics is not None:
        _, val_set = split_by_problem(examples, fraction=config.val_fraction, seed=config.seed)
        summary = metrics(prm, summary, val_set)
        update_meta(out, metrics=summary)
    return TrainedCheckpoint(prm=prm, path=Path(out), metrics=summary, history=history)


def _run(command, log_path, on_step):
    """Run the launch to its end, calling ``on_step`` for each ``train`` event it logs; returns the events."""
    position = log_path.stat().st_size if log_path.exists() else 0
    history, total = [], None
    process = subprocess.Popen(command, start_new_session=True)
    try:
        while True:
            try:
                process.wait(timeout=0.5)
                finished = True
            except subprocess.TimeoutExpired:
                finished = False
            if log_path.exists():
                with open(log_path, encoding="utf-8") as handle:
                    handle.seek(position)
                    text = handle.read()
                whole = text[: text.rfind("\n") + 1]  # a line still being written waits for the next look
                position += len(whole.encode("utf-8"))
                for line in whole.splitlines():
                    event = json.loads(line)
                    if event["event"] == "start":
                        total = event["total_steps"]
                    elif event["event"] in ("train", "eval"):
                        history.append(event)
                        if event["event"] == "train" and on_step is not None:
                            on_step(event["step"], total, event["loss"])
            if finished:
                break
    except BaseException:
        os.killpg(process.pid, signal.SIGTERM)  # the launch and every training process with it
        process.wait()
        raise
    if process.returncode != 0:
        raise RuntimeError(f"the training launch failed with exit status {process.returncode}: {' '.join(command)}")
    return history


def main(spec_path):
    """One process of the launch: train (every process) and save (the main one)."""
    from scoring.prm.train import TrainConfig
    from scoring.prm.training_run import train_here

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    device = spec["device"]
    if device is not None and device.startswith("cuda"):
        device = f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"  # each process on its own GPU
    train_here([Example(**e) for e in spec["examples"]], spec["out"], base=spec["base"],
               config=TrainConfig(**spec["config"]), device=device, max_length=spec["max_length"],
               overflow=spec["overflow"], log_path=spec["log_path"], meta=spec["meta"], metrics=None,
               work_dir=spec["work_dir"], resume=spec["resume"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
