"""experiments/common.sh's `review=` choice for WANLI's review: annotator (the people's stand-in,
trained on the world's unbiased split) vs teacher (the WANLI run's classifier on D0), and the reviewer id
the scripts pass to `aggregate.reviewer=`, which must equal the one `nliforge-review teacher` records."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from nliforge.data.jsonl import read_jsonl
from nliforge.review.teacher import teacher_review

ROOT = Path(__file__).resolve().parents[2]


def common(script: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `script` in bash after sourcing experiments/common.sh as an experiment's run.sh does."""
    body = f'HERE="{ROOT}/experiments/real_lm"; source "{ROOT}/experiments/common.sh"; {script}'
    full_env = {k: v for k, v in os.environ.items() if k != "REVIEW"} | (env or {})
    return subprocess.run(["bash", "-c", body, "run.sh", *args], capture_output=True, text=True, env=full_env)


@pytest.mark.parametrize("args, env, expected", [
    ((), {}, "annotator ANN"),
    (("review=annotator",), {}, "annotator ANN"),
    (("review=teacher",), {}, "teacher RUN/classifier"),
    ((), {"REVIEW": "teacher"}, "teacher RUN/classifier"),
    (("review=annotator",), {"REVIEW": "teacher"}, "annotator ANN"),   # the argument wins over the variable
])
def test_review_choice_picks_the_reviewer(args, env, expected):
    out = common('review_choice "$@"; echo "$REVIEW $(reviewer_dir RUN ANN)"', *args, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == expected


@pytest.mark.parametrize("args, env, named", [
    (("review=people",), {}, "review=people"),
    ((), {"REVIEW": "oracle"}, "review=oracle"),
    (("teacher",), {}, "unknown argument 'teacher'"),
])
def test_review_choice_rejects_anything_else_in_one_line(args, env, named):
    out = common('review_choice "$@"; echo reached', *args, env=env)
    assert out.returncode == 2
    assert "reached" not in out.stdout
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and "annotator" in lines[0] and "teacher" in lines[0]


def test_reviewer_id_is_the_id_the_review_records(classifier_run_dir, tmp_path):
    """aggregate.reviewer=$(reviewer_id DIR) must name the judgements `nliforge-review teacher
    teacher.model_dir=DIR` saved, also when DIR is a symlink (link_oracle links the annotator)."""
    records = read_jsonl(classifier_run_dir / "train_set.jsonl")[:3]
    annotator = tmp_path / "annotator"
    annotator.symlink_to(classifier_run_dir)            # as ORACLE=... link_oracle annotator does
    run = tmp_path / "wanli"
    run.mkdir()
    (run / "classifier").symlink_to(classifier_run_dir)
    for review in ("annotator", "teacher"):
        out = common('review_choice "$@"; reviewer_id "$(reviewer_dir "$RUN" "$ANN")"', f"review={review}",
                     env={"RUN": str(run), "ANN": str(annotator)})
        assert out.returncode == 0, out.stderr
        folder = run / "classifier" if review == "teacher" else annotator
        judged = teacher_review(records, folder, threshold=0.0, progress=False)
        assert out.stdout.strip() == judged[0].annotator == f"teacher:{classifier_run_dir.name}"


def test_count_lines_counts_non_blank_lines_and_zero_for_an_empty_file(tmp_path):
    """count_lines, not `grep -c`, which exits 1 on an empty file and so stopped a `set -e` script silently."""
    (tmp_path / "e.jsonl").write_text("")
    (tmp_path / "t.jsonl").write_text('{"a": 1}\n\n{"a": 2}\n')
    out = common(f'set -euo pipefail; count_lines "{tmp_path}/e.jsonl"; count_lines "{tmp_path}/t.jsonl"')
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "2"]


def test_logged_stops_the_script_naming_the_command_and_showing_its_log(tmp_path):
    log = tmp_path / "step.log"
    out = common(f'set -euo pipefail; logged "{log}" bash -c "echo first; echo the cause >&2; exit 3"; echo reached')
    assert out.returncode == 1 and "reached" not in out.stdout
    assert f"failed (bash ...); the end of {log}:" in out.stderr and "the cause" in out.stderr
    assert "first" in log.read_text()


def test_train_row_keeps_a_row_whose_seeds_all_have_metrics(tmp_path):
    """A re-run (FRESH=0) resumes: a row with a metrics.csv for every seed is not trained again."""
    for job in ("0", "1"):
        (tmp_path / "world3" / "sweep" / "1_d0" / job).mkdir(parents=True)
        (tmp_path / "world3" / "sweep" / "1_d0" / job / "metrics.csv").write_text("x\n")
    out = common(f'R="{tmp_path}"; SEEDS=1,2; train_row 3 1_d0 "data/train_sets=[synthetic_biased]"')
    assert out.returncode == 0, out.stderr
    assert "world 3, 1_d0: done before, kept" in out.stdout
