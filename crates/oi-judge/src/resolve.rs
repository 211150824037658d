//! Where a path written in code leads, as far as oi can tell before the code runs: the judge
//! decides on this, not on the spelling. Components are taken left to right as the
//! kernel does — `.` and `//` vanish, `..` drops the previous component — and a component
//! that completes one of the kernel's magic links (`/proc/<pid>/root`, `…/cwd`, `…/fd/<n>`,
//! `…/map_files/<x>`, `…/exe`, `/dev/fd/<n>`, `/dev/stdin`, …) is replaced by where it
//! leads: the root for this process's `root`, the working directory for its `cwd`, and an
//! unknown place (any path at all) for everything else. So `/proc/self/./root/home/ada`,
//! `//proc/self/root/home/ada` and `/proc/./self/root/home/ada` are `/home/ada`, and
//! `/proc/1/cwd/x` may be anything ending in `x`. Well-known system links (`/var/run` →
//! `/run`, `/bin` → `/usr/bin`, …) give a second reading, so a `..` after one goes where the
//! kernel goes as well as where the text says; so do links that exist on this machine when
//! the block is judged (planted by earlier code), followed on disk.

use crate::places::{Comp, Pattern, UNKNOWN, glob_match, pattern};

/// The most readings one path is followed with; past it, the path is an unknown place.
const MAX_READINGS: usize = 8;

/// Links every Linux system has (merged `/usr`, `/var/run`): a second reading follows them.
const SYSTEM_LINKS: &[(&[&str], &[&str])] = &[
    (&["var", "run"], &["run"]),
    (&["var", "lock"], &["run", "lock"]),
    (&["bin"], &["usr", "bin"]),
    (&["sbin"], &["usr", "sbin"]),
    (&["lib"], &["usr", "lib"]),
    (&["lib32"], &["usr", "lib32"]),
    (&["lib64"], &["usr", "lib64"]),
    (&["libx32"], &["usr", "libx32"]),
];

/// The patterns `text` may name, resolved against `base` (the working directory's pattern;
/// `None`: unknown) — every reading, each normalised and un-aliased.
pub(crate) fn resolve(text: &str, base: Option<&Pattern>) -> Vec<Pattern> {
    resolve_with(text, base, &[])
}

/// As [`resolve`], knowing the links the block makes: a `..` after one of them (or after a
/// link on disk) leaves where the link leads, as the kernel does (`/tmp/d/..` with `/tmp/d` →
/// `/R/work` is `/R`).
pub(crate) fn resolve_with(text: &str, base: Option<&Pattern>, links: &[Link]) -> Vec<Pattern> {
    let unknown_base = vec![Comp::AnyDepth];
    let base = base.unwrap_or(&unknown_base);
    let start = if text.starts_with('/') || text.starts_with(UNKNOWN) {
        Vec::new()
    } else {
        base.clone()
    };
    let mut readings: Vec<Reading> = vec![Reading {
        path: start,
        swallow: false,
    }];
    for part in text.split('/') {
        let mut next = Vec::new();
        for reading in readings {
            reading.step(part, base, links, &mut next);
        }
        next.dedup();
        if next.len() > MAX_READINGS {
            return vec![vec![Comp::AnyDepth]];
        }
        readings = next;
    }
    let mut out: Vec<Pattern> = Vec::new();
    for path in readings
        .into_iter()
        .flat_map(|r| on_disk(&r.path).into_iter().chain([r.path]))
    {
        if !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// Where a literal path leads through links that already exist on this machine (a link
/// planted by earlier code: `/tmp/r` → `/`), followed component by component as the kernel
/// does (a `..` after a link leaves the link's target). `None` when nothing on the way is a
/// link (or the path has globs or unknown parts).
fn on_disk(path: &Pattern) -> Option<Pattern> {
    let names = literal_names(path)?;
    let out = follow_disk(&names)?;
    Some(out).filter(|out| out != path)
}

/// The names of a pattern with no glob and no unknown part.
fn literal_names(path: &Pattern) -> Option<Vec<String>> {
    path.iter()
        .map(|comp| match comp {
            Comp::Glob(name) if !name.contains(['*', '?', '[']) => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// How many links one path may go through on disk before it is an unknown place (the
/// kernel's limit is 40).
const MAX_HOPS: usize = 40;

/// Where `/names…` leads on this machine, following links on disk; `None` when no link was
/// on the way. A link into `/proc` or `/dev/fd` (`/tmp/pc` → `/proc/self/cwd`) leads to an
/// unknown place: what it names depends on the process that follows it, not on oi.
fn follow_disk(names: &[String]) -> Option<Pattern> {
    let mut done: Vec<String> = Vec::new();
    let mut todo: std::collections::VecDeque<String> = names.iter().cloned().collect();
    let mut hops = 0;
    while let Some(name) = todo.pop_front() {
        match name.as_str() {
            "" | "." => continue,
            ".." => {
                done.pop();
                continue;
            }
            _ => {}
        }
        done.push(name);
        if done.first().is_some_and(|d| d == "proc") {
            // The lexical reading knows /proc's magic links; oi's own process does not.
            return (hops > 0).then(|| vec![Comp::AnyDepth]);
        }
        let here = format!("/{}", done.join("/"));
        let Ok(meta) = std::fs::symlink_metadata(&here) else {
            // Does not exist: the rest is read as written.
            for rest in todo.drain(..) {
                match rest.as_str() {
                    "" | "." => {}
                    ".." => {
                        done.pop();
                    }
                    _ => done.push(rest),
                }
            }
            break;
        };
        if !meta.file_type().is_symlink() {
            continue;
        }
        hops += 1;
        let Ok(target) = std::fs::read_link(&here) else {
            return Some(vec![Comp::AnyDepth]);
        };
        let target = target.to_string_lossy().into_owned();
        if hops > MAX_HOPS || magic(&target) {
            let mut out = vec![Comp::AnyDepth];
            out.extend(
                todo.into_iter()
                    .filter(|n| !n.is_empty() && n != ".")
                    .map(Comp::Glob),
            );
            return Some(out);
        }
        done.pop();
        if target.starts_with('/') {
            done.clear();
        }
        for part in target.split('/').rev() {
            todo.push_front(part.to_owned());
        }
    }
    (hops > 0).then(|| done.into_iter().map(Comp::Glob).collect())
}

/// Whether a link's target is in `/proc` or `/dev/fd` (where the kernel's magic links are).
fn magic(target: &str) -> bool {
    let parts: Vec<&str> = target
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    matches!(
        parts.as_slice(),
        ["proc", ..] | ["dev", "fd" | "stdin" | "stdout" | "stderr", ..]
    )
}

/// The working directories changing to `text` from `cwd` may lead to: the normalised text
/// of each reading, `None` for one oi cannot know (an unknown part, a magic link it cannot
/// follow).
pub(crate) fn resolve_dirs(text: &str, cwd: Option<&str>) -> Vec<Option<String>> {
    let base = cwd.map(|c| pattern(c, None));
    if base.is_none() && !text.starts_with('/') {
        return vec![None];
    }
    let mut out = Vec::new();
    for reading in resolve(text, base.as_ref()) {
        let dir = directory_text(&reading);
        if !out.contains(&dir) {
            out.push(dir);
        }
    }
    out
}

/// The text of a directory's pattern, when it has no unknown part.
fn directory_text(pattern: &Pattern) -> Option<String> {
    let mut out = String::new();
    for comp in pattern {
        match comp {
            Comp::Glob(name) => {
                out.push('/');
                out.push_str(name);
            }
            Comp::AnyDepth => return None,
        }
    }
    Some(if out.is_empty() { "/".to_owned() } else { out })
}

/// One way of reading a path so far.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reading {
    /// The components so far.
    path: Pattern,
    /// The next component names the link (`/proc/self/fd/<n>`): it leads to an unknown place.
    swallow: bool,
}

impl Reading {
    /// Takes one more component; the readings it leads to go to `out`.
    fn step(mut self, part: &str, base: &Pattern, made: &[Link], out: &mut Vec<Reading>) {
        match part {
            "" | "." => out.push(self),
            ".." if self.swallow => out.push(unknown()),
            ".." => {
                // After a link, `..` leaves where the link leads.
                for link in made.iter().filter(|l| l.at == self.path) {
                    let leads = if link.to.is_empty() {
                        vec![vec![Comp::AnyDepth]]
                    } else {
                        link.to.clone()
                    };
                    for mut to in leads {
                        if matches!(to.last(), Some(Comp::Glob(_))) {
                            to.pop();
                        }
                        out.push(Reading {
                            path: to,
                            swallow: false,
                        });
                    }
                }
                if let Some(mut real) = literal_names(&self.path)
                    .filter(|n| !n.is_empty() && n[0] != "proc")
                    .and_then(|n| follow_disk(&n))
                {
                    if matches!(real.last(), Some(Comp::Glob(_))) {
                        real.pop();
                    }
                    out.push(Reading {
                        path: real,
                        swallow: false,
                    });
                }
                if matches!(self.path.last(), Some(Comp::Glob(_))) {
                    self.path.pop();
                }
                out.push(self);
            }
            _ if self.swallow => out.push(unknown()),
            name => {
                let comp = if name == "**" || name.chars().all(|c| c == UNKNOWN) {
                    Comp::AnyDepth
                } else {
                    Comp::Glob(name.replace(UNKNOWN, "*"))
                };
                self.path.push(comp);
                let aliases = links(&self.path, base);
                let literal_too = aliases.iter().all(|a| a.literal_too);
                for alias in aliases {
                    out.push(alias.reading);
                }
                if literal_too {
                    out.push(self);
                }
            }
        }
    }
}

/// A reading that leads to an unknown place.
fn unknown() -> Reading {
    Reading {
        path: vec![Comp::AnyDepth],
        swallow: false,
    }
}

/// Where a path ending in a link leads.
struct Alias {
    reading: Reading,
    /// Whether the path may also be read as written (its last component is a glob that may
    /// name something else, the link an ordinary symlink, or the prefix unknown).
    literal_too: bool,
}

/// The links `path` (just grown by one component) may end in. After an unknown part any
/// link name may complete a magic link (`$X/root` with `X=/proc/1`).
fn links(path: &Pattern, base: &Pattern) -> Vec<Alias> {
    let Some((Comp::Glob(last), before)) = path.split_last() else {
        return Vec::new();
    };
    let behind_unknown = before.contains(&Comp::AnyDepth);
    let exact = !last.contains(['*', '?', '[']) && !behind_unknown;
    let names = |n: &str| glob_match(last, n);
    let anywhere = vec![Comp::AnyDepth];
    let mut out = Vec::new();
    let mut lead = |to: Pattern, swallow: bool| {
        out.push(Alias {
            reading: Reading {
                path: if swallow { anywhere.clone() } else { to },
                swallow,
            },
            literal_too: !exact,
        });
    };
    // `/proc/P/L` or `/proc/P/task/T/L`.
    let task_link = path.len() == 5 && matches!(&path[2], Comp::Glob(t) if glob_match(t, "task"));
    if behind_unknown || (first_is(path, "proc") && (path.len() == 3 || task_link)) {
        let this = !behind_unknown
            && matches!(&path[1], Comp::Glob(p) if p == "self" || p == "thread-self");
        if names("root") {
            lead(if this { Vec::new() } else { anywhere.clone() }, false);
        }
        if names("cwd") {
            lead(if this { base.clone() } else { anywhere.clone() }, false);
        }
        if names("exe") {
            lead(anywhere.clone(), false);
        }
        if names("fd") || names("map_files") {
            lead(Vec::new(), true);
        }
    }
    if behind_unknown || (first_is(path, "dev") && path.len() == 2) {
        if names("fd") {
            lead(Vec::new(), true);
        }
        if ["stdin", "stdout", "stderr"].iter().any(|n| names(n)) {
            lead(anywhere.clone(), false);
        }
    }
    for (from, to) in SYSTEM_LINKS {
        let literal = path.len() == from.len()
            && path
                .iter()
                .zip(from.iter())
                .all(|(c, f)| matches!(c, Comp::Glob(g) if g == f));
        if literal {
            out.push(Alias {
                reading: Reading {
                    path: to.iter().map(|t| Comp::Glob((*t).to_owned())).collect(),
                    swallow: false,
                },
                literal_too: true,
            });
        }
    }
    out
}

/// Whether the first component of `path` may be `name`.
fn first_is(path: &Pattern, name: &str) -> bool {
    matches!(path.first(), Some(Comp::Glob(g)) if glob_match(g, name))
}

/// A link the block makes: where it is, and where it may lead (empty: anywhere).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Link {
    /// Where the link is.
    pub(crate) at: Pattern,
    /// Where it may lead; empty when oi cannot tell.
    pub(crate) to: Vec<Pattern>,
}

/// The link at `at` to the path written `to` (relative to the link's directory; `None`:
/// unknown).
pub(crate) fn link(at: Pattern, to: Option<&str>) -> Link {
    let parent: Pattern = at[..at.len().saturating_sub(1)].to_vec();
    let to = to
        .map(|text| resolve(text, Some(&parent)))
        .unwrap_or_default();
    Link { at, to }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(patterns: &[Pattern]) -> Vec<String> {
        patterns
            .iter()
            .map(|p| {
                let parts: Vec<String> = p
                    .iter()
                    .map(|c| match c {
                        Comp::Glob(g) => g.clone(),
                        Comp::AnyDepth => "**".to_owned(),
                    })
                    .collect();
                format!("/{}", parts.join("/"))
            })
            .collect()
    }

    #[test]
    fn spellings_of_proc_root_resolve_to_the_path_the_kernel_reaches() {
        let cwd = pattern("/home/ada/x", None);
        let resolved = |text: &str| shown(&resolve(text, Some(&cwd)));
        for text in [
            "/proc/self/root/home/ada",
            "/proc/self/./root/home/ada",
            "//proc/self/root/home/ada",
            "/./proc/self/root/home/ada",
            "/proc/./self/root/home/ada",
            "/proc//self//root//home//ada/",
            "/proc/thread-self/root/home/ada",
            "/proc/self/task/7/root/home/ada",
            "/proc/self/root/../../home/ada",
            "/proc/self/root/proc/self/root/home/ada",
            "/proc/x/../self/root/home/ada",
        ] {
            assert_eq!(resolved(text), ["/home/ada"], "{text}");
        }
        assert_eq!(resolved("/proc/self/cwd/.."), ["/home/ada"]);
        assert_eq!(resolved("/proc/self/cwd"), ["/home/ada/x"]);
        for unknown in [
            "/proc/1/root/home/ada",
            "/proc/1/cwd/home/ada",
            "/proc/self/fd/3/home/ada",
            "/proc/self/map_files/1-2/home/ada",
            "/dev/fd/3/home/ada",
        ] {
            assert_eq!(resolved(unknown), ["/**/home/ada"], "{unknown}");
        }
        assert_eq!(
            resolved("/proc/\u{1}/root/home/ada"),
            ["/**/home/ada", "/proc/**/root/home/ada"]
        );
        assert_eq!(resolved("/dev/fd/3"), ["/**"]);
        assert_eq!(resolved("/dev/stdin/.."), ["/**"]);
        assert_eq!(resolved("/proc/*/root"), ["/**"]);
        assert_eq!(
            resolved("\u{1}/root/home/ada"),
            ["/**/home/ada", "/**/root/home/ada"]
        );
        assert_eq!(resolved("/dev/s*"), ["/**", "/dev/s*"]);
        assert_eq!(
            resolved("/var/run/../home/ada"),
            ["/home/ada", "/var/home/ada"]
        );
        assert_eq!(resolved("build/../out"), ["/home/ada/x/out"]);
        assert_eq!(resolved("/proc/cpuinfo"), ["/proc/cpuinfo"]);
    }

    #[test]
    fn links_planted_on_disk_are_followed() {
        let dir = tempfile_dir();
        let link = format!("{dir}/r");
        std::os::unix::fs::symlink("/", &link).unwrap();
        let resolved = shown(&resolve(&format!("{link}/home/ada"), None));
        std::fs::remove_file(&link).unwrap();
        std::fs::remove_dir(&dir).unwrap();
        assert_eq!(
            resolved,
            ["/home/ada".to_owned(), format!("{link}/home/ada")]
        );
    }

    #[test]
    fn dot_dot_after_a_link_on_disk_leaves_its_target_and_links_into_proc_are_unknown() {
        let dir = tempfile_dir();
        std::fs::create_dir_all(format!("{dir}/work")).unwrap();
        std::fs::create_dir_all(format!("{dir}/a/b")).unwrap();
        std::os::unix::fs::symlink(format!("{dir}/work"), format!("{dir}/a/b/d")).unwrap();
        std::os::unix::fs::symlink("/proc/self/cwd", format!("{dir}/pc")).unwrap();
        let up = shown(&resolve(&format!("{dir}/a/b/d/../home"), None));
        let proc = shown(&resolve(&format!("{dir}/pc/home"), None));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(up.contains(&format!("{dir}/home")), "{up:?}");
        assert!(proc.contains(&"/**/home".to_owned()), "{proc:?}");
    }

    #[test]
    fn dot_dot_after_a_link_the_block_makes_leaves_its_target() {
        let made = [link(pattern("/tmp/a/b/d", None), Some("/r/work"))];
        let resolved = shown(&resolve_with("/tmp/a/b/d/../home", None, &made));
        assert!(resolved.contains(&"/r/home".to_owned()), "{resolved:?}");
    }

    /// A fresh directory under the system's temporary directory (its real path).
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    fn tempfile_dir() -> String {
        let base = std::fs::canonicalize(std::env::temp_dir()).unwrap();
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = base.join(format!("oi-judge-resolve-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.display().to_string()
    }

    #[test]
    fn directories_changed_to_are_followed_only_when_known() {
        let dir = |text: &str, cwd: Option<&str>| resolve_dirs(text, cwd);
        let known = |texts: &[&str]| -> Vec<Option<String>> {
            texts.iter().map(|t| Some((*t).to_owned())).collect()
        };
        assert_eq!(dir("build", Some("/w")), known(&["/w/build"]));
        assert_eq!(dir("..", Some("/w")), known(&["/"]));
        assert_eq!(dir("/proc/self/./root/home", Some("/w")), known(&["/home"]));
        assert_eq!(dir("/proc/self/cwd/..", Some("/w/x")), known(&["/w"]));
        assert_eq!(dir("/proc/1/root/home", Some("/w")), [None]);
        assert_eq!(dir("/var/run/..", Some("/w")), known(&["/", "/var"]));
        assert_eq!(dir("build", None), [None]);
        assert_eq!(dir("/tmp", None), known(&["/tmp"]));
    }
}
