//! Programs that format, erase or relabel a disk when given one of their verbs or options
//! (`cryptsetup luksFormat`, `nvme format`, `hdparm --security-erase`, `pvcreate`, …).

use crate::word::Field;

/// Programs that write a new label or layout onto the devices they are given, whatever the
/// options.
const LABELLERS: &[&str] = &[
    "pvcreate",
    "pvremove",
    "vgcreate",
    "vgextend",
    "sg_sanitize",
    "sg_unmap",
    "nvme-format",
];

/// (program, verbs or options that format or erase a disk).
const VERBS: &[(&str, &[&str])] = &[
    (
        "cryptsetup",
        &["luksFormat", "erase", "luksErase", "reencrypt", "format"],
    ),
    ("nvme", &["format", "sanitize", "delete-ns", "write-zeroes"]),
    (
        "hdparm",
        &[
            "--security-erase",
            "--security-erase-enhanced",
            "--trim-sector-ranges",
            "--trim-sector-ranges-stdin",
            "--write-sector",
            "--make-bad-sector",
            "--dco-restore",
        ],
    ),
    (
        "mdadm",
        &["--create", "-C", "--build", "-B", "--zero-superblock"],
    ),
    (
        "zpool",
        &["create", "destroy", "labelclear", "add", "replace"],
    ),
    ("sg_format", &["--format", "-F"]),
    ("lvremove", &["-f", "--force", "-y", "--yes"]),
    ("dmsetup", &["remove_all", "wipe_table"]),
    ("flashrom", &["-w", "--write", "-E", "--erase"]),
];

/// Why `name args…` formats or erases a disk, if it does.
pub(super) fn formats(name: &str, args: &[Field]) -> Option<String> {
    if LABELLERS.contains(&name) && args.iter().any(|a| !a.is("--help") && !a.is("-h")) {
        return Some(format!(
            "it writes a new label onto a disk (`{name} {}`)",
            shown(args)
        ));
    }
    let (_, verbs) = VERBS.iter().find(|(program, _)| *program == name)?;
    let verb = args.iter().find_map(|arg| {
        let text = arg.known()?;
        let text = text.split('=').next().unwrap_or(&text).to_owned();
        verbs.contains(&text.as_str()).then_some(text)
    })?;
    Some(format!(
        "it formats or erases a disk (`{name} {verb}` in `{name} {}`)",
        shown(args)
    ))
}

fn shown(args: &[Field]) -> String {
    args.iter().map(Field::shown).collect::<Vec<_>>().join(" ")
}
