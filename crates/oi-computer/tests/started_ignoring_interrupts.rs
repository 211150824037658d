//! oi started as a script's background job (`oi-server &`, `nohup oi … &`) inherits SIGINT and
//! SIGQUIT ignored; its sessions must still stop. This test binary ignores both for its whole
//! process, as such a start does, then stops a shell and a Python block through the computer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{run, text};
use futures::StreamExt;
use oi_computer::LocalComputer;
use oi_core::computer::{Computer, Output};

fn ignore_interrupts_like_a_background_job() {
    // SAFETY: setting two signals' dispositions to "ignore" touches no memory of ours.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGQUIT, libc::SIG_IGN);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_interrupts_sessions_of_an_oi_started_with_interrupts_ignored() {
    ignore_interrupts_like_a_background_job();
    let c = Arc::new(LocalComputer::new());
    for (language, setup, code, check) in [
        (
            "shell",
            "KEPT=yes",
            "sleep 600\necho 'not reached'",
            "echo \"$KEPT\"",
        ),
        (
            "python",
            "kept = 'yes'",
            "import time\ntime.sleep(600)\nprint('not reached')",
            "print(kept)",
        ),
    ] {
        run(&c, language, setup).await;
        let stream = c.run(language, code);
        let stopper = Arc::clone(&c);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            stopper.stop();
        });
        let started = Instant::now();
        let out: Vec<Output> = tokio::time::timeout(Duration::from_secs(10), stream.collect())
            .await
            .unwrap();
        let said = text(&out);
        assert!(!said.contains("not reached"), "{language}: {out:?}");
        assert!(
            !said.contains("was killed"),
            "{language}: interrupted, not killed: {out:?}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{language}: {:?}",
            started.elapsed()
        );
        assert_eq!(
            text(&run(&c, language, check).await),
            "yes\n",
            "{language}: the session's state survives the stop"
        );
    }
}
