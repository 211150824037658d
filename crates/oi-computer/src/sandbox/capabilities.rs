//! Linux capabilities: whether oi holds `CAP_SYS_ADMIN` (then a seccomp filter can be installed
//! in a child without `no_new_privs`, which would break `sudo`), and giving up every
//! capability in a sandboxed child for good.
//!
//! Every `unsafe` block here is a one-syscall wrapper with the reason it is sound.

use crate::base::errno::errno;

/// `CAP_SYS_ADMIN`.
const CAP_SYS_ADMIN: u32 = 21;
/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;
/// Capability numbers the bounding-set loop tries (the kernel knows fewer; the rest fail
/// with `EINVAL`, which ends the loop).
const MAX_CAPABILITIES: libc::c_ulong = 64;

/// `SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
/// SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
/// SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED`: uid 0 gains nothing at exec, and no one can undo it.
const LOCKED_SECUREBITS: libc::c_ulong = 0b1110_1111;

/// `struct __user_cap_header_struct`.
#[repr(C)]
struct Header {
    version: u32,
    pid: libc::c_int,
}

/// `struct __user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Data {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Whether this process has `CAP_SYS_ADMIN` in its effective set.
pub(crate) fn has_sys_admin() -> bool {
    let mut header = Header {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: `header` and `data` are valid, writable structs of the sizes the version-3 ABI
    // expects (one header, two data words); the kernel fills them and keeps no pointer.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_capget,
            &mut header as *mut Header,
            data.as_mut_ptr(),
        )
    };
    rc == 0 && data[0].effective & (1 << CAP_SYS_ADMIN) != 0
}

/// In the child: locks the securebits so that exec as uid 0 regains nothing, empties the
/// bounding set and the ambient set, and clears the effective, permitted and inheritable
/// sets. Only syscalls on stack memory: safe between fork and exec. The error is the errno.
pub(crate) fn drop_all() -> Result<(), i32> {
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_SECUREBITS, LOCKED_SECUREBITS, 0, 0, 0) } != 0 {
        return Err(errno());
    }
    for cap in 0..MAX_CAPABILITIES {
        // SAFETY: prctl with integer arguments only.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
            let errno = errno();
            if errno == libc::EINVAL {
                break; // past the last capability this kernel knows
            }
            return Err(errno);
        }
    }
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    if rc != 0 && errno() != libc::EINVAL {
        return Err(errno()); // EINVAL: a kernel without ambient capabilities
    }
    let mut header = Header {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [Data::default(); 2];
    // SAFETY: `header` and `data` are valid structs of the sizes the version-3 ABI expects;
    // the kernel only reads `data` (and may write the preferred version into `header`).
    let rc = unsafe { libc::syscall(libc::SYS_capset, &mut header as *mut Header, data.as_ptr()) };
    if rc != 0 {
        return Err(errno());
    }
    Ok(())
}
