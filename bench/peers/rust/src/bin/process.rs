//! process [N]: tokio::process beside bench/process.cpp: N times, spawn
//! /bin/true and wait for it (Command::status), one after the other.
use io_peers::*;
use std::time::Instant;

async fn run(count: u64) -> u64 {
    let mut failed = 0;
    for _ in 0..count {
        let status = tokio::process::Command::new("/bin/true").status().await.unwrap();
        failed += u64::from(!status.success());
    }
    failed
}

fn main() {
    let a = Args::new();
    let n = a.num(0, 2000);
    let rt = rt_current();
    let elapsed = rt.block_on(async {
        run(n / 10).await;
        let t = Instant::now();
        assert_eq!(run(n).await, 0);
        t.elapsed()
    });
    emit("process", CT, "spawn_wait_true", n, elapsed, &[]);
}
