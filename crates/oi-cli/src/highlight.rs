//! Syntax colours for code, line by line as it streams, from Sublime Text grammars (`syntect`,
//! with its pure-Rust regex engine). The grammars are loaded off the start-up path: a
//! background thread starts at the first prompt when colours are drawn ([`Grammars::warm`]);
//! code that comes while they are still loading waits for them (once, at most three
//! seconds), a block started before anyone asked for them is shown in one colour, and the
//! block's state catches up once they are there. Colours are the terminal's own 16 (they
//! follow the user's theme, light or dark).

use std::sync::{Arc, OnceLock};

use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxSet};

use crate::style::{CODE, NORMAL, Sgr, Span};

/// The grammars, loaded once in the background and shared.
#[derive(Clone, Default)]
pub struct Grammars {
    set: Arc<OnceLock<Loaded>>,
    started: Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for Grammars {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grammars")
            .field("ready", &self.set.get().is_some())
            .finish()
    }
}

/// The grammars and the scopes colours are chosen by.
struct Loaded {
    syntaxes: SyntaxSet,
    palette: Vec<(Scope, Sgr)>,
}

/// Scope prefixes and their colours; the innermost scope that matches one wins.
const PALETTE: &[(&str, Sgr)] = &[
    ("comment", "3;90"),
    ("string", "32"),
    ("constant.numeric", "33"),
    ("constant.language", "33"),
    ("constant.character", "33"),
    ("keyword", "35"),
    ("storage", "35"),
    ("entity.name.function", "34"),
    ("support.function", "34"),
    ("variable.function", "34"),
    ("entity.name.class", "1;36"),
    ("entity.name.type", "1;36"),
    ("support.type", "36"),
    ("support.class", "36"),
    ("entity.name.tag", "34"),
    ("entity.other.attribute-name", "33"),
    ("invalid", "31"),
];

impl Grammars {
    /// Grammars not loaded yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts loading the grammars in a background thread (once).
    pub fn warm(&self) {
        if self.started.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let set = Arc::clone(&self.set);
        let spawned = std::thread::Builder::new()
            .name("oi-grammars".into())
            .spawn(move || {
                let _ = set.set(Loaded::load());
                if let Some(loaded) = set.get() {
                    warm_up(&loaded.syntaxes);
                }
            });
        if spawned.is_err() {
            let _ = self.set.set(Loaded::load());
        }
    }

    /// Loads the grammars now, in this thread, if they are not loaded yet.
    #[cfg(test)]
    pub fn load_now(&self) {
        let _ = self.set.get_or_init(Loaded::load);
    }

    /// The grammars: at once when loaded; when they are loading, after at most three
    /// seconds (this happens once, on the first code shown right after start-up, and only
    /// takes long on a debug build or a machine under heavy load: loading takes tens of
    /// milliseconds in a release build); `None` when nobody started them.
    fn ready(&self) -> Option<&Loaded> {
        if let Some(loaded) = self.set.get() {
            return Some(loaded);
        }
        if !self.started.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        while std::time::Instant::now() < deadline {
            if let Some(loaded) = self.set.get() {
                return Some(loaded);
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        self.set.get()
    }
}

impl Loaded {
    fn load() -> Loaded {
        let palette = PALETTE
            .iter()
            .filter_map(|(name, sgr)| Scope::new(name).ok().map(|scope| (scope, *sgr)))
            .collect();
        Loaded {
            syntaxes: SyntaxSet::load_defaults_nonewlines(),
            palette,
        }
    }

    fn colour(&self, stack: &ScopeStack) -> Sgr {
        for scope in stack.as_slice().iter().rev() {
            if let Some((_, sgr)) = self
                .palette
                .iter()
                .find(|(prefix, _)| prefix.is_prefix_of(*scope))
            {
                return sgr;
            }
        }
        NORMAL
    }
}

/// Compiles the patterns of the languages models write most (they compile on first use: about
/// 20 ms for Python's in a release build), in the loading thread once the grammars are
/// shared, so the first line of code drawn rarely has to.
fn warm_up(syntaxes: &SyntaxSet) {
    let samples = [
        (
            "py",
            "import os\ndef f(x):\n    return f'{x!r}' + \"s\" # c\n",
        ),
        ("bash", "for f in *.txt; do echo \"$f\" | wc -l; done # c\n"),
    ];
    for (token, sample) in samples {
        let Some(syntax) = syntaxes.find_syntax_by_token(token) else {
            continue;
        };
        let mut state = ParseState::new(syntax);
        for line in sample.lines() {
            let _ = state.parse_line(line, syntaxes);
        }
    }
}

/// The grammar's name for the languages oi runs and the names models write: a name or an
/// alias resolves through oi-core's table of names to its canonical name (a name with a
/// version, such as `python3`, to its language's); other names are the grammar's own.
fn token(language: &str) -> std::borrow::Cow<'_, str> {
    let canonical = oi_core::languages::canonical(language).or_else(|| {
        oi_core::languages::canonical(language.trim_end_matches(|c: char| c.is_ascii_digit()))
    });
    let Some(canonical) = canonical else {
        return language.into();
    };
    match canonical.as_str() {
        "shell" => "bash",
        "javascript" | "react" => "js",
        "python" => "py",
        "powershell" => "ps1",
        _ => return canonical.into(),
    }
    .into()
}

/// Colours the lines of one code block, in order.
pub struct CodeColours {
    grammars: Grammars,
    language: String,
    state: Option<(ParseState, ScopeStack)>,
    /// The block's lines so far, to catch up when the grammars arrive late.
    seen: Vec<String>,
    /// No grammar for this language (or it failed): one colour.
    plain: bool,
}

impl CodeColours {
    /// Colours for a block of `language`.
    pub fn new(grammars: &Grammars, language: &str) -> Self {
        CodeColours {
            grammars: grammars.clone(),
            language: language.to_ascii_lowercase(),
            state: None,
            seen: Vec::new(),
            plain: false,
        }
    }

    /// The spans of the block's next line (without its newline).
    pub fn line(&mut self, line: &str) -> Vec<Span> {
        let spans = self.colour(line);
        if self.state.is_none() && !self.plain {
            self.seen.push(line.to_owned());
        }
        spans
    }

    fn colour(&mut self, line: &str) -> Vec<Span> {
        let fallback = || vec![Span::new(CODE, line)];
        if self.plain {
            return fallback();
        }
        let Some(loaded) = self.grammars.ready() else {
            return fallback();
        };
        if self.state.is_none() {
            let Some(syntax) = loaded.syntaxes.find_syntax_by_token(&token(&self.language)) else {
                self.plain = true;
                self.seen.clear();
                return fallback();
            };
            let mut state = ParseState::new(syntax);
            let mut stack = ScopeStack::new();
            for earlier in std::mem::take(&mut self.seen) {
                for (_, op) in state
                    .parse_line(&earlier, &loaded.syntaxes)
                    .unwrap_or_default()
                {
                    let _ = stack.apply(&op);
                }
            }
            self.state = Some((state, stack));
        }
        let Some((state, stack)) = self.state.as_mut() else {
            return fallback();
        };
        let Ok(ops) = state.parse_line(line, &loaded.syntaxes) else {
            self.plain = true;
            return fallback();
        };
        let mut spans: Vec<Span> = Vec::new();
        let mut at = 0;
        let mut push = |style: Sgr, text: &str| {
            if text.is_empty() {
                return;
            }
            match spans.last_mut() {
                Some(last) if last.style == style => last.text.push_str(text),
                _ => spans.push(Span::new(style, text)),
            }
        };
        for (position, op) in ops {
            let position = position.min(line.len());
            if position > at && line.is_char_boundary(position) {
                push(loaded.colour(stack), &line[at..position]);
                at = position;
            }
            let _ = stack.apply(&op);
        }
        push(loaded.colour(stack), &line[at..]);
        spans
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::text_of;

    #[test]
    fn names_and_aliases_pick_their_languages_grammar() {
        for (language, grammar) in [
            ("sh", "bash"),
            ("zsh", "bash"),
            ("shell", "bash"),
            ("python", "py"),
            ("py", "py"),
            ("python3", "py"),
            ("node", "js"),
            ("react", "js"),
            ("powershell", "ps1"),
            ("ruby", "ruby"),
            ("rust", "rust"),
        ] {
            assert_eq!(token(language), grammar, "{language}");
        }
    }

    #[test]
    fn python_gets_keyword_string_and_comment_colours() {
        let grammars = Grammars::new();
        grammars.load_now();
        let mut colours = CodeColours::new(&grammars, "python");
        let spans = colours.line("def f(x): return 'a'  # note");
        assert_eq!(text_of(&spans), "def f(x): return 'a'  # note");
        let style_of = |text: &str| {
            spans
                .iter()
                .find(|s| s.text.contains(text))
                .map(|s| s.style)
        };
        assert_eq!(style_of("def"), Some("35"));
        assert_eq!(style_of("a'"), Some("32"));
        assert_eq!(style_of("note"), Some("3;90"));
    }

    #[test]
    fn lines_before_the_grammars_are_caught_up() {
        let grammars = Grammars::new();
        let mut colours = CodeColours::new(&grammars, "python");
        assert_eq!(colours.line("s = '''"), vec![Span::new(CODE, "s = '''")]);
        grammars.load_now();
        let spans = colours.line("still a string");
        assert_eq!(spans, vec![Span::new("32", "still a string")]);
    }

    #[test]
    fn unknown_languages_are_one_colour() {
        let grammars = Grammars::new();
        grammars.load_now();
        let mut colours = CodeColours::new(&grammars, "brainfuck-ish");
        assert_eq!(colours.line("+-"), vec![Span::new(CODE, "+-")]);
    }
}
