"""Training on several processes: the same run under ``accelerate launch``.

``launch`` writes the run's examples and settings to a spec file and starts
``accelerate launch --num_processes N [--config_file F] -m scoring.prm.training_run SPEC``: each
process runs ``scoring.prm.training_run.train_here`` (the Trainer takes its process group from the
launch: DDP by default, FSDP or DeepSpeed ZeRO as the researcher's accelerate config file says;
gloo on a CPU, NCCL on GPUs), and the main process saves the checkpoint. This process follows
the metrics log for the step hook (``training_run`` then loads the checkpoint and records the
caller's metrics in it). A launch that fails raises with its exit status; the checkpoint directory is only ever
written whole (``save_checkpoint``), and the Trainer's own checkpoints in ``work_dir`` let a
rerun resume.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path



def launch_command(config, spec_path, *, device=None):
    """The ``accelerate launch`` command line that trains the spec at ``spec_path``."""
    command = [sys.executable, "-m", "accelerate.commands.launch", "--num_machines", "1", "--dynamo_backend", "no"]
    if config.accelerate_config:
        command += ["--config_file", str(config.accelerate_config)]
    elif config.processes > 1:
        command += ["--multi_gpu"]  # DDP; on a CPU host the Trainer's process group is gloo
    command += ["--num_processes", str(config.processes)]
    return command + ["-m", "scoring.prm.training_run", str(spec_path)]


def launch(spec, config, *, log_path, device=None, on_step=None):
    """Run the training ``spec`` (a JSON-able dict, read by ``training_run.main`` in each process)
    over ``config.processes`` processes to its end; returns the ``train`` and ``eval`` events logged."""
    with tempfile.TemporaryDirectory(prefix="stepmark-launch-") as tmp:
        spec_path = Path(tmp) / "spec.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        return _run(launch_command(config, spec_path, device=device), Path(log_path), on_step)


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
