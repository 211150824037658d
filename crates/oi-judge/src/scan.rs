//! One static reading of a code block: the first hard-deny reason found, and every shell
//! command seen, normalised (for deny rules). Shell, Python and other languages' readers all
//! report here, and hand nested code (`sh -c`, `eval`, `os.system`, …) back to it.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::env::Env;
use crate::links::{self, Link, MAX_LINKS};
use crate::output::Output;
use crate::places::Places;
use crate::word::Field;

/// The readers of each language, for code nested in code (implemented at the top of the
/// crate, which knows them all, so that no reader depends on another).
pub(crate) trait Readers {
    /// Reads a shell script.
    fn shell(&self, scan: &mut Scan, source: &str, env: Env) -> Output;
    /// Reads one command given as an argument vector.
    fn argv(&self, scan: &mut Scan, argv: &[Field], env: Env);
    /// Reads Python code started in one of `cwds`.
    fn python(&self, scan: &mut Scan, source: &str, cwds: &[Option<String>]);
    /// Reads code in another language.
    fn foreign(&self, scan: &mut Scan, source: &str);
}

/// How deep nested code (`eval`, `sh -c`, `os.system`, …) is followed before oi gives up and
/// blocks the block.
const MAX_DEPTH: usize = 8;

/// How deeply a syntax tree may nest (subshells, substitutions, parentheses) before oi blocks
/// the block instead of reading it (its readers recurse along the tree).
const MAX_TREE_DEPTH: usize = 100;

/// How many commands one block may have before oi gives up reading it and blocks it.
const MAX_STEPS: usize = 100_000;

/// The judge's budget for one block: units of work (a command, a syntax node, a byte of an
/// expanded value each cost one), summed over all nested code.
const MAX_WORK: u64 = 8_000_000;

/// The longest value (in characters) a shell word or variable is followed to; past it, oi
/// cannot tell what the block does (`X=$X$X` doubling).
pub(crate) const MAX_VALUE_LEN: usize = 64 * 1024;

/// The most source (in bytes, nested code included) one block may hand the parsers: a
/// 900 KB `a|a|…` pipeline took 6 s to read (the parse itself is not interruptible).
const MAX_SOURCE: usize = 128 * 1024;

/// The most time one reading may take, checked as work is counted: a backstop for work the
/// counter does not see.
const MAX_TIME: Duration = Duration::from_secs(1);

/// Which of the judge's limits a reading ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// Too much work (expansion, commands, nodes).
    Work,
    /// A value grew longer than [`MAX_VALUE_LEN`].
    Length,
    /// Too much source.
    Size,
    /// Too much time.
    Time,
    /// Code that reaches what it runs by a name computed at run time (what it does).
    Dynamic(&'static str),
}

impl Limit {
    /// Why oi cannot tell what the block does.
    fn reason(self) -> String {
        match self {
            Limit::Work => format!(
                "reading it takes more than oi's judge may spend on one block ({MAX_WORK} units of work)"
            ),
            Limit::Length => format!(
                "a value it builds grows past {MAX_VALUE_LEN} characters, longer than oi's judge follows"
            ),
            Limit::Size => format!(
                "it (with the code it nests) is larger than the {MAX_SOURCE} bytes oi's judge reads"
            ),
            Limit::Dynamic(what) => format!("it {what}, which oi cannot follow before it runs"),
            Limit::Time => format!(
                "reading it takes longer than the {} ms oi's judge may spend on one block",
                MAX_TIME.as_millis()
            ),
        }
    }
}

/// What a reading found.
#[derive(Debug, Default)]
pub(crate) struct Reading {
    /// Why the block is on the hard-deny list, if it is.
    pub(crate) danger: Option<String>,
    /// Every shell command seen: its words after quote removal and expansion, space-separated.
    pub(crate) commands: Vec<String>,
    /// Why oi cannot tell what the block does, when the judge's budget ran out before the
    /// end of the reading (then `danger` and `commands` are incomplete).
    pub(crate) unsure: Option<String>,
    /// The links the block makes.
    pub(crate) links: Vec<Link>,
}

/// The state of one reading.
pub(crate) struct Scan<'p> {
    /// The protected places.
    pub(crate) places: &'p Places,
    readers: &'p dyn Readers,
    reading: Reading,
    depth: usize,
    steps: usize,
    work: Cell<u64>,
    source: usize,
    limit: Cell<Option<Limit>>,
    started: Instant,
    /// Links known before this reading (found by an earlier one).
    known_links: Vec<Link>,
    /// How many speculative readings enclose the current one (text that may or may not be
    /// code: an unknown program's arguments, text piped into it): what they find dangerous
    /// counts, what they cannot read does not.
    pub(crate) speculative: usize,
    /// Whether an unknown program's argument suffixes are being read (not again inside).
    pub(crate) suffixing: bool,
}

impl<'p> Scan<'p> {
    /// A new reading against `places`, nested code read by `readers`.
    pub(crate) fn new(places: &'p Places, readers: &'p dyn Readers) -> Scan<'p> {
        Scan {
            places,
            readers,
            reading: Reading::default(),
            depth: 0,
            steps: 0,
            work: Cell::new(0),
            source: 0,
            limit: Cell::new(None),
            started: Instant::now(),
            known_links: Vec::new(),
            speculative: 0,
            suffixing: false,
        }
    }

    /// The links known before this reading.
    pub(crate) fn known_links(&self) -> &[Link] {
        &self.known_links
    }

    /// Reads `text` that may be code of some kind (an argument of a program oi does not know,
    /// text fed to one): as a shell script, each line from its first letter on (`!rm -rf ~`
    /// for ed and vim, `.shell rm -rf ~` for sqlite3), and its string literals as shell
    /// (`system("rm -rf ~")` for awk). Only what is found dangerous counts.
    pub(crate) fn speculative(&mut self, text: &str, env: &Env) {
        if !text.contains(|c: char| c.is_whitespace() || ";&|()<>`$!{}".contains(c)) {
            return;
        }
        self.speculative += 1;
        let suffixing = std::mem::replace(&mut self.suffixing, false);
        self.shell(text, env.clone());
        let lines: String = text
            .lines()
            .filter_map(|line| {
                let at = line.find(|c: char| c.is_ascii_alphabetic())?;
                (at > 0).then(|| &line[at..])
            })
            .collect::<Vec<_>>()
            .join("\n");
        if !lines.is_empty() {
            self.shell(&lines, env.clone());
        }
        if text.contains(['"', '\'', '`']) {
            self.foreign(text);
        }
        self.suffixing = suffixing;
        self.speculative -= 1;
    }

    /// A new reading that knows the links `known` from the start.
    pub(crate) fn with_links(mut self, known: Vec<Link>) -> Scan<'p> {
        self.known_links = known;
        self
    }

    /// Records a link the block makes at each of `at` to `to` (as written; `None`: unknown).
    /// A link at a place oi cannot tell may make any path lead anywhere.
    pub(crate) fn link(&mut self, at: Vec<crate::places::Pattern>, to: Option<&str>) {
        for at in at {
            if at.contains(&crate::places::Comp::AnyDepth) || self.reading.links.len() >= MAX_LINKS
            {
                self.exceed(Limit::Dynamic(
                    "makes a link at a place oi cannot tell, through which any path may lead anywhere",
                ));
                return;
            }
            let link = links::link(at, to);
            if !self.reading.links.contains(&link) {
                self.reading.links.push(link);
            }
        }
    }

    /// `patterns` with paths through the block's links also read as where they lead.
    pub(crate) fn through_links(
        &self,
        patterns: Vec<crate::places::Pattern>,
    ) -> Vec<crate::places::Pattern> {
        links::through(&self.known_links, patterns)
    }

    /// What was found.
    pub(crate) fn finish(self) -> Reading {
        let mut reading = self.reading;
        reading.unsure = self.limit.get().map(Limit::reason);
        reading
    }

    /// Counts `units` of work; false once the budget is spent (then readers stop).
    pub(crate) fn charge(&self, units: usize) -> bool {
        if self.limit.get().is_some() {
            return false;
        }
        let before = self.work.get();
        let work = before.saturating_add(units as u64);
        self.work.set(work);
        if work > MAX_WORK {
            self.exceed(Limit::Work);
            return false;
        }
        if (before >> 14) != (work >> 14) && self.started.elapsed() > MAX_TIME {
            self.exceed(Limit::Time);
            return false;
        }
        true
    }

    /// Records that the reading ran into `limit` (the first one counts).
    pub(crate) fn exceed(&self, limit: Limit) {
        if self.speculative > 0 && matches!(limit, Limit::Dynamic(_)) {
            return;
        }
        if self.limit.get().is_none() {
            self.limit.set(Some(limit));
        }
    }

    /// Counts `source` about to be parsed; false once the block's code is too large.
    fn take_source(&mut self, source: &str) -> bool {
        self.source = self.source.saturating_add(source.len());
        if self.source > MAX_SOURCE {
            self.exceed(Limit::Size);
            return false;
        }
        self.charge(source.len())
    }

    /// Records a hard-deny reason (the first one wins).
    pub(crate) fn block(&mut self, reason: String) {
        if self.reading.danger.is_none() {
            self.reading.danger = Some(reason);
        }
    }

    /// Records a command's normalised words.
    pub(crate) fn note_command(&mut self, argv: &[Field]) {
        let words: Vec<String> = argv.iter().map(Field::shown).collect();
        self.reading.commands.push(words.join(" "));
    }

    /// Counts one command; false (and a block) once the block is too big to read.
    pub(crate) fn step(&mut self) -> bool {
        if !self.charge(1) {
            return false;
        }
        self.steps += 1;
        if self.steps == MAX_STEPS {
            self.block(format!(
                "it has more than {MAX_STEPS} commands, too many for oi to check"
            ));
        }
        self.steps < MAX_STEPS
    }

    /// Reads a shell script; nested ones count towards the depth limit.
    pub(crate) fn shell(&mut self, source: &str, env: Env) -> Output {
        if !self.take_source(source) || !self.enter() {
            return Output::Unknown;
        }
        let readers = self.readers;
        let suffixing = std::mem::replace(&mut self.suffixing, false);
        // The shell removes backslash-newline before it splits words (`r\⏎m -rf ~` is
        // `rm -rf ~`); tree-sitter keeps it inside a word. Outside single quotes that is
        // what runs, so the joined script is read as well, and what either reading finds
        // counts.
        let joined = source.contains("\\\n").then(|| source.replace("\\\n", ""));
        let output = match &joined {
            Some(joined) if self.take_source(joined) => {
                readers.shell(self, source, env.clone());
                readers.shell(self, joined, env)
            }
            _ => readers.shell(self, source, env),
        };
        self.suffixing = suffixing;
        self.depth -= 1;
        output
    }

    /// Reads one command given as an argument vector (from Python's `subprocess.run([...])`),
    /// run in one of `cwds`.
    pub(crate) fn argv(&mut self, argv: &[Field], cwds: &[Option<String>]) {
        if !self.charge(argv.len()) || !self.enter() {
            return;
        }
        let env = Env::in_dirs(self.places, cwds);
        let readers = self.readers;
        readers.argv(self, argv, env);
        self.depth -= 1;
    }

    /// Reads Python code started in one of `cwds`.
    pub(crate) fn python(&mut self, source: &str, cwds: &[Option<String>]) {
        if !self.take_source(source) || !self.enter() {
            return;
        }
        let readers = self.readers;
        readers.python(self, source, cwds);
        self.depth -= 1;
    }

    /// Reads code in another language (the shell commands in its string literals).
    pub(crate) fn foreign(&mut self, source: &str) {
        if !self.take_source(source) || !self.enter() {
            return;
        }
        let readers = self.readers;
        readers.foreign(self, source);
        self.depth -= 1;
    }

    /// Blocks (and returns true) when the tree under `root` nests deeper than oi reads.
    pub(crate) fn too_deep(&mut self, root: tree_sitter::Node) -> bool {
        let mut cursor = root.walk();
        let mut depth = 0;
        loop {
            if !self.charge(1) {
                return true;
            }
            if depth > MAX_TREE_DEPTH {
                self.block(format!(
                    "it nests more than {MAX_TREE_DEPTH} levels deep, too deep for oi to check"
                ));
                return true;
            }
            if cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            while !cursor.goto_next_sibling() {
                if depth == 0 || !cursor.goto_parent() {
                    return false;
                }
                depth -= 1;
            }
        }
    }

    fn enter(&mut self) -> bool {
        if self.depth >= MAX_DEPTH {
            self.block(format!(
                "it nests code more than {MAX_DEPTH} levels deep (eval, sh -c, …), too deep for oi to check"
            ));
            return false;
        }
        self.depth += 1;
        true
    }
}
