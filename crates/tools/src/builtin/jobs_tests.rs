#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::test_support::Workspace;
use pretty_assertions::assert_eq;

/// Liveness bound of every wait below: a job that never says what is awaited fails the test.
const PATIENCE: Duration = Duration::from_secs(20);

fn start(ws: &Workspace, table: &JobTable, command: &str) -> Arc<Job> {
    table.start(command, &ws.ctx.workspace, &ws.ctx, Watches::new(&ws.ctx)).unwrap()
}

/// Takes output until it contains `needle` (or the job ends); returns all that was taken.
async fn read_until(job: &Job, needle: &str) -> String {
    let mut changes = job.subscribe();
    let mut text = String::new();
    let wait = async {
        loop {
            let taken = job.take(false);
            text.push_str(&String::from_utf8_lossy(&taken.bytes));
            if text.contains(needle) || !taken.state.is_running() {
                return;
            }
            let _ = changes.changed().await;
        }
    };
    tokio::time::timeout(PATIENCE, wait).await.expect("the job wrote what was awaited");
    text
}

async fn ended(job: &Job) -> JobState {
    let mut changes = job.subscribe();
    let wait = async {
        while job.state().is_running() {
            let _ = changes.changed().await;
        }
    };
    tokio::time::timeout(PATIENCE, wait).await.expect("the job ended");
    job.state()
}

fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
}

async fn gone_soon(pid: &str) -> bool {
    for _ in 0..250 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    !alive(pid)
}

#[tokio::test]
async fn a_job_runs_on_and_each_take_returns_only_what_came_since_the_last() {
    let ws = Workspace::new();
    let table = JobTable::new();
    let job = start(&ws, &table, "echo one; until [ -e go ]; do sleep 0.02; done; echo two; sleep 30");
    assert_eq!(job.id, "job1");
    assert_eq!(read_until(&job, "one\n").await, "one\n");
    ws.put("go", "");
    assert_eq!(read_until(&job, "two\n").await, "two\n");
    assert_eq!(job.take(false).bytes, b"");
    assert_eq!(job.state(), JobState::Running);
    let listed = table.list();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].id.as_str(), listed[0].state, listed[0].pid), ("job1", JobState::Running, job.pid));
    let ended = table.end_all().await;
    assert_eq!(ended.iter().map(|job| job.id.as_str()).collect::<Vec<_>>(), ["job1"]);
    assert_eq!(job.state(), JobState::Killed);
    assert!(gone_soon(&job.pid.unwrap().to_string()).await);
    assert_eq!(table.end_all().await, Vec::new(), "nothing is left to end");
    let log = std::fs::read_to_string(job.log.as_ref().unwrap()).unwrap();
    assert_eq!(log, "one\ntwo\n");
}

#[tokio::test]
async fn an_exit_is_recorded_with_its_code_after_the_last_output() {
    let ws = Workspace::new();
    let table = JobTable::new();
    let job = start(&ws, &table, "echo bye; exit 3");
    assert_eq!(ended(&job).await, JobState::Exited { code: 3, signal: None });
    let taken = job.take(false);
    assert_eq!((taken.bytes.as_slice(), taken.dropped), (&b"bye\n"[..], 0));
    let job = start(&ws, &table, "kill -9 $$");
    assert_eq!(ended(&job).await, JobState::Exited { code: 137, signal: Some(9) });
    assert_eq!(job.id, "job2");
    assert_eq!(JobState::Exited { code: 137, signal: Some(9) }.label(), "exited 137 (signal 9)");
}

#[tokio::test]
async fn the_ninth_running_job_is_refused_until_one_ends() {
    let ws = Workspace::new();
    let table = JobTable::new();
    let jobs: Vec<Arc<Job>> = (0..MAX_RUNNING_JOBS).map(|_| start(&ws, &table, "sleep 30")).collect();
    let error = table.start("sleep 30", &ws.ctx.workspace, &ws.ctx, Watches::new(&ws.ctx)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "shell: 8 background jobs are running already (job1, job2, job3, job4, job5, job6, job7, job8); \
         stop one with shell_kill first"
    );
    jobs[2].stop().await;
    assert_eq!(jobs[2].state(), JobState::Killed);
    let ninth = start(&ws, &table, "sleep 30");
    assert_eq!(ninth.id, "job9", "a refused start takes no id");
    assert_eq!(table.end_all().await.len(), MAX_RUNNING_JOBS);
    for job in jobs.iter().chain([&ninth]) {
        assert!(gone_soon(&job.pid.unwrap().to_string()).await, "{} outlived end_all", job.id);
    }
}

#[tokio::test]
async fn memory_keeps_the_newest_output_and_counts_what_it_dropped_while_the_log_keeps_all() {
    let ws = Workspace::new();
    let table = JobTable::new();
    let job = start(&ws, &table, "head -c 1048576 /dev/zero | tr '\\0' a; echo END");
    ended(&job).await;
    let taken = job.take(false);
    let total = 1_048_576 + 4;
    assert_eq!(taken.bytes.len(), RETAINED_BYTES);
    assert_eq!(taken.dropped, (total - RETAINED_BYTES) as u64);
    assert!(taken.bytes.starts_with(b"aaa") && taken.bytes.ends_with(b"aaaEND\n"));
    assert_eq!(std::fs::metadata(job.log.as_ref().unwrap()).unwrap().len(), total as u64);
    let again = job.take(false);
    assert_eq!((again.bytes.len(), again.dropped), (0, 0), "what was read is not read again");
}

#[tokio::test]
async fn an_incomplete_character_or_line_waits_for_its_rest() {
    let ws = Workspace::new();
    let table = JobTable::new();
    let job = start(
        &ws,
        &table,
        "printf 'ready\\npart \\303'; until [ -e go ]; do sleep 0.02; done; printf '\\251 done\\nnext'; sleep 30",
    );
    let mut changes = job.subscribe();
    let first = async {
        loop {
            let taken = job.take(true);
            if !taken.bytes.is_empty() {
                return taken.bytes;
            }
            let _ = changes.changed().await;
        }
    };
    let first = tokio::time::timeout(PATIENCE, first).await.unwrap();
    assert_eq!(first, b"ready\n", "whole lines only");
    // `part \303` comes in one write (printf may write `ready\n` on its own first).
    let partial = async {
        let mut taken = Vec::new();
        while taken.is_empty() {
            taken = job.take(false).bytes;
            if taken.is_empty() {
                let _ = changes.changed().await;
            }
        }
        taken
    };
    let partial = tokio::time::timeout(PATIENCE, partial).await.unwrap();
    assert_eq!(partial, b"part ", "the first byte of é waits for the second");
    ws.put("go", "");
    assert_eq!(read_until(&job, "next").await, "é done\nnext");
    table.end_all().await;
}

#[tokio::test]
async fn stopping_a_job_gives_its_group_time_to_clean_up_then_ends_all_of_it() {
    let ws = Workspace::new();
    let table = JobTable::new();
    let job = start(
        &ws,
        &table,
        "sleep 30 & echo $! > bg.pid; trap 'echo cleaning up; exit 0' TERM; echo up; while :; do sleep 0.05; done",
    );
    read_until(&job, "up\n").await;
    let background = std::fs::read_to_string(ws.path("bg.pid")).unwrap().trim().to_string();
    assert!(alive(&background));
    job.stop().await;
    assert_eq!(job.state(), JobState::Killed);
    let said = String::from_utf8_lossy(&job.take(false).bytes).into_owned();
    assert!(said.ends_with("cleaning up\n"), "{said}");
    assert!(gone_soon(&background).await, "the job's background sleep {background} outlived it");
}

#[tokio::test]
async fn dropping_the_table_kills_what_still_runs() {
    let ws = Workspace::new();
    let table = JobTable::new();
    let job = start(&ws, &table, "sleep 30 & echo $! > bg.pid; wait");
    let mut background = None;
    for _ in 0..500 {
        background = std::fs::read_to_string(ws.path("bg.pid")).ok().filter(|pid| pid.ends_with('\n'));
        if background.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let background = background.expect("the job wrote its pid").trim().to_string();
    drop(table);
    assert!(gone_soon(&background).await, "the job's sleep {background} outlived the table");
    assert!(gone_soon(&job.pid.unwrap().to_string()).await);
}

#[tokio::test]
async fn ended_jobs_beyond_the_kept_number_are_forgotten_oldest_first() {
    let ws = Workspace::new();
    let table = JobTable::new();
    for _ in 0..KEPT_ENDED_JOBS + 2 {
        let job = start(&ws, &table, "true");
        ended(&job).await;
    }
    let ids = table.ids();
    assert_eq!(ids.len(), KEPT_ENDED_JOBS + 1, "{ids:?}");
    assert_eq!(ids.first().map(String::as_str), Some("job2"));
    assert_eq!(ids.last().map(String::as_str), Some("job18"));
    assert!(table.get("job1").is_none());
    assert!(table.get(" job18 ").is_some());
}
