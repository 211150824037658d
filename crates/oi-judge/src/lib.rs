//! # oi-judge
//!
//! oi's approval judge: whether a code block runs, is asked about, or is blocked. It
//! implements [`oi_core::Judge`]; `oi-config` installs it in every interpreter it builds.
//!
//! Order of precedence: the hard-deny list (recursive deletes of `/`, of top-level system
//! directories, of home directories or of the working directory and its parents; formatting,
//! wiping or overwriting a disk; fork bombs; decoded payloads run by a shell) blocks even with
//! `auto_run`, unless the user turned `hard_deny` off explicitly; then `deny` rules; then the
//! `never-run` policy; then `allow` rules (run without asking); then the policy (`auto` runs,
//! `always-ask` asks).
//!
//! Shell and Python are parsed (tree-sitter), not matched as text: see [`allow`] for what an
//! allow rule approves, `shell` and `python` for how code is read for the hard-deny list and
//! deny rules. The hard-deny list is a seat belt against mistakes and obvious disguises; the
//! sandbox (`--sandbox`) is the wall.

mod allow;
mod context;
mod effects_in_code;
mod env;
mod escapes;
mod foreign;
mod ipython;
mod links;
mod output;
mod places;
mod programs;
mod python;
mod resolve;
mod scan;
mod shell;
mod word;

use std::path::Path;
use std::sync::Arc;

use oi_core::languages::{self, LanguageKind};
use oi_core::{ApprovalPolicy, Judge, Rules, Verdict};

use env::Env;
use output::Output;
use places::Places;
use scan::{Readers, Reading, Scan};
use word::Field;

/// oi's judge: the hard-deny list, deny rules, the policy and allow rules, in that order.
#[derive(Debug, Clone, Copy, Default)]
pub struct RulesJudge;

/// oi's judge, ready to hand to an interpreter.
pub fn judge() -> Arc<dyn Judge> {
    Arc::new(RulesJudge)
}

impl Judge for RulesJudge {
    fn judge(&self, rules: &Rules, language: &str, code: &str) -> Verdict {
        verdict(rules, language, code)
    }
}

/// The verdict on `code` in `language` under `rules`. A block oi cannot read within its
/// budget (time, memory, nesting) is "cannot tell": asked about, or blocked under `auto_run`.
pub fn verdict(rules: &Rules, language: &str, code: &str) -> Verdict {
    // The language's names are oi-core's table: `sh`, `zsh` … read as the shell, `py` as Python.
    let kind = languages::kind(language);
    let reading = read(kind, code, rules.home.as_deref(), rules.cwd.as_deref());
    if rules.hard_deny {
        if let Some(reason) = reading.danger {
            return Verdict::Block(format!(
                "oi blocked this code: {reason}. This is on oi's hard-deny list, which holds even with auto_run; nothing was run."
            ));
        }
    }
    if let Some(rule) = rules.deny.iter().find(|rule| {
        !rule.is_empty()
            && (code.contains(rule.as_str())
                || reading.commands.iter().any(|c| c.contains(rule.as_str())))
    }) {
        return Verdict::Block(format!(
            "oi blocked this code: it matches the deny rule `{rule}`; nothing was run."
        ));
    }
    if rules.policy == ApprovalPolicy::NeverRun {
        return Verdict::Block(
            "oi did not run this code: the approval policy is never-run.".to_owned(),
        );
    }
    if let Some(reason) = reading
        .unsure
        .filter(|_| rules.hard_deny || !rules.deny.is_empty())
    {
        // Cannot tell: a person decides, or nothing runs when nobody would be asked.
        return match rules.policy {
            ApprovalPolicy::Auto => Verdict::Block(format!(
                "oi blocked this code: oi cannot tell what it does, because {reason}; with auto_run nobody would be asked, so nothing was run. Write it more simply, or run it with approval."
            )),
            _ => Verdict::Ask,
        };
    }
    // Allow rules approve shell blocks only.
    if kind == LanguageKind::Shell && allow::allowed(code, &rules.allow) {
        return Verdict::Run;
    }
    match rules.policy {
        ApprovalPolicy::Auto => Verdict::Run,
        _ => Verdict::Ask,
    }
}

/// Reads `code` statically: shell and Python are parsed; other languages' string literals are
/// read as shell commands.
fn read(kind: LanguageKind, code: &str, home: Option<&Path>, cwd: Option<&Path>) -> Reading {
    let places = Places::new(home, cwd);
    let first = read_once(kind, code, &places, Vec::new());
    if first.links.is_empty() || first.danger.is_some() {
        return first;
    }
    // The block makes links: read it again with them known from the start.
    let second = read_once(kind, code, &places, first.links);
    Reading {
        danger: second.danger,
        commands: first.commands,
        unsure: first.unsure.or(second.unsure),
        links: second.links,
    }
}

/// One reading of `code`, knowing the links `links` the block makes.
fn read_once(kind: LanguageKind, code: &str, places: &Places, links: Vec<links::Link>) -> Reading {
    let mut scan = Scan::new(places, &Languages).with_links(links);
    match kind {
        LanguageKind::Shell => {
            let env = Env::new(places);
            scan.shell(code, env);
        }
        LanguageKind::Python => {
            scan.python(code, &[places.cwd()]);
            // The session also runs IPython's `!cmd` and `%magic` lines: read them too.
            ipython::read(&mut scan, code);
        }
        LanguageKind::Other => scan.foreign(code),
    }
    scan.finish()
}

/// The readers of every language oi reads, for code nested in code.
struct Languages;

impl Readers for Languages {
    fn shell(&self, scan: &mut Scan, source: &str, env: Env) -> Output {
        shell::read(scan, source, env)
    }

    fn argv(&self, scan: &mut Scan, argv: &[Field], env: Env) {
        shell::read_argv(scan, argv, env);
    }

    fn python(&self, scan: &mut Scan, source: &str, cwds: &[Option<String>]) {
        python::read(scan, source, cwds);
    }

    fn foreign(&self, scan: &mut Scan, source: &str) {
        foreign::read(scan, source);
    }
}

/// Why `code` is on the hard-deny list, if it is.
pub fn hard_denied(
    language: &str,
    code: &str,
    home: Option<&Path>,
    cwd: Option<&Path>,
) -> Option<String> {
    read(languages::kind(language), code, home, cwd).danger
}

#[cfg(test)]
mod tests;
