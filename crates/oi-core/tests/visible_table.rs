//! The page's copy of the rule for showing code, `crates/oi-server/web/visible_table.js`, is
//! what `oi_core::visible::web_table()` generates; and, where Node.js is installed, the file
//! run as JavaScript meets the shared vectors too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

fn table_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../oi-server/web/visible_table.js")
}

#[test]
fn visible_table_js_is_generated_from_the_rule() {
    let generated = oi_core::visible::web_table();
    let path = table_path();
    if std::env::var_os("OI_REGENERATE").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} differs from what oi_core::visible::web_table() generates; regenerate it with\n    OI_REGENERATE=1 cargo test -p oi-core --test visible_table\nand commit it",
        path.display()
    );
}

#[test]
fn visible_table_js_meets_the_shared_vectors_in_node() {
    if Command::new("node").arg("--version").output().is_err() {
        eprintln!("SKIPPED: node is not installed");
        return;
    }
    let vectors = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/visible_vectors.json");
    let script = format!(
        r#"{table}
const fs = require("fs");
const data = JSON.parse(fs.readFileSync({vectors:?}, "utf8"));
const wrong = [];
for (const v of data.vectors) {{
  const got = OI_VISIBLE.show(v.input);
  const joined = OI_VISIBLE.pieces(v.input).map((p) => p.text).join("");
  if (got.text !== v.shown || got.hidden.length !== v.hidden || joined !== v.shown) wrong.push([v.name, got]);
}}
if (OI_VISIBLE.unicode !== data.unicode) wrong.push(["unicode", OI_VISIBLE.unicode]);
if (OI_VISIBLE.show("\ud800x").text !== "<U+D800>x") wrong.push(["lone surrogate"]);
console.log(JSON.stringify(wrong));
"#,
        table = oi_core::visible::web_table(),
        vectors = vectors.display().to_string(),
    );
    let out = Command::new("node")
        .arg("-e")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
}
