//! Which paths the hard-deny list protects, and how a target is compared with them:
//! lexically, with glob characters and unknown parts of a word treated as wildcards that
//! could match anything. Targets arrive resolved (`crate::resolve`: magic links, links on
//! disk and links the block makes followed).

use std::path::Path;

/// One component of a path pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Comp {
    /// A name, possibly with glob characters (`*`, `?`, `[...]`).
    Glob(String),
    /// Any number of components, including none (an unknown prefix, or `**`).
    AnyDepth,
}

/// A normalised absolute path pattern: `/` is the empty list.
pub(crate) type Pattern = Vec<Comp>;

/// What a destructive command may not touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Harm {
    /// Deleting: everything protected, the working directory included.
    Delete,
    /// Changing owners or modes recursively: as for deleting, but the working directory itself
    /// is fair game (`chown -R me .` is ordinary).
    Permissions,
}

/// Top-level directories used to test whether a one-component pattern could name one.
const TOP_LEVEL: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib64",
    "media",
    "mnt",
    "nix",
    "opt",
    "proc",
    "root",
    "run",
    "sbin",
    "snap",
    "srv",
    "sys",
    "usr",
    "var",
    "Applications",
    "Library",
    "System",
    "Users",
    "Volumes",
    "private",
];

/// Name prefixes of disk and partition devices under `/dev`.
const DISK_PREFIXES: &[&str] = &[
    "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "md", "dm-", "loop", "nbd",
    "mapper", "root", "mtdblock", "ubi", "zram", "block", "sg", "sr", "nst", "st", "rbd", "zd",
    "bcache", "drbd", "pmem", "ram",
];

/// Disk device names, to test glob patterns against (`/dev/sd*`).
const DISK_EXAMPLES: &[&str] = &[
    "sda",
    "sdb1",
    "hda",
    "vda",
    "xvda",
    "nvme0n1",
    "nvme0n1p1",
    "mmcblk0",
    "disk0",
    "rdisk0",
    "md0",
    "dm-0",
    "loop0",
    "nbd0",
    "root",
    "mapper",
    "disk",
];

/// The home directory and the working directory, as component lists.
#[derive(Debug, Clone, Default)]
pub(crate) struct Places {
    home: Option<Vec<String>>,
    cwd: Option<Vec<String>>,
}

impl Places {
    /// Places from the (absolute) home and working directories.
    pub(crate) fn new(home: Option<&Path>, cwd: Option<&Path>) -> Places {
        let comps = |path: &Path| {
            let text = path.to_string_lossy();
            text.starts_with('/').then(|| literal_components(&text))
        };
        Places {
            home: home.and_then(comps),
            cwd: cwd.and_then(comps),
        }
    }

    /// The home directory as text, if known.
    pub(crate) fn home(&self) -> Option<String> {
        self.home.as_deref().map(join)
    }

    /// The working directory as text, if known.
    pub(crate) fn cwd(&self) -> Option<String> {
        self.cwd.as_deref().map(join)
    }

    /// Whether `matches` (a name test, such as `find -iname`) may hold for the last component
    /// of a protected place: a top-level directory, or a component of the home or working
    /// directory's path.
    pub(crate) fn may_name(&self, matches: &dyn Fn(&str) -> bool) -> bool {
        TOP_LEVEL.iter().any(|name| matches(name))
            || [&self.home, &self.cwd]
                .into_iter()
                .flatten()
                .flatten()
                .any(|name| matches(name))
    }

    /// Why deleting (or re-owning) what `pattern` names would do harm, if it would.
    pub(crate) fn protected(&self, pattern: &Pattern, harm: Harm) -> Option<&'static str> {
        let mut pattern = pattern.clone();
        if pattern
            .last()
            .is_some_and(|c| matches!(c, Comp::Glob(g) if wildcard_all(g)))
        {
            pattern.pop();
        }
        if matches(&pattern, &[]) {
            return Some("the whole filesystem");
        }
        if let Some(home) = &self.home {
            if matches_names(&pattern, home) {
                return Some("your home directory");
            }
            if (1..home.len()).any(|n| matches_names(&pattern, &home[..n])) {
                return Some("a parent of your home directory");
            }
        }
        if let Some(cwd) = &self.cwd {
            if harm == Harm::Delete && matches_names(&pattern, cwd) {
                return Some("the working directory");
            }
            if (1..cwd.len()).any(|n| matches_names(&pattern, &cwd[..n])) {
                return Some("a parent of the working directory");
            }
        }
        let top_level_literal = matches!(pattern.as_slice(), [Comp::Glob(name)] if name != "tmp");
        if top_level_literal || TOP_LEVEL.iter().any(|t| matches(&pattern, &[t])) {
            return Some("a top-level system directory");
        }
        let user_home = match pattern.as_slice() {
            [Comp::Glob(first), _] => glob_match(first, "home") || glob_match(first, "Users"),
            _ => false,
        };
        if user_home || matches(&pattern, &["home", "someone"]) {
            return Some("a user's home directory");
        }
        None
    }
}

/// Whether `pattern` could name a disk or partition device (`/dev/sda`, `/dev/nvme0n1`,
/// `/dev/block/8:0`, `/dev/disk/by-id/…`, an LVM volume `/dev/vg/lv`, …): anything under
/// `/dev` but the devices known not to be disks (`/dev/null`, terminals, `/dev/fd/…`).
pub(crate) fn is_disk(pattern: &Pattern) -> bool {
    let [Comp::Glob(dev), second, rest @ ..] = pattern.as_slice() else {
        return false;
    };
    if dev != "dev" {
        return false;
    }
    match second {
        Comp::AnyDepth => true,
        Comp::Glob(name) if name.contains(['*', '?', '[']) => {
            DISK_EXAMPLES.iter().any(|disk| glob_match(name, disk))
        }
        Comp::Glob(name) => {
            let harmless = NOT_DISKS.contains(&name.as_str())
                || name.starts_with("tty")
                || name.starts_with("pty");
            // A disk's name, or a directory of devices that is not a known harmless one
            // (`/dev/block/…`, `/dev/vg0/root`).
            !harmless
                && (DISK_PREFIXES.iter().any(|prefix| name.starts_with(prefix)) || !rest.is_empty())
        }
    }
}

/// Devices and device directories under `/dev` that are not disks.
const NOT_DISKS: &[&str] = &[
    "null",
    "zero",
    "full",
    "random",
    "urandom",
    "stdin",
    "stdout",
    "stderr",
    "fd",
    "pts",
    "shm",
    "mqueue",
    "tcp",
    "udp",
    "console",
    "ptmx",
    "kmsg",
    "log",
    "snd",
    "dri",
    "input",
    "net",
    "hugepages",
    "cpu",
    "fuse",
    "kvm",
    "uinput",
    "bus",
    "char",
    "usb",
    "serial",
    "v4l",
    "video0",
    "audio",
];

/// Whether a glob component matches every name (`*`, `.*`, `*.*`, `[a-z]*`, `??*`, …).
pub(crate) fn wildcard_all(glob: &str) -> bool {
    let mut rest = String::new();
    let mut in_bracket = false;
    for c in glob.chars() {
        match c {
            '[' => in_bracket = true,
            ']' => in_bracket = false,
            _ if in_bracket => {}
            '*' | '?' | '.' => {}
            other => rest.push(other),
        }
    }
    rest.is_empty() && glob.contains(['*', '?', '['])
}

/// The pattern for `text` (a path as the code would use it), resolved against `base` when it
/// is relative (`None`: an unknown directory). `*` is a glob; `**` and the `unknown` marker
/// character stand for any number of components.
pub(crate) fn pattern(text: &str, base: Option<&Pattern>) -> Pattern {
    let mut out: Pattern = if text.starts_with('/') {
        Vec::new()
    } else {
        base.cloned().unwrap_or_else(|| vec![Comp::AnyDepth])
    };
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if matches!(out.last(), Some(Comp::Glob(_))) {
                    out.pop();
                }
            }
            "**" => out.push(Comp::AnyDepth),
            name if name.starts_with(UNKNOWN) && name.chars().all(|c| c == UNKNOWN) => {
                out.push(Comp::AnyDepth);
            }
            name => out.push(Comp::Glob(name.replace(UNKNOWN, "*"))),
        }
    }
    out
}

/// Stands for an unknown part of a word inside the text given to [`pattern`].
pub(crate) const UNKNOWN: char = '\u{1}';

fn literal_components(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            name => out.push(name.to_owned()),
        }
    }
    out
}

fn join(components: &[String]) -> String {
    format!("/{}", components.join("/"))
}

fn matches_names(pattern: &[Comp], names: &[String]) -> bool {
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    matches(pattern, &names)
}

/// Whether the pattern matches the concrete path `names` (components of an absolute path).
fn matches(pattern: &[Comp], names: &[&str]) -> bool {
    match pattern.split_first() {
        None => names.is_empty(),
        Some((Comp::AnyDepth, rest)) => (0..=names.len()).any(|skip| matches(rest, &names[skip..])),
        Some((Comp::Glob(glob), rest)) => match names.split_first() {
            Some((name, tail)) => glob_match(glob, name) && matches(rest, tail),
            None => false,
        },
    }
}

/// Shell-style glob matching of one name (`*`, `?`, `[...]`, `[!...]`).
pub(crate) fn glob_match(glob: &str, name: &str) -> bool {
    let glob: Vec<char> = glob.chars().collect();
    let name: Vec<char> = name.chars().collect();
    glob_chars(&glob, &name)
}

fn glob_chars(glob: &[char], name: &[char]) -> bool {
    match glob.split_first() {
        None => name.is_empty(),
        Some(('*', rest)) => (0..=name.len()).any(|skip| glob_chars(rest, &name[skip..])),
        Some(('?', rest)) => !name.is_empty() && glob_chars(rest, &name[1..]),
        Some(('[', rest)) => match (rest.iter().position(|c| *c == ']'), name.first()) {
            (Some(end), Some(c)) if end > 0 => {
                let (set, after) = (&rest[..end], &rest[end + 1..]);
                let (negated, set) = match set.split_first() {
                    Some(('!' | '^', set)) => (true, set),
                    _ => (false, set),
                };
                in_set(set, *c) != negated && glob_chars(after, &name[1..])
            }
            _ => name.first() == Some(&'[') && glob_chars(rest, &name[1..]),
        },
        Some((c, rest)) => name.first() == Some(c) && glob_chars(rest, &name[1..]),
    }
}

fn in_set(set: &[char], c: char) -> bool {
    let mut i = 0;
    while i < set.len() {
        if i + 2 < set.len() && set[i + 1] == '-' {
            if (set[i]..=set[i + 2]).contains(&c) {
                return true;
            }
            i += 3;
        } else {
            if set[i] == c {
                return true;
            }
            i += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places() -> Places {
        Places::new(
            Some(Path::new("/home/ada")),
            Some(Path::new("/home/ada/projects/x")),
        )
    }

    #[test]
    fn protected_targets_after_lexical_normalisation() {
        let p = places();
        let cwd = pattern("/home/ada/projects/x", None);
        let check = |text: &str| p.protected(&pattern(text, Some(&cwd)), Harm::Delete);
        for text in [
            "/",
            "//",
            "/./",
            "/usr/..",
            "/*",
            "/home/ada",
            "/home/ada/",
            "/home/ada/*",
            "/home/ada/.*",
            "/home/ada/projects",
            ".",
            "..",
            "../..",
            "*",
            "/usr",
            "/u*",
            "/root",
            "/home/bob",
            "/Users/*",
            "**",
            "\u{1}",
            "\u{1}/",
            "\u{1}/..",
        ] {
            assert!(check(text).is_some(), "{text:?} should be protected");
        }
        for text in [
            "build",
            "./target",
            "/tmp",
            "/tmp/x",
            "/home/ada/projects/x/tmp",
            "/home/ada/.cache",
            "../y",
            "\u{1}/build",
            "/usr/local/lib/thing",
            "**/*.pyc",
        ] {
            assert_eq!(check(text), None, "{text:?} should not be protected");
        }
        assert_eq!(
            p.protected(&cwd, Harm::Permissions),
            None,
            "chown -R of the working directory itself is ordinary"
        );
    }

    #[test]
    fn disks_and_globs() {
        for disk in [
            "/dev/sda",
            "/dev/sda1",
            "/dev/nvme0n1",
            "/dev/sd*",
            "/dev/disk/by-id/x",
            "/dev/mapper/root",
        ] {
            assert!(is_disk(&pattern(disk, None)), "{disk}");
        }
        for other in ["/dev/null", "/dev/tty", "/dev/stdout", "disk.img", "/dev"] {
            assert!(!is_disk(&pattern(other, None)), "{other}");
        }
        assert!(glob_match("[a-c]*", "bin"));
        assert!(!glob_match("[!a-c]*", "bin"));
        assert!(wildcard_all("*") && wildcard_all(".*") && wildcard_all("[a-z]*"));
        assert!(!wildcard_all("*.log") && !wildcard_all("build"));
    }
}
