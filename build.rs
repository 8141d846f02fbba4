//! Builds the Lua scripts from their folders (see build/lua.rs): each kind's scripts
//! (`src/kinds/<kind>/*.lua`) become `$OUT_DIR/kinds/<kind>.rs`, which the kind's
//! `scripts` module includes, and the list of all of them `$OUT_DIR/kinds/all.rs`.
//! A script whose header and body disagree (a dead slot, a raw `KEYS[…]`, a missing
//! helper) fails the build, naming the file and the line.

#[path = "build/lua.rs"]
mod lua;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new("src/kinds");
    println!("cargo:rerun-if-changed=src/kinds");
    println!("cargo:rerun-if-changed=build/lua.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("kinds");
    fs::create_dir_all(&out).expect("OUT_DIR is writable");
    let lib = |name: &str| fs::read_to_string(root.join(format!("{name}.lua"))).ok();
    let mut kinds: BTreeMap<String, Vec<lua::Script>> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut dirs: Vec<PathBuf> = fs::read_dir(root)
        .expect("src/kinds is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let kind = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        if kind == "lib" {
            continue;
        }
        let mut files: Vec<PathBuf> = fs::read_dir(&dir)
            .expect("a kind's folder is readable")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "lua"))
            .collect();
        files.sort();
        if files.is_empty() {
            continue;
        }
        let mut scripts = Vec::new();
        for file in files {
            let stem = file.file_stem().and_then(|n| n.to_str()).unwrap_or_default();
            let path = format!("{kind}/{stem}");
            let source = fs::read_to_string(&file).expect("a script is readable");
            match lua::build(&path, &source, &lib) {
                Ok(script) => scripts.push(script),
                Err(why) => failures.push(why),
            }
        }
        kinds.insert(kind, scripts);
    }
    if !failures.is_empty() {
        for why in &failures {
            println!("cargo:warning={why}");
        }
        panic!("the Lua scripts do not build:\n{}", failures.join("\n"));
    }
    for (kind, scripts) in &kinds {
        write(&out.join(format!("{kind}.rs")), &lua::rust(scripts));
    }
    write(&out.join("all.rs"), &lua::all(&kinds));
}

/// Writes `text` to `path` unless it holds that already (no rebuild for nothing).
fn write(path: &Path, text: &str) {
    if fs::read_to_string(path).ok().as_deref() != Some(text) {
        fs::write(path, text).expect("OUT_DIR is writable");
    }
}
