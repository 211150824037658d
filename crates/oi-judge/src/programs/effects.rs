//! The effects a command is blocked for: a recursive delete of a protected place, a write
//! onto a disk device.

use crate::context::Context;
use crate::places::{self, Harm};
use crate::word::Field;

/// Blocks when one of `targets` is protected from deletion; `shown` writes the command.
pub(super) fn delete_targets(
    w: &mut dyn Context,
    targets: &[&Field],
    shown: &dyn Fn(&Field) -> String,
) {
    for target in targets {
        for pattern in w.targets(target) {
            if let Some(what) = w.places().protected(&pattern, Harm::Delete) {
                w.block(deletes(what, &shown(target), target.has_unknown()));
                return;
            }
        }
    }
}

/// The reason for blocking a recursive delete of `target`.
pub(super) fn deletes(what: &str, command: &str, unknown: bool) -> String {
    if unknown {
        format!(
            "it recursively deletes a path oi cannot know before the code runs, which may be {what} (`{command}`)"
        )
    } else {
        format!("it recursively deletes {what} (`{command}`)")
    }
}

/// Blocks writing onto a disk device.
pub(super) fn disk_write(w: &mut dyn Context, target: &Field, how: &str) {
    if target.starts_unknown() {
        return;
    }
    if w.targets(target).iter().any(places::is_disk) {
        w.block(format!(
            "it overwrites a disk device (`{how}{}`)",
            target.shown()
        ));
    }
}

/// Blocks emptying or overwriting every file of a protected place (`shred -u ~/*`,
/// `truncate -s0 ~/*`, `sed -i d ~/*`): as bad as deleting it. The working directory itself
/// is not protected here (`sed -i 's/a/b/' *` in a project is ordinary), its parents are.
pub(super) fn clobber_targets(w: &mut dyn Context, targets: &[&Field], how: &str) {
    for target in targets {
        for pattern in w.targets(target) {
            if let Some(what) = w.places().protected(&pattern, Harm::Permissions) {
                w.block(format!(
                    "it empties or overwrites the files of {what} (`{how} {}`)",
                    target.shown()
                ));
                return;
            }
        }
    }
}
