//! What a shell script knows at one point: its variables and the directories it may be in.

use std::collections::HashMap;

use crate::places::Places;
use crate::word::{Field, Seg};

/// Variables and working directories known at a point of the script.
#[derive(Debug, Clone)]
pub(crate) struct Env {
    pub(crate) vars: HashMap<String, Vec<Vec<Seg>>>,
    /// The directories the script may be in (`None`: unknown).
    pub(crate) cwds: Vec<Option<String>>,
    /// How many conditional constructs (if, loops, `&&`, …) enclose the current statement.
    pub(crate) conditional: usize,
    /// Files the block wrote so far, by absolute path: their content when oi saw it.
    pub(crate) files: HashMap<String, Option<String>>,
    /// Whether the block wrote a file oi cannot name (any script run later may be it).
    pub(crate) wrote_unknown: bool,
    /// Aliases defined so far: their text, `None` when oi cannot know it.
    pub(crate) aliases: HashMap<String, Option<String>>,
}

impl Env {
    /// The environment at the start of a block: `HOME` and `PWD` known.
    pub(crate) fn new(places: &Places) -> Env {
        let mut vars = HashMap::new();
        let home = places.home();
        if let Some(home) = &home {
            vars.insert("HOME".to_owned(), vec![vec![Seg::Lit(home.clone())]]);
        }
        let cwd = places.cwd();
        if let Some(cwd) = &cwd {
            vars.insert("PWD".to_owned(), vec![vec![Seg::Lit(cwd.clone())]]);
        }
        Env {
            vars,
            cwds: vec![cwd],
            conditional: 0,
            files: HashMap::new(),
            wrote_unknown: false,
            aliases: HashMap::new(),
        }
    }

    /// The environment of a shell started by code that may be in any of `cwds` (Python after
    /// `os.chdir`, `subprocess.run(…, cwd=…)`): the shell sets `PWD` to where it starts.
    pub(crate) fn in_dirs(places: &Places, cwds: &[Option<String>]) -> Env {
        let mut env = Env::new(places);
        if env.cwds.as_slice() != cwds {
            let values = cwds
                .iter()
                .map(|cwd| match cwd {
                    Some(cwd) => vec![Seg::Lit(cwd.clone())],
                    None => vec![Seg::Unknown {
                        raw: "$PWD".to_owned(),
                        decoded: false,
                    }],
                })
                .collect();
            env.vars.insert("PWD".to_owned(), values);
            env.cwds = cwds.to_vec();
        }
        env
    }

    /// This environment with the positional parameters `$0`, `$1`, … set (for `sh -c`).
    pub(crate) fn with_positional(mut self, args: &[Field]) -> Env {
        for key in ["@", "*", "#"] {
            self.vars.remove(key);
        }
        for (n, arg) in args.iter().enumerate() {
            self.vars.insert(n.to_string(), vec![arg.segs.clone()]);
        }
        let all: Vec<Seg> = args
            .iter()
            .skip(1)
            .enumerate()
            .flat_map(|(i, a)| {
                let space = (i > 0).then(|| Seg::Lit(" ".into()));
                space.into_iter().chain(a.segs.clone())
            })
            .collect();
        self.vars.insert("@".to_owned(), vec![all.clone()]);
        self.vars.insert("*".to_owned(), vec![all]);
        self
    }
}
