//! Finding the programs sessions run (interpreters, compilers, the screenshot browser) on
//! `PATH`.

use std::path::PathBuf;

/// Where `program` is: itself when it contains a `/`, else the first match on `PATH`.
pub(crate) fn find_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let path = PathBuf::from(program);
        return path.is_file().then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// Whether `program` can be found on `PATH` (or is an existing path).
pub(crate) fn program_exists(program: &str) -> bool {
    find_program(program).is_some()
}
