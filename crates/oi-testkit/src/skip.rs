//! Skipping a test that cannot run on this machine, honestly: a local run says why and goes on;
//! CI (`OI_TEST_REQUIRE_ALL=1`, set by `.ci/run`) fails instead, so a missing runtime or a
//! kernel without the sandbox can never turn a security test into a silent pass.

/// The variable that turns every skip into a failure.
pub const REQUIRE_ALL: &str = "OI_TEST_REQUIRE_ALL";

/// Whether every test must run (`OI_TEST_REQUIRE_ALL` set to anything but `0` or empty).
pub fn all_required() -> bool {
    std::env::var(REQUIRE_ALL).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Prints `why` (it should start with "skipped …" and name the test and the missing part), or
/// panics with it when [`all_required`].
///
/// # Panics
/// Under `OI_TEST_REQUIRE_ALL=1`, always: that is its job.
pub fn skip_or_fail(why: &str) {
    if all_required() {
        panic!("{REQUIRE_ALL}=1 but a test cannot run here: {why}");
    }
    eprintln!("{why}");
}

/// `skipped!("skipped {test}: {why}")`: formats its arguments and calls [`skip_or_fail`].
#[macro_export]
macro_rules! skipped {
    ($($arg:tt)*) => {
        $crate::skip_or_fail(&format!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_decides() {
        // The process environment is shared between tests: read only, never set here.
        let expected = std::env::var(REQUIRE_ALL).is_ok_and(|v| !v.is_empty() && v != "0");
        assert_eq!(all_required(), expected);
    }
}
