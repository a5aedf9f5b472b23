"""The Ray driver of `lathe batch --executor ray`.

`lathe batch` submits this file as a Ray job (`ray job submit --working-dir STAGE -- python3
ray_driver.py ...`); the working directory holds this driver, the pending tasks (`tasks.jsonl`, one
merged task object a line, as `lathe batch-task --task-json` takes it) and the `lathe` binary.

Each task becomes one Ray task (`num_cpus` from `--cpus-per-task`) that runs
`lathe batch-task --task-json JSON --out OUT --attempt N --node NODE` on whichever node Ray picks.
Ray retries a task whose worker died (`max_retries`, system failures only); a task that failed on
its own is never retried (`retry_exceptions=False`): a non-zero `batch-task` exit becomes an `error`
row. Every finished row is printed on stdout as one line, `@@lathe-row ` followed by the row's JSON,
in the order the tasks end; `lathe batch` reads them from `ray job submit`'s log stream and is the
only writer of the results files. OUT must be a directory every node sees at the same path.

Exit status: 0 when every task produced a row (whatever its status), 1 on bad arguments.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time

import ray

ROW_MARK = "@@lathe-row "
# How much of a failed `batch-task`'s stderr an `error` row keeps (characters, from the end).
STDERR_TAIL = 2000


def parent_death_signal():
    """In the child: ask Linux to send SIGTERM when the worker that started it dies, so a stopped
    job leaves no `batch-task` running on a node (it then ends its own agent process group)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def next_attempt(out, job, task_id):
    """The attempt number of this run of `task_id` in job `job`: 1 for the first start, 2 after Ray
    retried it once, ... Counted in OUT/ray/JOB/ID.attempts (one line per start), so it holds
    across nodes as OUT does."""
    directory = os.path.join(out, "ray", job)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{task_id}.attempts")
    with open(path, "a+", encoding="utf-8") as handle:
        handle.write("start\n")
        handle.flush()
        handle.seek(0)
        return sum(1 for _ in handle)


def error_row(task, attempt, node, wall_s, message):
    """An `error` row with the results.jsonl fields: the task produced no row of its own."""
    return {
        "id": task["id"],
        "status": "error",
        "subtype": "error_executor",
        "turns": 0,
        "tool_calls": 0,
        "input_tokens": 0,
        "cached_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.0,
        "agent_s": 0.0,
        "test_s": None,
        "patch_bytes": 0,
        "attempt": attempt,
        "node": node,
        "model": task.get("model"),
        "wall_s": round(wall_s, 3),
        "error": message,
    }


def run_task(lathe, task, out, job):
    """Runs one task with `lathe batch-task`; returns its result row (an `error` row when
    `batch-task` exited non-zero or printed no row)."""
    node = socket.gethostname()
    task_id = task["id"]
    attempt = next_attempt(out, job, task_id)
    command = [
        lathe,
        "batch-task",
        "--task-json",
        json.dumps(task, ensure_ascii=False),
        "--out",
        out,
        "--attempt",
        str(attempt),
        "--node",
        node,
    ]
    started = time.monotonic()
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            preexec_fn=parent_death_signal,
            check=False,
        )
    except OSError as err:
        return error_row(task, attempt, node, 0.0, f"cannot run {lathe}: {err}")
    wall_s = time.monotonic() - started
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not lines:
        tail = done.stderr[-STDERR_TAIL:].strip()
        return error_row(
            task,
            attempt,
            node,
            wall_s,
            f"lathe batch-task ended with exit code {done.returncode} and no result row: {tail}",
        )
    try:
        row = json.loads(lines[-1])
    except ValueError as err:
        return error_row(task, attempt, node, wall_s, f"lathe batch-task printed no JSON row: {err}")
    if not isinstance(row, dict) or row.get("id") != task_id:
        return error_row(task, attempt, node, wall_s, "lathe batch-task printed a row for another id")
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", required=True, help="merged task objects, one JSON a line")
    parser.add_argument("--out", required=True, help="the results directory (same path on every node)")
    parser.add_argument("--job", required=True, help="the submission id (names OUT/ray/JOB)")
    parser.add_argument("--cpus-per-task", type=float, default=1.0)
    parser.add_argument("--max-retries", type=int, default=3, help="retries of a task whose worker died")
    parser.add_argument("--lathe", default="lathe", help="the lathe binary, relative to the working dir")
    args = parser.parse_args()

    with open(args.tasks, encoding="utf-8") as handle:
        tasks = [json.loads(line) for line in handle if line.strip()]
    # Ray runs tasks in the job's working directory on every node; the binary is resolved there.
    lathe = os.path.abspath(args.lathe)

    ray.init()

    @ray.remote(num_cpus=args.cpus_per_task, max_retries=args.max_retries, retry_exceptions=False)
    def lathe_task(task):
        here = os.path.abspath(args.lathe)
        return run_task(here if os.path.exists(here) else lathe, task, args.out, args.job)

    tasks_by_id = {task["id"]: task for task in tasks}
    pending = {lathe_task.remote(task): task["id"] for task in tasks}
    print(f"lathe ray driver: {len(pending)} tasks, {args.cpus_per_task} CPU each", flush=True)
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            task_id = pending.pop(ref)
            try:
                row = ray.get(ref)
            except ray.exceptions.RayError as err:
                # The worker died more often than max_retries allows, or the task was cancelled.
                row = error_row(
                    tasks_by_id[task_id], args.max_retries + 1, "", 0.0, f"{type(err).__name__}: {err}"
                )
            print(ROW_MARK + json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
