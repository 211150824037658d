//! One static reading of a code block: the first hard-deny reason found, and every shell
//! command seen, normalised (for deny rules). Shell, Python and other languages' readers all
//! report here, and hand nested code (`sh -c`, `eval`, `os.system`, …) back to it.

use crate::env::Env;
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
    /// Reads Python code.
    fn python(&self, scan: &mut Scan, source: &str);
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

/// What a reading found.
#[derive(Debug, Default)]
pub(crate) struct Reading {
    /// Why the block is on the hard-deny list, if it is.
    pub(crate) danger: Option<String>,
    /// Every shell command seen: its words after quote removal and expansion, space-separated.
    pub(crate) commands: Vec<String>,
}

/// The state of one reading.
pub(crate) struct Scan<'p> {
    /// The protected places.
    pub(crate) places: &'p Places,
    readers: &'p dyn Readers,
    reading: Reading,
    depth: usize,
    steps: usize,
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
        }
    }

    /// What was found.
    pub(crate) fn finish(self) -> Reading {
        self.reading
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
        if !self.enter() {
            return Output::Unknown;
        }
        let readers = self.readers;
        let output = readers.shell(self, source, env);
        self.depth -= 1;
        output
    }

    /// Reads one command given as an argument vector (from Python's `subprocess.run([...])`).
    pub(crate) fn argv(&mut self, argv: &[Field]) {
        if !self.enter() {
            return;
        }
        let env = Env::new(self.places);
        let readers = self.readers;
        readers.argv(self, argv, env);
        self.depth -= 1;
    }

    /// Reads Python code.
    pub(crate) fn python(&mut self, source: &str) {
        if !self.enter() {
            return;
        }
        let readers = self.readers;
        readers.python(self, source);
        self.depth -= 1;
    }

    /// Reads code in another language (the shell commands in its string literals).
    pub(crate) fn foreign(&mut self, source: &str) {
        if !self.enter() {
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
