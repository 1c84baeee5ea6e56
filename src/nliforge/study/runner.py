"""`nliforge-study run`: the attempt's worlds × arms × seeds as nliforge-train multiruns.

One multirun per (arm, training seed) sweeps that arm's unfinished worlds, so `hydra/launcher=slurm` (or
any launcher) works as it does for `nliforge-train -m`; every run lands in its deterministic folder
`<attempt>/runs/<arm>/world-<w>/seed-<s>` (hydra.sweep.subdir). A run is finished when its folder holds
the completion record (gates.is_done); finished runs are skipped, and an unfinished one resumes from its
own last.ckpt (`ckpt_path=last`; a folder without one starts over). With a cluster launcher every
multirun is submitted at once; locally they run one after another. A progress line per finished run.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from nliforge.errors import NLIDataError
from nliforge.study.gates import is_done, run_dir
from nliforge.study.schema import Study

# what `run` may add on its command line: how and where runs execute, never what they compute
RUN_KEYS = ("hydra/launcher", "hydra.launcher.", "hydra.job_logging", "hydra/job_logging", "num_threads",
            "progress_every_s", "trainer.enable_progress_bar", "paths.cache_dir", "paths.data_dir", "logger",
            "logger.", "trainer.accelerator", "trainer.devices", "data.num_workers", "data.eval_batch_size")
_KEY = re.compile(r"^[+~]*([\w/.@]+)=")


def check_run_args(args: Sequence[str]) -> list[str]:
    """The overrides `run` passes on to every nliforge-train job; one that would change the design is refused."""
    for arg in args:
        m = _KEY.match(arg)
        key = m.group(1) if m else arg
        if not m or not any(key == k or (k.endswith((".", "/")) and key.startswith(k)) for k in RUN_KEYS):
            raise NLIDataError(f"run: {arg!r} would change what the runs compute, or is not an override; put it "
                               f"in the study file (and amend), or pass only {', '.join(RUN_KEYS)}")
    return list(args)


def needs_predictions(study: Study) -> bool:
    return any(g.threshold is None for g in study.gates.values())


def group_command(study: Study, attempt: Path, arm: str, seed: int, worlds: Sequence,
                  extra: Sequence[str]) -> list[str]:
    """The nliforge-train multirun of one arm and seed over `worlds`."""
    key = study.worlds.key.lstrip("+")
    fixed = [f"save_model={'true' if study.save_model else 'false'}", f"suite={study.suite}", f"seed={seed}",
             "ckpt_path=last", *(["++suite.save_predictions=true"] if needs_predictions(study) else [])]
    sweep = [f"{study.worlds.key}={','.join(str(w) for w in worlds)}", f"hydra.sweep.dir={attempt / 'runs' / arm}",
             f"hydra.sweep.subdir=world-${{{key}}}/seed-${{seed}}"]
    return [sys.executable, "-m", "nliforge.train", "-m", *study.base, *study.worlds.fixed, *study.arms[arm],
            *fixed, *extra, *sweep]


def pending(study: Study, attempt: Path) -> list[tuple]:
    return [(w, a, s) for w, a, s in study.run_names() if not is_done(run_dir(attempt, w, a, s), study.save_model)]


def groups(todo: Sequence[tuple]) -> dict[tuple[str, int], list]:
    out: dict[tuple[str, int], list] = {}
    for w, a, s in todo:
        out.setdefault((a, s), []).append(w)
    return out


def batches(todo: Sequence[tuple], jobs: int | None) -> list[tuple[str, int, list]]:
    """The multiruns to launch: each arm and seed over its worlds; with jobs > 1 cut into chunks of at most
    len(todo) // (2 * jobs) worlds, so that `jobs` processes stay busy to the end instead of one arm's long
    tail running alone (one process per run when few are left; whole groups, fewer imports, when many).
    jobs 1 or None (a cluster launcher: one job array per arm and seed): whole groups."""
    size = max(1, len(todo) // (2 * jobs)) if jobs and jobs > 1 else max(1, len(todo))
    return [(arm, seed, worlds[i:i + size]) for (arm, seed), worlds in groups(todo).items()
            for i in range(0, len(worlds), size)]


def cluster_launcher(extra: Sequence[str]) -> bool:
    return any(a.startswith("hydra/launcher=") and not a.endswith("=basic") for a in extra)


def say_now(line: str) -> None:
    print(line, flush=True)     # a progress line reaches a log file (nohup, a batch job) when it happens


def run_study(study: Study, attempt: Path, extra: Sequence[str] = (), say: Callable[[str], None] = say_now,
              poll_s: float = 2.0, jobs: int = 1) -> int:
    """Train every unfinished run; returns the number of runs still unfinished (0: all done). Locally `jobs`
    multiruns (an arm and seed over some of its worlds: `batches`) run at once; a cluster launcher gets every
    arm and seed at once, each one job array."""
    extra = check_run_args(extra)
    total, todo = len(study.run_names()), pending(study, attempt)
    say(f"{total} runs ({len(study.worlds.values)} worlds × {len(study.arms)} arms × {len(study.seeds)} seeds): "
        f"{total - len(todo)} done, {len(todo)} to run")
    logs = attempt / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    cluster = cluster_launcher(extra)
    at_once = float("inf") if cluster else max(1, jobs)
    running: list[tuple[subprocess.Popen, Path]] = []
    waiting, reported = batches(todo, None if cluster else jobs), set()
    whole = groups(todo)          # a batch that is part of its arm's worlds logs under its first world
    while waiting or running:
        while waiting and len(running) < at_once:
            arm, seed, worlds = waiting.pop(0)
            part = "" if len(worlds) == len(whole[(arm, seed)]) else f"-world{worlds[0]}"
            log = logs / f"{arm}-seed{seed}{part}.log"
            with log.open("a") as fh:
                running.append((subprocess.Popen(group_command(study, attempt, arm, seed, worlds, extra),
                                                 stdout=fh, stderr=subprocess.STDOUT), log))
        time.sleep(poll_s)
        _report_progress(study, attempt, todo, reported, total, say)
        for proc, log in [(p, lg) for p, lg in running if p.poll() is not None]:
            running.remove((proc, log))
            if proc.returncode:
                say(f"error: {log.name.removesuffix('.log')} failed (exit {proc.returncode}): {last_error(log)}; "
                    f"log: {log}")
    _report_progress(study, attempt, todo, reported, total, say)
    left = pending(study, attempt)
    if not left and study.rescore:
        rescore(study, attempt, say)
    return len(left)


def _report_progress(study: Study, attempt: Path, todo, reported: set, total: int, say) -> None:
    for w, a, s in todo:
        if (w, a, s) not in reported and is_done(run_dir(attempt, w, a, s), study.save_model):
            reported.add((w, a, s))
            done = total - len(todo) + len(reported)
            say(f"[{done}/{total}] done: world {w} · {a} · seed {s} ({run_dir(attempt, w, a, s)})")


def last_error(log: Path) -> str:
    lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error:")]
    return (errors or lines or ["(empty log)"])[-1][:400]


def rescore(study: Study, attempt: Path, say: Callable[[str], None] = say_now) -> None:
    """Score each `rescore` suite on every kept model into <run>/rescore/<suite>/ (skipped when there)."""
    world_args = [a for a in study.base if a.lstrip("+").startswith("world")] + list(study.worlds.fixed)
    for w, a, s in study.run_names():
        run = run_dir(attempt, w, a, s)
        if not is_done(run, save_model=True):
            continue
        for suite in study.rescore:
            out = run / "rescore" / suite
            if (out / "metrics.csv").is_file():
                continue
            cmd = [sys.executable, "-m", "nliforge.evaluate", f"model.backbone.name_or_path={run / 'model'}",
                   f"suite={suite}", *world_args, f"{study.worlds.key}={w}", f"hydra.run.dir={out}"]
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode:
                raise NLIDataError(f"rescore {suite} on {run}: {(done.stderr.strip().splitlines() or ['failed'])[-1]}")
            say(f"rescored: {suite} on world {w} · {a} · seed {s}")


def check_composes(study: Study) -> None:
    """Each arm's nliforge-train config composes (group options exist, keys are known), checked before a plan
    is locked; a failure names the arm and Hydra's reason."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from nliforge.utils.cli import CONF_DIR, check_group_choices, hydra_error_line, with_user_config_path
    from nliforge.utils.home import user_conf_dir

    for arm, overrides in study.arms.items():
        args = [*study.base, *study.worlds.fixed, *overrides, f"{study.worlds.key}={study.worlds.values[0]}",
                f"seed={study.seeds[0]}", f"suite={study.suite}"]
        args = with_user_config_path(args, extra=[user_conf_dir(create=True)])
        GlobalHydra.instance().clear()
        try:
            check_group_choices(args, CONF_DIR)
            with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
                compose("train", overrides=args)
        except NLIDataError as err:
            raise NLIDataError(f"{study.source}: arm {arm}: {err}") from None
        except Exception as err:  # noqa: BLE001 - Hydra's composition errors have several types
            raise NLIDataError(f"{study.source}: arm {arm}: {hydra_error_line(err)}") from None
        finally:
            GlobalHydra.instance().clear()
