//! A seccomp filter that denies new network sockets (Linux, x86_64 and aarch64).
//!
//! Denied with `EACCES`: `socket(2)` for every address family except `AF_UNIX` (so no IPv4,
//! IPv6, raw, packet or netlink sockets; TCP, UDP and ICMP all need one), and
//! `io_uring_setup(2)` (io_uring can create sockets without the `socket` syscall). On x86_64,
//! x32 syscalls are denied too, and any syscall made through another architecture's ABI
//! (e.g. 32-bit `int 0x80`, which has `socketcall`) fails with `EACCES`. Sockets already open
//! when the session starts (none are passed to it) and Unix sockets are not affected.
//!
//! The program is built in the parent; the child only installs it between fork and exec.

use libc::sock_filter;

/// `AUDIT_ARCH_*` of this build's architecture, or `None` where the filter is not built.
#[cfg(target_arch = "x86_64")]
const ARCH: Option<u32> = Some(0xC000_003E);
#[cfg(target_arch = "aarch64")]
const ARCH: Option<u32> = Some(0xC000_00B7);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ARCH: Option<u32> = None;

/// x32 syscalls have this bit set in their number (x86_64 only).
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Offsets in `struct seccomp_data`.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
/// The low 32 bits of `args[0]` (little-endian).
const OFF_ARG0_LO: u32 = 16;

const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JSET_K: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

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

/// Whether seccomp filters are supported (`PR_GET_SECCOMP` answers).
pub(crate) fn available() -> bool {
    if ARCH.is_none() {
        return false;
    }
    // SAFETY: prctl with integer arguments only; it returns the current seccomp mode.
    let rc = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    rc >= 0
}

/// The filter program denying network sockets, or `None` on an unsupported architecture.
pub(crate) fn deny_network() -> Option<Vec<sock_filter>> {
    let arch = ARCH?;
    let deny = libc::SECCOMP_RET_ERRNO | (libc::EACCES as u32 & libc::SECCOMP_RET_DATA);
    let allow = libc::SECCOMP_RET_ALLOW;
    let socket = u32::try_from(libc::SYS_socket).ok()?;
    let io_uring = u32::try_from(libc::SYS_io_uring_setup).ok()?;
    let af_unix = u32::try_from(libc::AF_UNIX).ok()?;
    let x32 = if cfg!(target_arch = "x86_64") {
        X32_SYSCALL_BIT
    } else {
        0
    };
    Some(vec![
        // 0: a syscall of another ABI → deny.
        stmt(LD_W_ABS, OFF_ARCH),
        jump(JEQ_K, arch, 1, 0),
        stmt(RET_K, deny),
        // 3: x32 → deny (never matches where `x32` is 0).
        stmt(LD_W_ABS, OFF_NR),
        jump(JSET_K, x32, 0, 1),
        stmt(RET_K, deny),
        // 6: socket → check the family; io_uring_setup → deny; else allow.
        jump(JEQ_K, socket, 3, 0),
        jump(JEQ_K, io_uring, 1, 0),
        stmt(RET_K, allow),
        stmt(RET_K, deny),
        // 10: socket(family, …): AF_UNIX → allow, else deny.
        stmt(LD_W_ABS, OFF_ARG0_LO),
        jump(JEQ_K, af_unix, 0, 1),
        stmt(RET_K, allow),
        stmt(RET_K, deny),
    ])
}

/// Installs `program` on the calling thread (needs `no_new_privs`, set by the Landlock step
/// or here). Only syscalls: safe between fork and exec.
pub(crate) fn install(program: &[sock_filter]) -> std::io::Result<()> {
    crate::landlock::set_no_new_privs()?;
    let len = u16::try_from(program.len()).map_err(|_| std::io::Error::other("filter too long"))?;
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
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
