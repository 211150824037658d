//! `cargo xtask web-tests [--screenshot FILE]`: the web page's tests in real headless Chromium
//! (`crates/oi-server/tests/web_page.rs`, `web_panels.rs`, `web_reconnect.rs`,
//! `web_store.rs`, `web_attack.rs`, `web_approval_attacks.rs` and `web_replay.rs`, ignored by plain
//! `cargo test` because each starts a browser). Needs Debian's `chromium` and `chromium-driver` (and `redis-server` for
//! `web_store`): without them it says so and skips, unless `OI_TEST_REQUIRE_ALL=1` (CI),
//! where it fails.
//! `--screenshot FILE` saves the page (docs/web-page.png is made this way).

use std::path::Path;
use std::process::Command;

use anyhow::bail;

use crate::python_tests::workspace_root;

/// The browser and its driver, where Debian puts them (as the tests expect).
const NEEDED: [&str; 2] = ["/usr/bin/chromium", "/usr/bin/chromedriver"];

/// Runs the web page's tests.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    if let Some(missing) = NEEDED.iter().find(|p| !Path::new(p).exists()) {
        let reason = format!("{missing} is missing (apt-get install chromium chromium-driver)");
        if std::env::var("OI_TEST_REQUIRE_ALL").as_deref() == Ok("1") {
            bail!("OI_TEST_REQUIRE_ALL=1 but {reason}");
        }
        println!("web-tests skipped: {reason}");
        return Ok(());
    }
    let root = workspace_root();
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command
        .current_dir(&root)
        .args(["test", "-p", "oi-server"])
        .args(["--test", "web_page", "--test", "web_attack"])
        .args(["--test", "web_reconnect", "--test", "web_panels"])
        .args(["--test", "web_store", "--test", "web_approval_attacks"])
        .args(["--test", "web_replay"])
        .arg("--")
        .args(["--ignored", "--test-threads=1"]);
    if let Some(path) = crate::flag_value(args, "--screenshot") {
        let path = Path::new(&path);
        let path = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir()?.join(path)
        };
        command.env("OI_WEB_SCREENSHOT", path);
    }
    let status = command.status()?;
    if !status.success() {
        bail!("the web page's tests failed ({status})");
    }
    Ok(())
}
