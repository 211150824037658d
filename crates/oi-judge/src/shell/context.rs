//! The walker as the [`Context`] a command is judged in: where its paths point, what it may
//! block, and how nested code is read.

use crate::context::{Context, Script};
use crate::output::Output;
use crate::places::{self, Pattern, Places};
use crate::programs;
use crate::resolve;
use crate::scan::Limit;
use crate::word::Field;

use super::walker::{MAX_ALTERNATIVES, Walker};

impl Context for Walker<'_, '_> {
    /// Records a hard-deny reason.
    fn block(&mut self, reason: String) {
        self.scan.block(reason);
    }

    /// The path patterns `field` may name, relative to every directory the script may be in.
    fn targets(&self, field: &Field) -> Vec<Pattern> {
        self.targets_text(&field.pattern_text())
    }

    /// As [`Walker::targets`], for text with [`places::UNKNOWN`] markers: resolved (see
    /// [`resolve`]) against every directory the script may be in.
    fn targets_text(&self, text: &str) -> Vec<Pattern> {
        let mut out: Vec<Pattern> = Vec::new();
        for cwd in &self.env.cwds {
            let base = cwd.as_deref().map(|c| places::pattern(c, None));
            for pattern in resolve::resolve_with(text, base.as_ref(), self.scan.known_links()) {
                if !out.contains(&pattern) {
                    out.push(pattern);
                }
            }
        }
        self.scan.through_links(out)
    }

    /// The working directory, when only one is possible.
    fn cwd(&self) -> Option<String> {
        match self.env.cwds.as_slice() {
            [Some(cwd)] => Some(cwd.clone()),
            _ => None,
        }
    }

    /// `cd`/`pushd`/`popd`: the script may now be in the new directory, or (if `cd` failed)
    /// still in the old one.
    fn change_directory(&mut self, target: Option<&Field>) {
        // `cd` alone goes to `$HOME` as the block set it (`HOME=/x; cd`).
        let home = self.known_var("HOME");
        // With `CDPATH` set, `cd NAME` may go to `DIR/NAME` for any of its directories.
        let cdpath = self.env.vars.contains_key("CDPATH");
        let new: Vec<Option<String>> = match target.map(Field::pattern_text) {
            None => vec![home],
            Some(text) if text == "-" => vec![None],
            Some(text) if cdpath && !text.starts_with(['/', '.']) => vec![None],
            Some(text) => self
                .env
                .cwds
                .iter()
                .flat_map(|cwd| resolve::resolve_dirs(&text, cwd.as_deref()))
                .collect(),
        };
        for dir in &new {
            if !self.env.cwds.contains(dir) {
                self.env.cwds.push(dir.clone());
            }
        }
        if self.env.cwds.len() > MAX_ALTERNATIVES {
            self.env.cwds = vec![None];
        }
        self.last_cd = Some(new);
    }

    /// Reads `source` as a nested shell script (`sh -c`, `eval`, a here-document fed to `bash`),
    /// with unknown parts of `script` as unknown variables and `positional` as `$0`, `$1`, ….
    fn nested_shell(&mut self, script: &Field, positional: &[Field]) -> Output {
        let mut env = self.env.clone();
        if !positional.is_empty() {
            env = env.with_positional(positional);
        }
        self.scan.shell(&script.rendered(), env)
    }

    /// Reads `code` as nested Python (`python -c`).
    fn nested_python(&mut self, code: &Field) {
        let cwds = self.env.cwds.clone();
        self.scan.python(&code.rendered(), &cwds);
    }

    /// Reads `code` as nested code of another language (`perl -e`, `node -e`).
    fn nested_foreign(&mut self, code: &Field) {
        self.scan.foreign(&code.rendered());
    }

    fn places(&self) -> &Places {
        self.scan.places
    }

    fn inspect(&mut self, argv: &[Field], stdin: &Output) -> Output {
        programs::inspect(self, argv, stdin)
    }

    fn inspect_in(&mut self, dir: &Field, argv: &[Field], stdin: &Output) -> Output {
        let text = dir.pattern_text();
        let saved = (self.env.cwds.clone(), self.last_cd.clone());
        let mut cwds: Vec<Option<String>> = Vec::new();
        for cwd in &saved.0 {
            for new in resolve::resolve_dirs(&text, cwd.as_deref()) {
                if !cwds.contains(&new) {
                    cwds.push(new);
                }
            }
        }
        self.env.cwds = cwds;
        let output = programs::inspect(self, argv, stdin);
        (self.env.cwds, self.last_cd) = saved;
        output
    }

    fn link(&mut self, at: &Field, to: Option<&Field>) {
        let at = self.targets(at);
        let to = to.and_then(Field::known);
        self.scan.link(at, to.as_deref());
    }

    fn unsure(&mut self, what: &'static str) {
        self.scan.exceed(Limit::Dynamic(what));
    }

    fn unknown_program(&mut self, args: &[Field], stdin: &Output) {
        if self.scan.suffixing {
            return;
        }
        self.scan.suffixing = true;
        self.scan.speculative += 1;
        for arg in args {
            self.scan.speculative(&arg.rendered(), &self.env);
        }
        if let Output::Literal(text) = stdin {
            self.scan.speculative(text, &self.env);
        }
        for at in 0..args.len() {
            if !self.scan.charge(args.len() - at) {
                break;
            }
            programs::inspect(self, &args[at..], &Output::Nothing);
        }
        self.scan.speculative -= 1;
        self.scan.suffixing = false;
    }

    fn run_script(&mut self, file: &Field, language: Script) {
        self.script(file, language);
    }

    fn file_text(&self, file: &Field) -> Option<String> {
        self.file_content(file)
    }

    fn wrote(&mut self, file: &Field, content: Option<String>) {
        self.record_write(file, content, false);
    }
}
