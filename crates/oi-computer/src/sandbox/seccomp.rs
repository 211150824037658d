//! Seccomp filters for sessions (Linux, x86_64 and aarch64), built in the parent and only
//! installed by the child between fork and exec. Each filter is a separate program; the kernel
//! runs all of them and the strictest answer wins.
//!
//! - [`deny_terminal_injection`] (every mode where it can be installed): `ioctl(TIOCSTI)` (push
//!   characters into a terminal's input) and `ioctl(TIOCLINUX)` (console selection paste) fail
//!   with `EPERM`, also through the 32-bit and x32 ABIs.
//! - [`sandbox`] (the `workspace` and `readonly` modes): `mknod`/`mknodat` of character and
//!   block devices fail with `EPERM`; `socket(2)` of any family but IPv4, IPv6 and netlink
//!   fails with `EACCES` — above all `AF_UNIX`, so no pathname or abstract Unix socket of a
//!   host daemon (tmux, screen, Docker, D-Bus, ssh-agent) can be reached, wherever it lives and
//!   as root too (`socketpair(2)` of `SOCK_STREAM` stays, see below), and `AF_VSOCK`,
//!   `AF_PACKET` and the rest with it — and `io_uring_setup(2)` (which could create sockets
//!   without `socket`) fails with `EACCES`; the key management syscalls (`keyctl`, `add_key`,
//!   `request_key`) fail with `EPERM`, so no keyring of the uid is read or written; syscalls
//!   of another ABI (32-bit `int 0x80`, x32) fail with `EACCES`, so the filters cannot be
//!   sidestepped through them.
//! - [`files`] (the `workspace` and `readonly` modes): no set-ID bits, and in `readonly` mode
//!   no metadata changes (`seccomp/files.rs`).
//! - [`deny_network`] (network denied): every `socket(2)` fails with `EACCES` — IPv4, IPv6,
//!   raw, packet, netlink, and Unix sockets too, so no listener outside the sandbox can be
//!   reached by path — and so does `io_uring_setup(2)` (io_uring can create sockets without the
//!   `socket` syscall). Syscalls of another ABI fail with `EACCES`.
//!
//! Both the sandbox and the network filter let `socketpair(2)` make `SOCK_STREAM` pairs only:
//! their two ends are connected to each other and reach nothing else (`connect` gives
//! `EISCONN`, `sendto` with an address `EISCONN`). A datagram pair would not be closed: an
//! end can `sendto` (or `connect` to) any datagram socket by path, such as journald's,
//! `/dev/log` or systemd's notify socket; so `SOCK_DGRAM` and `SOCK_SEQPACKET` pairs fail with
//! `EACCES`.

use libc::sock_filter;

mod files;
pub(crate) use files::files;

/// `AUDIT_ARCH_*` of this build's architecture, or `None` where filters are not built.
#[cfg(target_arch = "x86_64")]
const ARCH: Option<u32> = Some(0xC000_003E);
#[cfg(target_arch = "aarch64")]
const ARCH: Option<u32> = Some(0xC000_00B7);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ARCH: Option<u32> = None;

/// The 32-bit ABI the kernel also accepts on this architecture (i386 on x86_64, arm on
/// aarch64) and its `ioctl` number (54 on both).
#[cfg(target_arch = "x86_64")]
const COMPAT: (u32, u32) = (0x4000_0003, 54);
#[cfg(not(target_arch = "x86_64"))]
const COMPAT: (u32, u32) = (0x4000_0028, 54);

/// x32 syscalls have this bit set in their number (x86_64 only; 0 elsewhere).
const X32_BIT: u32 = if cfg!(target_arch = "x86_64") {
    0x4000_0000
} else {
    0
};
/// x32's own `ioctl` number (x86_64 only).
const X32_IOCTL: u32 = X32_BIT | 514;

/// `TIOCSTI` and `TIOCLINUX` (the same on every architecture oi builds filters for).
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;

/// Offsets in `struct seccomp_data`: the syscall number, the architecture, and the low 32
/// bits of `args[n]` (little-endian).
const NR: u32 = 0;
const ARCH_OFFSET: u32 = 4;
const fn arg_low(n: u32) -> u32 {
    16 + 8 * n
}

const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JSET_K: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
const JA: u16 = (libc::BPF_JMP | libc::BPF_JA) as u16;
const AND_K: u16 = (libc::BPF_ALU | libc::BPF_AND | libc::BPF_K) as u16;
const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;

const fn errno(code: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (code as u32 & libc::SECCOMP_RET_DATA)
}

/// A place in a program that jumps name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    Allow,
    DenyEperm,
    DenyEacces,
    Native,
    Compat,
    CheckCmd,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Mknod,
    Mknodat,
    Mode,
    Socket,
    Socketpair,
    ModeArg1,
    ModeArg2,
    ModeArg3,
    SetId,
    DenyEnosys,
}

/// One instruction, with symbolic jump targets (always forward).
#[derive(Debug, Clone, Copy)]
enum Op {
    /// Where a label points.
    At(Label),
    /// Load a 32-bit word of `seccomp_data`.
    Load(u32),
    /// `A &= k`.
    And(u32),
    /// If `A == k` go to `then`, else to `otherwise` (`None`: the next instruction).
    Eq(u32, Option<Label>, Option<Label>),
    /// If `A & k != 0` go to `then`, else on.
    Set(u32, Label),
    /// Go to a label.
    Jump(Label),
    /// Return `k`.
    Ret(u32),
}

/// Assembles `ops` into BPF, resolving labels to relative offsets; `None` when a jump goes
/// backwards or too far (a bug in the program, caught by the unit tests).
fn assemble(ops: &[Op]) -> Option<Vec<sock_filter>> {
    let mut at = Vec::new();
    let mut index = 0usize;
    for op in ops {
        match op {
            Op::At(label) => at.push((*label, index)),
            _ => index += 1,
        }
    }
    let find = |label: Label| at.iter().find(|(l, _)| *l == label).map(|(_, i)| *i);
    let offset = |from: usize, to: Option<Label>| -> Option<u8> {
        match to {
            None => Some(0),
            Some(label) => u8::try_from(find(label)?.checked_sub(from + 1)?).ok(),
        }
    };
    let mut program = Vec::new();
    for op in ops {
        let here = program.len();
        let instruction = match *op {
            Op::At(_) => continue,
            Op::Load(offset) => stmt(LD_W_ABS, offset),
            Op::And(mask) => stmt(AND_K, mask),
            Op::Eq(k, then, otherwise) => {
                jump(JEQ_K, k, offset(here, then)?, offset(here, otherwise)?)
            }
            Op::Set(k, then) => jump(JSET_K, k, offset(here, Some(then))?, 0),
            Op::Jump(to) => stmt(JA, u32::from(offset(here, Some(to))?)),
            Op::Ret(k) => stmt(RET_K, k),
        };
        program.push(instruction);
    }
    Some(program)
}

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// The common tail: the three answers.
fn answers() -> [Op; 6] {
    [
        Op::At(Label::Allow),
        Op::Ret(ALLOW),
        Op::At(Label::DenyEperm),
        Op::Ret(errno(libc::EPERM)),
        Op::At(Label::DenyEacces),
        Op::Ret(errno(libc::EACCES)),
    ]
}

/// Whether seccomp filters are supported (`PR_GET_SECCOMP` answers).
pub(crate) fn available() -> bool {
    if ARCH.is_none() {
        return false;
    }
    // SAFETY: prctl with integer arguments only; it returns the current seccomp mode.
    let rc = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    rc >= 0
}

/// The filter refusing `TIOCSTI` and `TIOCLINUX` ioctls through every ABI.
pub(crate) fn deny_terminal_injection() -> Option<Vec<sock_filter>> {
    let arch = ARCH?;
    let ioctl = u32::try_from(libc::SYS_ioctl).ok()?;
    let (compat_arch, compat_ioctl) = COMPAT;
    let mut ops = vec![
        Op::Load(ARCH_OFFSET),
        Op::Eq(arch, Some(Label::Native), None),
        Op::Eq(compat_arch, Some(Label::Compat), Some(Label::Allow)),
        Op::At(Label::Native),
        Op::Load(NR),
        Op::Eq(ioctl, Some(Label::CheckCmd), None),
    ];
    if X32_BIT != 0 {
        ops.push(Op::Eq(X32_IOCTL, Some(Label::CheckCmd), None));
    }
    ops.extend([
        Op::Jump(Label::Allow),
        Op::At(Label::Compat),
        Op::Load(NR),
        Op::Eq(compat_ioctl, None, Some(Label::Allow)),
        Op::At(Label::CheckCmd),
        Op::Load(arg_low(1)),
        Op::Eq(TIOCSTI, Some(Label::DenyEperm), None),
        Op::Eq(TIOCLINUX, Some(Label::DenyEperm), Some(Label::Allow)),
    ]);
    ops.extend(answers());
    assemble(&ops)
}

/// The first instructions of the sandbox and network filters: another ABI → `EACCES`; then
/// the syscall number is loaded.
fn native_only(arch: u32) -> Vec<Op> {
    let mut ops = vec![
        Op::Load(ARCH_OFFSET),
        Op::Eq(arch, None, Some(Label::DenyEacces)),
        Op::Load(NR),
    ];
    if X32_BIT != 0 {
        ops.push(Op::Set(X32_BIT, Label::DenyEacces));
    }
    ops
}

/// The socket families sandboxed code may create (with the network allowed; the network
/// filter refuses them all): IPv4, IPv6, and netlink (which `getaddrinfo` reads interfaces
/// through). Everything else — `AF_UNIX` first — is refused.
const SANDBOX_FAMILIES: [u32; 3] = [
    libc::AF_INET as u32,
    libc::AF_INET6 as u32,
    libc::AF_NETLINK as u32,
];

/// The end of a filter that sends `socketpair` to [`Label::Socketpair`]: only `SOCK_STREAM`
/// pairs (the type's low four bits; `SOCK_NONBLOCK` and `SOCK_CLOEXEC` are higher) are
/// allowed.
fn stream_pairs_only() -> [Op; 4] {
    [
        Op::At(Label::Socketpair),
        Op::Load(arg_low(1)),
        Op::And(0xf),
        Op::Eq(
            libc::SOCK_STREAM as u32,
            Some(Label::Allow),
            Some(Label::DenyEacces),
        ),
    ]
}

/// The sandbox filter: no device nodes, no Unix (or other non-IP) sockets, no io_uring, no
/// keyrings, no other ABI.
pub(crate) fn sandbox() -> Option<Vec<sock_filter>> {
    let arch = ARCH?;
    let mknodat = u32::try_from(libc::SYS_mknodat).ok()?;
    let nr = |n: libc::c_long| u32::try_from(n).ok();
    let mut ops = native_only(arch);
    ops.extend([
        Op::Eq(nr(libc::SYS_socket)?, Some(Label::Socket), None),
        Op::Eq(nr(libc::SYS_socketpair)?, Some(Label::Socketpair), None),
        Op::Eq(nr(libc::SYS_io_uring_setup)?, Some(Label::DenyEacces), None),
        Op::Eq(nr(libc::SYS_keyctl)?, Some(Label::DenyEperm), None),
        Op::Eq(nr(libc::SYS_add_key)?, Some(Label::DenyEperm), None),
        Op::Eq(nr(libc::SYS_request_key)?, Some(Label::DenyEperm), None),
    ]);
    #[cfg(target_arch = "x86_64")]
    ops.push(Op::Eq(
        u32::try_from(libc::SYS_mknod).ok()?,
        Some(Label::Mknod),
        None,
    ));
    ops.push(Op::Eq(mknodat, Some(Label::Mknodat), Some(Label::Allow)));
    #[cfg(target_arch = "x86_64")]
    ops.extend([
        Op::At(Label::Mknod),
        Op::Load(arg_low(1)),
        Op::Jump(Label::Mode),
    ]);
    ops.extend([
        Op::At(Label::Mknodat),
        Op::Load(arg_low(2)),
        Op::At(Label::Mode),
        Op::And(libc::S_IFMT),
        Op::Eq(libc::S_IFCHR, Some(Label::DenyEperm), None),
        Op::Eq(libc::S_IFBLK, Some(Label::DenyEperm), Some(Label::Allow)),
        Op::At(Label::Socket),
        Op::Load(arg_low(0)),
        Op::Eq(SANDBOX_FAMILIES[0], Some(Label::Allow), None),
        Op::Eq(SANDBOX_FAMILIES[1], Some(Label::Allow), None),
        Op::Eq(
            SANDBOX_FAMILIES[2],
            Some(Label::Allow),
            Some(Label::DenyEacces),
        ),
    ]);
    ops.extend(stream_pairs_only());
    ops.extend(answers());
    assemble(&ops)
}

/// The network filter: no sockets of any family (stream `socketpair`s stay), no io_uring, no
/// other ABI.
pub(crate) fn deny_network() -> Option<Vec<sock_filter>> {
    let arch = ARCH?;
    let socket = u32::try_from(libc::SYS_socket).ok()?;
    let socketpair = u32::try_from(libc::SYS_socketpair).ok()?;
    let io_uring = u32::try_from(libc::SYS_io_uring_setup).ok()?;
    let mut ops = native_only(arch);
    ops.extend([
        Op::Eq(socket, Some(Label::DenyEacces), None),
        Op::Eq(socketpair, Some(Label::Socketpair), None),
        Op::Eq(io_uring, Some(Label::DenyEacces), Some(Label::Allow)),
    ]);
    ops.extend(stream_pairs_only());
    ops.extend(answers());
    assemble(&ops)
}

/// Installs `program` on the calling thread. The caller has set `no_new_privs`, or holds
/// `CAP_SYS_ADMIN`. Only syscalls: safe between fork and exec. The error is the errno.
pub(crate) fn install(program: &[sock_filter]) -> Result<(), i32> {
    let len = u16::try_from(program.len()).map_err(|_| libc::E2BIG)?;
    let prog = libc::sock_fprog {
        len,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: `prog` points at `program`, which outlives the call; the kernel copies the
    // filter and never writes through the pointer.
    let rc = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &prog as *const libc::sock_fprog,
            0,
            0,
        )
    };
    if rc != 0 {
        return Err(crate::base::errno::errno());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `program` on one `seccomp_data` (nr, arch, args) like the kernel would.
    pub(super) fn evaluate(program: &[sock_filter], nr: u32, arch: u32, args: [u64; 6]) -> u32 {
        let word = |offset: u32| -> u32 {
            match offset {
                0 => nr,
                4 => arch,
                o if o >= 16 => {
                    let arg = args[((o - 16) / 8) as usize];
                    if (o - 16) % 8 == 0 {
                        arg as u32
                    } else {
                        (arg >> 32) as u32
                    }
                }
                _ => 0,
            }
        };
        let (mut pc, mut a) = (0usize, 0u32);
        loop {
            let ins = program[pc];
            match ins.code {
                LD_W_ABS => a = word(ins.k),
                AND_K => a &= ins.k,
                JA => pc += ins.k as usize,
                JEQ_K => pc += usize::from(if a == ins.k { ins.jt } else { ins.jf }),
                JSET_K => pc += usize::from(if a & ins.k != 0 { ins.jt } else { ins.jf }),
                RET_K => return ins.k,
                other => panic!("unexpected instruction {other}"),
            }
            pc += 1;
        }
    }

    /// `socketpair` of `SOCK_STREAM` (with any flags) passes `p`; datagram and seqpacket
    /// pairs do not.
    fn assert_stream_pairs_only(p: &[sock_filter]) {
        let arch = ARCH.unwrap();
        let socketpair = libc::SYS_socketpair as u32;
        let unix = libc::AF_UNIX as u64;
        let stream = libc::SOCK_STREAM as u64;
        let flags = (libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK) as u64;
        assert_eq!(
            evaluate(p, socketpair, arch, [unix, stream, 0, 0, 0, 0]),
            ALLOW
        );
        let with_flags = [unix, stream | flags, 0, 0, 0, 0];
        assert_eq!(evaluate(p, socketpair, arch, with_flags), ALLOW);
        for kind in [libc::SOCK_DGRAM, libc::SOCK_SEQPACKET, libc::SOCK_RAW] {
            let args = [unix, kind as u64 | flags, 0, 0, 0, 0];
            assert_eq!(evaluate(p, socketpair, arch, args), errno(libc::EACCES));
        }
    }

    #[test]
    fn terminal_injection_is_refused_on_every_abi() {
        let Some(p) = deny_terminal_injection() else {
            return;
        };
        let arch = ARCH.unwrap();
        let ioctl = libc::SYS_ioctl as u32;
        let deny = errno(libc::EPERM);
        assert_eq!(evaluate(&p, ioctl, arch, [0, 0x5412, 0, 0, 0, 0]), deny);
        assert_eq!(
            evaluate(&p, ioctl, arch, [0, 0xffff_ffff_0000_5412, 0, 0, 0, 0]),
            deny,
            "the kernel ignores the high bits of the command"
        );
        assert_eq!(evaluate(&p, ioctl, arch, [0, 0x541C, 0, 0, 0, 0]), deny);
        assert_eq!(evaluate(&p, ioctl, arch, [0, 0x5401, 0, 0, 0, 0]), ALLOW);
        assert_eq!(evaluate(&p, 1, arch, [0, 0x5412, 0, 0, 0, 0]), ALLOW);
        assert_eq!(evaluate(&p, 54, COMPAT.0, [0, 0x5412, 0, 0, 0, 0]), deny);
        assert_eq!(evaluate(&p, 4, COMPAT.0, [0; 6]), ALLOW);
        if X32_BIT != 0 {
            assert_eq!(evaluate(&p, X32_IOCTL, arch, [0, 0x5412, 0, 0, 0, 0]), deny);
        }
    }

    #[test]
    fn the_sandbox_refuses_devices_and_other_abis() {
        let Some(p) = sandbox() else { return };
        let arch = ARCH.unwrap();
        let mknodat = libc::SYS_mknodat as u32;
        let chr = u64::from(libc::S_IFCHR | 0o600);
        let blk = u64::from(libc::S_IFBLK | 0o600);
        let fifo = u64::from(libc::S_IFIFO | 0o600);
        assert_eq!(
            evaluate(&p, mknodat, arch, [0, 0, chr, 0, 0, 0]),
            errno(libc::EPERM)
        );
        assert_eq!(
            evaluate(&p, mknodat, arch, [0, 0, blk, 0, 0, 0]),
            errno(libc::EPERM)
        );
        assert_eq!(evaluate(&p, mknodat, arch, [0, 0, fifo, 0, 0, 0]), ALLOW);
        #[cfg(target_arch = "x86_64")]
        {
            let mknod = libc::SYS_mknod as u32;
            assert_eq!(
                evaluate(&p, mknod, arch, [0, chr, 0, 0, 0, 0]),
                errno(libc::EPERM)
            );
            assert_eq!(evaluate(&p, mknod, arch, [0, fifo, 0, 0, 0, 0]), ALLOW);
        }
        assert_eq!(evaluate(&p, 0, arch, [0; 6]), ALLOW);
        assert_eq!(evaluate(&p, 0, COMPAT.0, [0; 6]), errno(libc::EACCES));
    }

    #[test]
    fn the_sandbox_refuses_unix_sockets_io_uring_and_keyrings() {
        let Some(p) = sandbox() else { return };
        let arch = ARCH.unwrap();
        let socket = libc::SYS_socket as u32;
        for family in [libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK] {
            let args = [family as u64, 1, 0, 0, 0, 0];
            assert_eq!(evaluate(&p, socket, arch, args), ALLOW, "family {family}");
        }
        for family in [libc::AF_UNIX, libc::AF_VSOCK, libc::AF_PACKET, 0x7fff_ffff] {
            let args = [family as u64, 1, 0, 0, 0, 0];
            assert_eq!(evaluate(&p, socket, arch, args), errno(libc::EACCES));
        }
        let high = [0xffff_ffff_0000_0000 | libc::AF_UNIX as u64, 1, 0, 0, 0, 0];
        assert_eq!(
            evaluate(&p, socket, arch, high),
            errno(libc::EACCES),
            "the kernel ignores the high bits of an int argument"
        );
        assert_stream_pairs_only(&p);
        assert_eq!(
            evaluate(&p, libc::SYS_io_uring_setup as u32, arch, [0; 6]),
            errno(libc::EACCES)
        );
        for call in [libc::SYS_keyctl, libc::SYS_add_key, libc::SYS_request_key] {
            assert_eq!(evaluate(&p, call as u32, arch, [0; 6]), errno(libc::EPERM));
        }
    }

    #[test]
    fn the_network_filter_refuses_every_socket_but_a_stream_socketpair() {
        let Some(p) = deny_network() else { return };
        let arch = ARCH.unwrap();
        let socket = libc::SYS_socket as u32;
        for family in [
            libc::AF_UNIX,
            libc::AF_INET,
            libc::AF_INET6,
            libc::AF_NETLINK,
        ] {
            let args = [family as u64, 1, 0, 0, 0, 0];
            assert_eq!(evaluate(&p, socket, arch, args), errno(libc::EACCES));
        }
        assert_stream_pairs_only(&p);
        assert_eq!(
            evaluate(&p, libc::SYS_io_uring_setup as u32, arch, [0; 6]),
            errno(libc::EACCES)
        );
        assert_eq!(evaluate(&p, 102, COMPAT.0, [0; 6]), errno(libc::EACCES));
    }
}
