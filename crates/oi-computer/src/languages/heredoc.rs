//! Passing a code block to a shell through here-documents on its command pipe: oi writes the
//! block into the pipe it already holds and the shell reads it from descriptors of its own
//! (`/dev/fd/20`, …), so oi never writes code into a file that sandboxed code could replace
//! with a link.
//!
//! A shell keeps a here-document of up to a pipe's capacity in a pipe; a longer one goes to a
//! temp file the shell itself creates (inside the sandbox, and not at all where it may write
//! no temp directory). So a block is cut at line ends into pieces that each fit a pipe. A block
//! of one piece is read from `/dev/fd/3`; a longer one is gathered by the shell itself, seven
//! pieces a command (descriptors 3 to 9, all that `sh` allows), into a variable (bash) or a
//! file (the Java and AppleScript hosts, whose compilers need one).

/// The descriptor of the first piece of a command.
const FIRST_FD: usize = 3;

/// Most pieces one command carries (descriptors 3 to 9).
const PER_COMMAND: usize = 7;

/// The largest piece, in bytes, that still fits a pipe of 64 KiB with room to spare.
const PIECE: usize = 60_000;

/// A code block as here-documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Heredocs {
    /// The pieces, each ending with a newline.
    pieces: Vec<String>,
    /// The line that ends each piece: fresh per block and on no line of it.
    delimiter: String,
}

impl Heredocs {
    /// `code` (a newline added when it lacks one) cut into pieces.
    pub(crate) fn new(code: &str) -> Heredocs {
        let mut code = code.to_owned();
        if !code.ends_with('\n') {
            code.push('\n');
        }
        let mut delimiter = format!("OI_END_{}", crate::base::nonce::nonce());
        while code.lines().any(|line| line == delimiter) {
            delimiter = format!("OI_END_{}", crate::base::nonce::nonce());
        }
        Heredocs {
            pieces: pieces(&code),
            delimiter,
        }
    }

    /// Whether the block is one piece, readable from [`Heredocs::SINGLE`].
    pub(crate) fn is_single(&self) -> bool {
        self.pieces.len() == 1
    }

    /// Where a shell reads a block of one piece.
    pub(crate) const SINGLE: &str = "/dev/fd/3";

    /// The whole block as one here-document at [`Heredocs::SINGLE`]: the redirection that
    /// opens it (to end a command line with) and what to send after that line's newline. (A
    /// block of more than one piece leaves it to the shell to hold it.)
    pub(crate) fn single_whole(&self) -> (String, String) {
        let redirection = format!(" {FIRST_FD}<<'{}'", self.delimiter);
        (redirection, self.bodies(&[self.pieces.concat()]))
    }

    /// Shell commands, each with its here-documents, that write the block to `file` (a shell
    /// word, e.g. a quoted path) when `guard` (a shell condition) holds: run by the shell,
    /// inside the sandbox.
    pub(crate) fn write_to(&self, file: &str, guard: &str) -> String {
        self.commands(|i, cats, redirections| {
            let append = if i == 0 { ">" } else { ">>" };
            format!("{guard} && cat {cats} {append}{file}{redirections}")
        })
    }

    /// bash commands, each with its here-documents, that gather the block into the shell
    /// variable `var` (empty before; a trailing newline kept).
    pub(crate) fn gather_into(&self, var: &str) -> String {
        let mut out = format!("{var}=\n");
        out.push_str(&self.commands(|_, cats, redirections| {
            format!("{{ __oi_piece=$(cat {cats}; printf x); }}{redirections}; {var}+=${{__oi_piece%x}}; __oi_piece=")
        }));
        out
    }

    /// One command line per group of pieces, made by `line(group index, the paths to cat,
    /// the redirections)`, each followed by its here-documents.
    fn commands(&self, line: impl Fn(usize, &str, &str) -> String) -> String {
        let mut out = String::new();
        for (i, group) in self.pieces.chunks(PER_COMMAND).enumerate() {
            let paths: Vec<String> = (0..group.len())
                .map(|n| format!("/dev/fd/{}", FIRST_FD + n))
                .collect();
            let redirections: String = (0..group.len())
                .map(|n| format!(" {}<<'{}'", FIRST_FD + n, self.delimiter))
                .collect();
            out.push_str(&line(i, &paths.join(" "), &redirections));
            out.push('\n');
            out.push_str(&self.bodies(group));
        }
        out
    }

    /// `pieces` as here-document bodies, each ended by the delimiter line.
    fn bodies(&self, pieces: &[String]) -> String {
        let mut out = String::new();
        for piece in pieces {
            out.push_str(piece);
            out.push_str(&self.delimiter);
            out.push('\n');
        }
        out
    }
}

/// `code` (ending with a newline) cut at line ends into pieces of at most [`PIECE`] bytes (a
/// single longer line stays whole).
fn pieces(code: &str) -> Vec<String> {
    let mut pieces: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in code.split_inclusive('\n') {
        if !current.is_empty() && current.len() + line.len() > PIECE {
            pieces.push(std::mem::take(&mut current));
        }
        current.push_str(line);
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_block_is_one_piece_with_a_fresh_delimiter() {
        let docs = Heredocs::new("echo hi");
        assert!(docs.is_single());
        let (redirection, body) = docs.single_whole();
        assert!(redirection.starts_with(" 3<<'OI_END_"));
        assert!(body.starts_with("echo hi\nOI_END_"));
        assert_ne!(docs.delimiter, Heredocs::new("echo hi").delimiter);
    }

    #[test]
    fn a_long_block_is_cut_at_line_ends_seven_pieces_a_command() {
        let code = "x=1\n".repeat(200_000);
        let docs = Heredocs::new(&code);
        assert!(!docs.is_single());
        assert_eq!(docs.pieces.concat(), code);
        assert!(
            docs.pieces
                .iter()
                .all(|p| p.ends_with('\n') && p.len() <= PIECE)
        );
        let commands = docs.write_to("'f'", "true");
        let lines: Vec<&str> = commands
            .lines()
            .filter(|l| l.starts_with("true && cat "))
            .collect();
        assert_eq!(lines.len(), docs.pieces.len().div_ceil(PER_COMMAND));
        assert!(lines[0].contains(" >'f' 3<<'OI_END_"));
        assert!(lines[1].contains(" >>'f' 3<<'OI_END_"));
        assert!(lines.iter().all(|l| !l.contains("/dev/fd/10")));
        let gather = docs.gather_into("v");
        assert!(gather.starts_with("v=\n{ __oi_piece=$(cat /dev/fd/3 "));
        assert_eq!(
            gather
                .lines()
                .filter(|l| l.starts_with("{ __oi_piece"))
                .count(),
            lines.len()
        );
    }
}
