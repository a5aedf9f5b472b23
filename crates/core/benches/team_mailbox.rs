//! The team mailbox: delivery latency (a writer's `post` starts → the reader, waiting on the
//! file's watch, has the message), median and p99 over 1 000 messages sent one at a time; and the
//! cost of a reader waiting with nothing to read: the CPU time this process uses over 3 s of
//! waiting (≈ 0: it sleeps in the kernel until the file changes).
//!
//! Run with `cargo bench -p lathe-core --bench team_mailbox` (bench/teams.sh runs it).

#![allow(clippy::expect_used)] // a benchmark: a failed set-up step ends it with its reason

use std::sync::mpsc;
use std::time::{Duration, Instant};

use lathe_core::team::mailbox::{Kind, Mailbox, Message, post};
use lathe_core::team::watch::MailWatch;

const MESSAGES: usize = 1000;

/// CPU time (user + system) of this process so far, from /proc/self/stat, in milliseconds.
fn cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("stat");
    let fields: Vec<&str> = stat.rsplit_once(')').expect("stat").1.split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().expect("utime") + fields[12].parse::<f64>().expect("stime");
    // Linux reports CPU time in clock ticks of 1/100 s (USER_HZ).
    let per_second = 100.0;
    ticks * 1000.0 / per_second
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inbox = dir.path().join("inbox");
    let mailbox = Mailbox::open(&inbox, "alice").expect("open");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let (sent, started) = mpsc::channel::<Instant>();
    let (ack, acked) = mpsc::channel::<()>();
    let writer_inbox = inbox.clone();
    let writer = std::thread::spawn(move || {
        for n in 0..MESSAGES {
            let message = Message::new("lead", Kind::Message, format!("message {n}"));
            let start = Instant::now();
            post(&writer_inbox, "alice", &message).expect("post");
            sent.send(start).expect("send");
            acked.recv().expect("ack");
        }
    });
    let latencies = runtime.block_on(async {
        let watch = MailWatch::new(&mailbox.file()).expect("watch");
        let mut latencies = Vec::with_capacity(MESSAGES);
        while latencies.len() < MESSAGES {
            let unread = mailbox.unread().expect("unread");
            if unread.messages.is_empty() {
                watch.changed().await;
                continue;
            }
            let seen = Instant::now();
            mailbox.commit(unread.end).expect("commit");
            for _ in &unread.messages {
                let start = started.recv().expect("start");
                latencies.push(seen.duration_since(start).as_secs_f64() * 1e6);
                ack.send(()).expect("ack");
            }
        }
        latencies
    });
    writer.join().expect("writer");
    let mut sorted = latencies;
    sorted.sort_by(f64::total_cmp);
    println!(
        "delivery latency over {MESSAGES} messages (post → reader has it, fsync included): median {:.0} µs, p99 {:.0} µs",
        percentile(&sorted, 0.5),
        percentile(&sorted, 0.99)
    );

    let idle = runtime.block_on(async {
        let watch = MailWatch::new(&mailbox.file()).expect("watch");
        let before = cpu_ms();
        let wall = Instant::now();
        let _ = tokio::time::timeout(Duration::from_secs(3), watch.changed()).await;
        (cpu_ms() - before, wall.elapsed().as_secs_f64())
    });
    println!("a waiting reader: {:.1} ms of CPU over {:.1} s with no mail", idle.0, idle.1);
}
