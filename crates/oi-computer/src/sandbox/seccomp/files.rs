//! The files filter (the `workspace` and `readonly` modes): no set-user-ID or set-group-ID
//! bit is ever set by sandboxed code, and in `readonly` mode no file's mode, owner or
//! extended attributes change at all.
//!
//! - `chmod`, `fchmod`, `fchmodat`, `fchmodat2` with a mode holding `S_ISUID` or `S_ISGID`,
//!   and `open`, `openat`, `creat`, `mknod`, `mknodat` with such a mode, fail with `EPERM`
//!   (an empty set-ID file keeps its bit when root later writes a program into it): as root, code could
//!   otherwise leave a set-user-ID root program in the workspace for any local user to run.
//!   `openat2` fails with `ENOSYS` (its mode is behind a pointer a filter cannot read; C
//!   libraries fall back to `openat`).
//! - `readonly` mode: the `chmod`, `chown` and xattr families fail with `EPERM` whatever
//!   their arguments, and so do the `utime` family's when the session has no mount
//!   namespace (where one exists its read-only mounts refuse them outside the session's
//!   scratch directory, and `touch` keeps working there).
//!
//! The write wall of the mount namespace (`write_wall.rs`) is what stops changes to host
//! files; this filter is the layer below it, and the one that holds without it.

use super::{Label, Op, answers, errno, native_only};
use libc::sock_filter;

/// `fchmodat2`, `openat2`, `setxattrat` and `removexattrat`: numbered alike on x86_64 and
/// aarch64 (added after the syscall tables were unified), not all in every `libc`.
const FCHMODAT2: u32 = 452;
const OPENAT2: u32 = 437;
const SETXATTRAT: u32 = 463;
const REMOVEXATTRAT: u32 = 466;

/// The set-user-ID and set-group-ID bits.
const SET_ID_BITS: u32 = libc::S_ISUID | libc::S_ISGID;

/// The syscall numbers of the families `readonly` mode refuses outright: modes, owners,
/// xattrs, and with `times` the `utime` family too.
fn metadata_family(times: bool) -> Option<Vec<u32>> {
    let nr = |n: libc::c_long| u32::try_from(n).ok();
    let mut family = vec![
        nr(libc::SYS_fchmod)?,
        nr(libc::SYS_fchmodat)?,
        FCHMODAT2,
        nr(libc::SYS_fchown)?,
        nr(libc::SYS_fchownat)?,
        nr(libc::SYS_setxattr)?,
        nr(libc::SYS_lsetxattr)?,
        nr(libc::SYS_fsetxattr)?,
        nr(libc::SYS_removexattr)?,
        nr(libc::SYS_lremovexattr)?,
        nr(libc::SYS_fremovexattr)?,
        SETXATTRAT,
        REMOVEXATTRAT,
    ];
    #[cfg(target_arch = "x86_64")]
    family.extend([
        nr(libc::SYS_chmod)?,
        nr(libc::SYS_chown)?,
        nr(libc::SYS_lchown)?,
    ]);
    if times {
        family.push(nr(libc::SYS_utimensat)?);
        #[cfg(target_arch = "x86_64")]
        family.extend([
            nr(libc::SYS_utime)?,
            nr(libc::SYS_utimes)?,
            nr(libc::SYS_futimesat)?,
        ]);
    }
    Some(family)
}

/// The files filter: `readonly` refuses the metadata family (and `times` the `utime` family);
/// every mode refuses set-ID bits.
pub(crate) fn files(readonly: bool, times: bool) -> Option<Vec<sock_filter>> {
    let arch = super::ARCH?;
    let nr = |n: libc::c_long| u32::try_from(n).ok();
    let mut ops = native_only(arch);
    if readonly {
        for call in metadata_family(times)? {
            ops.push(Op::Eq(call, Some(Label::DenyEperm), None));
        }
    }
    #[cfg(target_arch = "x86_64")]
    ops.extend([
        Op::Eq(nr(libc::SYS_chmod)?, Some(Label::ModeArg1), None),
        Op::Eq(nr(libc::SYS_creat)?, Some(Label::ModeArg1), None),
        Op::Eq(nr(libc::SYS_mknod)?, Some(Label::ModeArg1), None),
        Op::Eq(nr(libc::SYS_open)?, Some(Label::ModeArg2), None),
    ]);
    ops.extend([
        Op::Eq(nr(libc::SYS_mknodat)?, Some(Label::ModeArg2), None),
        Op::Eq(nr(libc::SYS_fchmod)?, Some(Label::ModeArg1), None),
        Op::Eq(nr(libc::SYS_fchmodat)?, Some(Label::ModeArg2), None),
        Op::Eq(FCHMODAT2, Some(Label::ModeArg2), None),
        Op::Eq(nr(libc::SYS_openat)?, Some(Label::ModeArg3), None),
        Op::Eq(OPENAT2, Some(Label::DenyEnosys), Some(Label::Allow)),
        Op::At(Label::ModeArg1),
        Op::Load(super::arg_low(1)),
        Op::Jump(Label::SetId),
        Op::At(Label::ModeArg2),
        Op::Load(super::arg_low(2)),
        Op::Jump(Label::SetId),
        Op::At(Label::ModeArg3),
        Op::Load(super::arg_low(3)),
        Op::At(Label::SetId),
        Op::Set(SET_ID_BITS, Label::DenyEperm),
        Op::Jump(Label::Allow),
        Op::At(Label::DenyEnosys),
        Op::Ret(errno(libc::ENOSYS)),
    ]);
    ops.extend(answers());
    super::assemble(&ops)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::sandbox::seccomp::tests::evaluate;

    const EPERM: u32 = errno(libc::EPERM);

    fn call(program: &[sock_filter], nr: libc::c_long, args: [u64; 6]) -> u32 {
        evaluate(
            program,
            u32::try_from(nr).unwrap(),
            super::super::ARCH.unwrap(),
            args,
        )
    }

    #[test]
    fn set_id_bits_are_refused_in_every_mode_and_plain_modes_pass() {
        for readonly in [false, true] {
            let p = files(readonly, false).unwrap();
            assert_eq!(call(&p, libc::SYS_fchmod, [3, 0o4755, 0, 0, 0, 0]), EPERM);
            assert_eq!(call(&p, libc::SYS_fchmodat, [0, 0, 0o2755, 0, 0, 0]), EPERM);
            assert_eq!(call(&p, 452, [0, 0, 0o6755, 0, 0, 0]), EPERM);
            assert_eq!(
                call(&p, libc::SYS_openat, [0, 0, 0o100, 0o4755, 0, 0]),
                EPERM
            );
            assert_eq!(
                call(&p, libc::SYS_openat, [0, 0, 0o100, 0o644, 0, 0]),
                libc::SECCOMP_RET_ALLOW
            );
            assert_eq!(call(&p, 437, [0; 6]), errno(libc::ENOSYS));
            let regular = u64::from(libc::S_IFREG);
            assert_eq!(
                call(&p, libc::SYS_mknodat, [0, 0, regular | 0o6755, 0, 0, 0]),
                EPERM
            );
            assert_eq!(
                call(&p, libc::SYS_mknodat, [0, 0, regular | 0o644, 0, 0, 0]),
                libc::SECCOMP_RET_ALLOW
            );
            let plain = call(&p, libc::SYS_fchmod, [3, 0o755, 0, 0, 0, 0]);
            if readonly {
                assert_eq!(plain, EPERM);
            } else {
                assert_eq!(plain, libc::SECCOMP_RET_ALLOW);
            }
            #[cfg(target_arch = "x86_64")]
            {
                assert_eq!(call(&p, libc::SYS_chmod, [0, 0o4755, 0, 0, 0, 0]), EPERM);
                assert_eq!(call(&p, libc::SYS_creat, [0, 0o2700, 0, 0, 0, 0]), EPERM);
                assert_eq!(call(&p, libc::SYS_open, [0, 0o100, 0o4700, 0, 0, 0]), EPERM);
                assert_eq!(
                    call(
                        &p,
                        libc::SYS_mknod,
                        [0, u64::from(libc::S_IFREG) | 0o4755, 0, 0, 0, 0]
                    ),
                    EPERM
                );
            }
        }
    }

    #[test]
    fn readonly_refuses_owners_xattrs_and_with_times_the_utime_family() {
        let writable = files(false, true).unwrap();
        let readonly = files(true, false).unwrap();
        let readonly_times = files(true, true).unwrap();
        for nr in [
            libc::SYS_fchown,
            libc::SYS_fchownat,
            libc::SYS_setxattr,
            libc::SYS_fsetxattr,
            libc::SYS_lremovexattr,
        ] {
            assert_eq!(call(&writable, nr, [0; 6]), libc::SECCOMP_RET_ALLOW, "{nr}");
            assert_eq!(call(&readonly, nr, [0; 6]), EPERM, "{nr}");
        }
        assert_eq!(
            call(&readonly, libc::SYS_utimensat, [0; 6]),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(call(&readonly_times, libc::SYS_utimensat, [0; 6]), EPERM);
        assert_eq!(
            call(&readonly, libc::SYS_read, [0; 6]),
            libc::SECCOMP_RET_ALLOW
        );
    }
}
