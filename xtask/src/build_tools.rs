//! The tools `--features local` needs to build llama.cpp: cmake, and libclang for its bindings.
//! What the machine has is used; what it lacks is fetched once, saying so: the `cmake` and
//! `libclang` wheels from PyPI (`python3 -m pip install --target target/tools/python`), or,
//! without pip, the system's packages when oi runs as root with apt-get. The build then gets
//! the environment that finds them (`PATH`, `LIBCLANG_PATH`, and the C compiler's own headers
//! for bindgen when the libclang has none of its own).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

/// What the build needs in its environment.
#[derive(Debug, Default)]
pub struct BuildEnv {
    /// Directories put in front of `PATH`.
    pub path_prefix: Vec<PathBuf>,
    /// Variables to set.
    pub vars: Vec<(String, String)>,
}

impl BuildEnv {
    /// Applies this environment to `command`.
    pub fn apply(&self, command: &mut Command) {
        if !self.path_prefix.is_empty() {
            let old = std::env::var_os("PATH").unwrap_or_default();
            let paths = self
                .path_prefix
                .iter()
                .cloned()
                .chain(std::env::split_paths(&old));
            if let Ok(joined) = std::env::join_paths(paths) {
                command.env("PATH", joined);
            }
        }
        for (name, value) in &self.vars {
            command.env(name, value);
        }
    }
}

/// Whether `program --version` runs.
fn runs(program: &Path) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether `name` is a libclang library file (not `libclang-cpp`).
fn is_libclang(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("libclang") else {
        return false;
    };
    !rest.starts_with("-cpp")
        && (rest.starts_with(".so") || rest.starts_with(".dylib") || rest.starts_with('-'))
        && (rest.contains(".so") || rest.contains(".dylib"))
}

/// Whether `dir` holds a libclang library.
fn has_libclang(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .filter_map(Result::ok)
            .any(|e| is_libclang(&e.file_name().to_string_lossy()))
    })
}

/// Where clang-sys (bindgen's loader) would find libclang on this machine, if anywhere.
pub fn system_libclang() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("LIBCLANG_PATH") {
        let dir = PathBuf::from(dir);
        let dir = if dir.is_file() {
            dir.parent().map(Path::to_path_buf).unwrap_or(dir)
        } else {
            dir
        };
        return has_libclang(&dir).then_some(dir);
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Ok(out) = Command::new("llvm-config").arg("--libdir").output() {
        let dir = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if !dir.is_empty() {
            dirs.push(PathBuf::from(dir));
        }
    }
    for dir in [
        "/usr/lib",
        "/usr/lib64",
        "/usr/local/lib",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/Library/Developer/CommandLineTools/usr/lib",
        "/Applications/Xcode.app/Contents/Developer/Toolchains/XcodeDefault.xctoolchain/usr/lib",
        "/opt/homebrew/opt/llvm/lib",
        "/usr/local/opt/llvm/lib",
    ] {
        dirs.push(PathBuf::from(dir));
    }
    for parent in ["/usr/lib", "/usr/lib64"] {
        if let Ok(entries) = std::fs::read_dir(parent) {
            for entry in entries.filter_map(Result::ok) {
                if entry.file_name().to_string_lossy().starts_with("llvm") {
                    dirs.push(entry.path().join("lib"));
                }
            }
        }
    }
    dirs.into_iter().find(|dir| has_libclang(dir))
}

/// The folder the fetched tools go to.
pub fn tools_dir(target: &Path) -> PathBuf {
    target.join("tools").join("python")
}

/// The cmake of the fetched wheel.
fn wheel_cmake(tools: &Path) -> PathBuf {
    tools.join("cmake").join("data").join("bin").join("cmake")
}

/// The folder of the fetched wheel's libclang.
fn wheel_libclang(tools: &Path) -> PathBuf {
    tools.join("clang").join("native")
}

/// The C compiler's own header folder (`stddef.h`, …), for a libclang without its own.
fn compiler_headers() -> Option<String> {
    let out = Command::new("cc")
        .arg("-print-file-name=include")
        .output()
        .ok()?;
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    Path::new(&dir).join("stddef.h").is_file().then_some(dir)
}

/// Installs the `packages` wheels into `tools` with pip; false when pip is not usable.
fn pip_install(tools: &Path, packages: &[&str]) -> anyhow::Result<bool> {
    let has_pip = Command::new("python3")
        .args(["-m", "pip", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_pip {
        return Ok(false);
    }
    println!(
        "fetching {} from PyPI into {} (about {} MB, once)…",
        packages.join(" and "),
        tools.display(),
        packages.len() * 30
    );
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--upgrade",
            "--target",
        ])
        .arg(tools)
        .args(packages)
        .status()
        .context("running python3 -m pip install")?;
    if !status.success() {
        bail!(
            "`python3 -m pip install {}` failed ({status})",
            packages.join(" ")
        );
    }
    Ok(true)
}

/// Whether apt-get can install packages here (it is there and oi runs as root).
fn apt_usable() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    root && runs(Path::new("apt-get"))
}

fn apt_install(packages: &[&str]) -> anyhow::Result<()> {
    println!(
        "installing {} with apt-get (pip is not available)…",
        packages.join(" ")
    );
    let update = Command::new("apt-get").arg("update").status()?;
    if !update.success() {
        bail!("`apt-get update` failed ({update})");
    }
    let status = Command::new("apt-get")
        .args(["install", "-y", "--no-install-recommends"])
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()?;
    if !status.success() {
        bail!("`apt-get install {}` failed ({status})", packages.join(" "));
    }
    Ok(())
}

/// Makes sure cmake and libclang are there (fetching what is missing, once) and returns the
/// environment the build needs to find them.
pub fn ensure(target: &Path) -> anyhow::Result<BuildEnv> {
    let tools = tools_dir(target);
    let mut env = BuildEnv::default();
    let mut missing: Vec<&str> = Vec::new();
    let cmake_found = runs(Path::new("cmake")) || runs(&wheel_cmake(&tools));
    if !cmake_found {
        missing.push("cmake<4");
    }
    let libclang_found = system_libclang().is_some() || has_libclang(&wheel_libclang(&tools));
    if !libclang_found {
        missing.push("libclang");
    }
    if missing.is_empty() {
        println!("build tools: cmake and libclang found");
    } else {
        println!(
            "build tools: {} missing",
            missing
                .iter()
                .map(|p| p.trim_end_matches("<4"))
                .collect::<Vec<_>>()
                .join(" and ")
        );
        if !pip_install(&tools, &missing)? {
            if !apt_usable() {
                bail!(
                    "building the embedded model needs cmake and libclang, and neither pip (python3 -m pip) nor apt-get as root is here to fetch them: install them (Debian/Ubuntu: `apt-get install -y cmake libclang-dev`; macOS: `xcode-select --install` and `brew install cmake`), or run `cargo xtask demo` for the scripted model"
                );
            }
            let packages: Vec<&str> = missing
                .iter()
                .map(|p| {
                    if p.starts_with("cmake") {
                        "cmake"
                    } else {
                        "libclang-dev"
                    }
                })
                .collect();
            apt_install(&packages)?;
        }
    }
    let wheel_bin = wheel_cmake(&tools);
    if !runs(Path::new("cmake")) && runs(&wheel_bin) {
        env.path_prefix
            .extend(wheel_bin.parent().map(Path::to_path_buf));
    }
    if system_libclang().is_none() && has_libclang(&wheel_libclang(&tools)) {
        let dir = wheel_libclang(&tools);
        env.vars
            .push(("LIBCLANG_PATH".to_owned(), dir.display().to_string()));
        // The wheel's libclang has no headers of its own (stddef.h, …): give bindgen the C
        // compiler's.
        if let Some(headers) = compiler_headers() {
            env.vars.push((
                "BINDGEN_EXTRA_CLANG_ARGS".to_owned(),
                format!("-isystem {headers}"),
            ));
        }
    }
    Ok(env)
}

/// The lines of a failed build shown again at the end.
const TAIL_LINES: usize = 60;

/// What to show of one line of `cargo build -vv`: cargo's own steps, and llama.cpp's build
/// progress (cmake's `[ 42%] Building …` lines) once per percent; rustc command lines and
/// the rest of the build scripts' chatter are not shown.
fn shown(line: &str, last_percent: &mut Option<u32>) -> Option<String> {
    let trimmed = line.trim_start();
    if trimmed.starts_with("Compiling ")
        || trimmed.starts_with("Finished ")
        || trimmed.starts_with("error")
    {
        return Some(line.to_owned());
    }
    let rest = line.strip_prefix("[llama-cpp-sys-2 ")?;
    let (_, output) = rest.split_once("] ")?;
    let open = output.find("[")?;
    let close = output[open..].find("%]")? + open;
    let percent: u32 = output[open + 1..close].trim().parse().ok()?;
    if *last_percent == Some(percent) {
        return None;
    }
    *last_percent = Some(percent);
    let what = output[close + 2..].trim();
    Some(format!("  llama.cpp {percent:>3}%  {what}"))
}

/// Shows the progress lines of `stream` (build scripts write to cargo's stdout, cargo to its
/// stderr) and returns its last lines.
fn follow(stream: impl std::io::Read) -> VecDeque<String> {
    let mut tail: VecDeque<String> = VecDeque::with_capacity(TAIL_LINES);
    let mut last_percent = None;
    for line in BufReader::new(stream).lines() {
        let line = line.unwrap_or_default();
        if let Some(text) = shown(&line, &mut last_percent) {
            println!("{text}");
        }
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
    tail
}

/// Runs `command` (a `cargo build`) with `-vv`, showing its progress; on failure the last
/// lines of its output are shown and the error says so.
pub fn build_with_progress(mut command: Command) -> anyhow::Result<()> {
    command
        .arg("-vv")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().context("running cargo build")?;
    let stdout = child.stdout.take().context("cargo's stdout")?;
    let stderr = child.stderr.take().context("cargo's stderr")?;
    let scripts = std::thread::spawn(move || follow(stdout));
    let cargo_tail = follow(stderr);
    let script_tail = scripts.join().unwrap_or_default();
    let status = child.wait()?;
    if !status.success() {
        for line in script_tail.iter().chain(&cargo_tail) {
            eprintln!("{line}");
        }
        bail!("building oi with the `local` feature failed ({status}); its last lines are above");
    }
    Ok(())
}

/// Builds `oi` with the embedded model (release, `--features local`, fetching the build tools
/// and the default model first) and copies it to `dest/oi`, which it returns: a copy of its
/// own, since a later plain release build (another command, another checkout sharing the
/// target folder) replaces `target/release/oi` with one without the model. Cargo's own
/// `CARGO_BUILD_JOBS` limits the build's jobs.
pub fn build_local_oi(target: &Path, dest: &Path) -> anyhow::Result<PathBuf> {
    let build_env = ensure(target)?;
    crate::fetch_model::run(&[])?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    println!("building oi with the embedded model (release; the first build compiles llama.cpp)…");
    let mut build = Command::new(&cargo);
    build.args([
        "build",
        "--release",
        "--package",
        "oi-cli",
        "--features",
        "local",
    ]);
    build_env.apply(&mut build);
    build_with_progress(build)?;
    std::fs::create_dir_all(dest)?;
    let oi = dest.join("oi");
    std::fs::copy(target.join("release").join("oi"), &oi)
        .with_context(|| format!("copying the oi just built into {}", dest.display()))?;
    Ok(oi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libclang_file_names() {
        for name in [
            "libclang.so",
            "libclang.so.1",
            "libclang-14.so.1",
            "libclang.dylib",
        ] {
            assert!(is_libclang(name), "{name}");
        }
        for name in ["libclang-cpp.so.14", "libclangBasic.a", "libclang.a"] {
            assert!(!is_libclang(name), "{name}");
        }
    }

    #[test]
    fn build_progress_lines() {
        let mut last = None;
        let lines = [
            "   Compiling llama-cpp-sys-2 v0.1.160",
            "     Running `rustc --crate-name x`",
            "[llama-cpp-sys-2 0.1.160] cargo:rerun-if-changed=llama.cpp",
            "[llama-cpp-sys-2 0.1.160] [  3%] Building C object ggml/src/ggml.c.o",
            "[llama-cpp-sys-2 0.1.160] [  3%] Building C object ggml/src/ggml-alloc.c.o",
            "[llama-cpp-sys-2 0.1.160] [ 42%] Linking CXX static library libllama.a",
            "    Finished `release` profile [optimized] target(s) in 5m 01s",
        ];
        let shown: Vec<String> = lines.iter().filter_map(|l| shown(l, &mut last)).collect();
        assert_eq!(
            shown,
            [
                "   Compiling llama-cpp-sys-2 v0.1.160",
                "  llama.cpp   3%  Building C object ggml/src/ggml.c.o",
                "  llama.cpp  42%  Linking CXX static library libllama.a",
                "    Finished `release` profile [optimized] target(s) in 5m 01s",
            ]
        );
    }
}
