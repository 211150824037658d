//! Screenshots of HTML pages with headless Chromium, for the model to see what the user sees.
//! Each Chromium runs in its own process group, registered so that stop, terminate and drop
//! can kill it.

use base64::Engine as _;
use std::collections::HashSet;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::base::process_group::{Signal, signal_group};
use crate::base::programs::program_exists;

/// The programs tried, in order.
const BROWSERS: [&str; 4] = [
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
];

/// How long a screenshot may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The process groups of the screenshots being taken.
#[derive(Debug, Default)]
pub(crate) struct Shooters {
    groups: Mutex<HashSet<u32>>,
}

impl Shooters {
    /// Kills every screenshot being taken.
    pub(crate) fn kill_all(&self) {
        let groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        for pgid in groups.iter() {
            signal_group(*pgid, Signal::Kill);
        }
    }

    fn add(&self, pgid: u32) {
        self.groups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(pgid);
    }

    fn remove(&self, pgid: u32) {
        self.groups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&pgid);
    }
}

/// Kills and forgets a screenshot's group when it ends, however it ends.
struct Registered {
    shooters: Arc<Shooters>,
    pgid: u32,
}

impl Drop for Registered {
    fn drop(&mut self) {
        signal_group(self.pgid, Signal::Kill);
        self.shooters.remove(self.pgid);
    }
}

/// The flags that keep a page offline: requests (loopback too: `<-loopback>` removes
/// Chromium's implicit bypass) go to a proxy nobody answers, and no host name resolves.
/// WebRTC's UDP goes around a proxy unless told not to (a STUN request reached a loopback
/// listener and a public address in the issue 21 review).
const OFFLINE: [&str; 4] = [
    "--proxy-server=socks5://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
];

/// Put before every page: a page's own policies can only narrow this one, never widen it.
/// Loading from `data:` (an opaque origin) already keeps the page away from files — it can
/// neither navigate to, frame nor load a `file:` URL (in the stop-32 review a page loaded from
/// a `file:` URL navigated itself to any file oi could read, which CSP does not govern).
const NO_FILES: &str = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src http: https: data: blob: 'unsafe-inline' 'unsafe-eval'\">";

/// The largest page shown: its `data:` URL is one argument of the browser's command line,
/// which Linux caps at 128 KiB (base64 makes the page a third larger).
pub(crate) const MAX_PAGE_BYTES: usize = 96_000;

/// The headless browser found on this machine, if any.
pub(crate) fn browser() -> Option<&'static str> {
    BROWSERS.into_iter().find(|p| program_exists(p))
}

/// A 960×540 PNG of `html`, base64-encoded; the error says why there is none. The browser's
/// environment is `env` (oi's secrets already withheld). `offline` (the policy denies the
/// network): the page reaches nothing, loopback included — every request goes to a proxy
/// on a port of the discard service and no name resolves — since the browser runs outside
/// the sandbox, where `--deny_network`'s seccomp rule does not hold.
pub(crate) async fn take(
    html: &str,
    shooters: &Arc<Shooters>,
    env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    offline: bool,
) -> Result<String, String> {
    let Some(program) = browser() else {
        return Err(
            "no headless Chromium is installed (e.g. `apt-get install chromium`)".to_owned(),
        );
    };
    // The browser's profile and the shot live where sandboxed code cannot plant links: the
    // browser runs outside the sandbox and writes there by name. The page is no file at all.
    let dir = crate::languages::own_dir::temp_dir("oi-html-")
        .map_err(|e| format!("could not create a temporary directory: {e}"))?;
    let shot = dir.path().join("shot.png");
    let page = format!("{NO_FILES}{html}");
    if page.len() > MAX_PAGE_BYTES {
        return Err(format!(
            "the page is {} bytes; oi shows pages of up to {MAX_PAGE_BYTES} bytes",
            page.len()
        ));
    }
    let url = format!(
        "data:text/html;charset=utf-8;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(page)
    );
    let mut command = tokio::process::Command::new(program);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=960,540",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .args(if offline { OFFLINE.as_slice() } else { &[] })
        .arg(format!("--screenshot={}", shot.display()))
        .arg(url)
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|e| format!("could not start `{program}`: {e}"))?;
    let _registered = child.id().map(|pgid| {
        shooters.add(pgid);
        Registered {
            shooters: Arc::clone(shooters),
            pgid,
        }
    });
    match tokio::time::timeout(TIMEOUT, child.wait()).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return Err(format!("`{program}` failed: {e}")),
        Err(_) => {
            return Err(format!(
                "`{program}` took more than {} s",
                TIMEOUT.as_secs()
            ));
        }
    }
    let png = std::fs::read(&shot)
        .map_err(|_| format!("`{program}` ended without writing a screenshot"))?;
    if !png.starts_with(b"\x89PNG") {
        return Err(format!("`{program}` wrote something that is not a PNG"));
    }
    Ok(base64::engine::general_purpose::STANDARD.encode(&png))
}
