//! The Lua the servers run, one script per file under `lua/`: `lock/` and `shared/`
//! hold a `Lock`'s scripts, `semaphore/` a `Semaphore`'s, `multi/` a `MultiLock`'s, and `lib/` the helpers they
//! share. Each file opens with a header naming its KEYS and ARGV and what it returns,
//! so the scripts can be read, diffed and linted as Lua.
//!
//! A line `--@include NAME` stands for the helper `NAME` (`LIB`), written in at that
//! place: a helper defined inside a branch costs only the calls that take it. Each
//! script is assembled once per process, with the comment lines, blank lines and
//! indentation left out: `EVAL` sends the text, and the server hashes it. The line
//! numbers in a server's error are the assembled text's, which `Script::explain`
//! reads.

use crate::net::script::Script;

/// The helpers `--@include` names.
const LIB: &[(&str, &str)] = &[
    ("tell", include_str!("lua/lib/tell.lua")),
    ("stamp", include_str!("lua/lib/stamp.lua")),
    ("parse", include_str!("lua/lib/parse.lua")),
    ("readers", include_str!("lua/lib/readers.lua")),
    ("live_waiters", include_str!("lua/lib/live_waiters.lua")),
    ("own", include_str!("lua/lib/own.lua")),
    ("next_fence", include_str!("lua/lib/next_fence.lua")),
    ("grant", include_str!("lua/lib/grant.lua")),
    ("enqueue", include_str!("lua/lib/enqueue.lua")),
    ("notify", include_str!("lua/lib/notify.lua")),
    ("permits", include_str!("lua/semaphore/permits.lua")),
    ("hand_out", include_str!("lua/semaphore/hand_out.lua")),
];

/// The scripts, by their file's name under `lua/`.
const FILES: &[(&str, &str)] = &[
    ("lock/take", include_str!("lua/lock/take.lua")),
    ("lock/fence", include_str!("lua/lock/fence.lua")),
    ("lock/acquire", include_str!("lua/lock/acquire.lua")),
    ("lock/release", include_str!("lua/lock/release.lua")),
    ("lock/kick", include_str!("lua/lock/kick.lua")),
    ("lock/cancel", include_str!("lua/lock/cancel.lua")),
    ("lock/renew", include_str!("lua/lock/renew.lua")),
    ("lock/inspect", include_str!("lua/lock/inspect.lua")),
    ("shared/read_acquire", include_str!("lua/shared/read_acquire.lua")),
    ("shared/read_release", include_str!("lua/shared/read_release.lua")),
    ("shared/downgrade", include_str!("lua/shared/downgrade.lua")),
    ("shared/read_renew", include_str!("lua/shared/read_renew.lua")),
    ("shared/holds", include_str!("lua/shared/holds.lua")),
    ("semaphore/acquire", include_str!("lua/semaphore/acquire.lua")),
    ("semaphore/release", include_str!("lua/semaphore/release.lua")),
    ("semaphore/renew", include_str!("lua/semaphore/renew.lua")),
    ("semaphore/cancel", include_str!("lua/semaphore/cancel.lua")),
    ("semaphore/state", include_str!("lua/semaphore/state.lua")),
    ("semaphore/inspect", include_str!("lua/semaphore/inspect.lua")),
    ("multi/acquire", include_str!("lua/multi/acquire.lua")),
    ("multi/release", include_str!("lua/multi/release.lua")),
    ("multi/cancel", include_str!("lua/multi/cancel.lua")),
    ("multi/renew", include_str!("lua/multi/renew.lua")),
    ("multi/fence", include_str!("lua/multi/fence.lua")),
    ("multi/state", include_str!("lua/multi/state.lua")),
    ("multi/take", include_str!("lua/multi/take.lua")),
];

/// The script of the file `lua/<name>.lua`, assembled.
pub(crate) fn script(name: &str) -> Script {
    match FILES.iter().find(|(n, _)| *n == name) {
        Some((_, text)) => Script::new(assemble(text)),
        // Never a panic in PHP: the tests below fail first.
        None => Script::new(format!("error('redis_lock: no Lua script {name:?}')\n")),
    }
}

/// `main` with its includes written in and its comments and indentation left out.
fn assemble(main: &str) -> String {
    let mut out = String::with_capacity(main.len() * 2);
    expand(main, &mut out, 0);
    out
}

fn expand(text: &str, out: &mut String, depth: usize) {
    for line in text.lines() {
        let code = line.trim();
        if let Some(name) = code.strip_prefix("--@include ") {
            let name = name.trim();
            match LIB.iter().find(|(n, _)| *n == name) {
                Some((_, body)) if depth < 8 => expand(body, out, depth + 1),
                // Never a panic in PHP: the script fails on the server, naming the
                // helper, and the tests below fail first.
                _ => out.push_str(&format!("error('redis_lock: no Lua helper {name:?}')\n")),
            }
            continue;
        }
        if code.is_empty() || code.starts_with("--") {
            continue;
        }
        out.push_str(code);
        out.push('\n');
    }
}

/// Every script, by its file's name: for the tests (`tests/core.rs` loads them all on a server).
pub fn all() -> Vec<(&'static str, &'static Script)> {
    use super::{multi, scripts, semaphore, shared};
    vec![
        ("lock/take", &*scripts::TAKE),
        ("lock/fence", &*scripts::FENCE),
        ("lock/acquire", &*scripts::ACQUIRE),
        ("lock/release", &*scripts::RELEASE),
        ("lock/kick", &*scripts::KICK),
        ("lock/cancel", &*scripts::CANCEL),
        ("lock/renew", &*scripts::RENEW),
        ("lock/inspect", &*scripts::INSPECT),
        ("shared/read_acquire", &*shared::READ_ACQUIRE),
        ("shared/read_release", &*shared::READ_RELEASE),
        ("shared/downgrade", &*shared::DOWNGRADE),
        ("shared/read_renew", &*shared::READ_RENEW),
        ("shared/holds", &*shared::HOLDS),
        ("semaphore/acquire", &*semaphore::scripts::ACQUIRE),
        ("semaphore/release", &*semaphore::scripts::RELEASE),
        ("semaphore/renew", &*semaphore::scripts::RENEW),
        ("semaphore/cancel", &*semaphore::scripts::CANCEL),
        ("semaphore/state", &*semaphore::scripts::STATE),
        ("semaphore/inspect", &*semaphore::scripts::INSPECT),
        ("multi/acquire", &*multi::ACQUIRE),
        ("multi/release", &*multi::RELEASE),
        ("multi/cancel", &*multi::CANCEL),
        ("multi/renew", &*multi::RENEW),
        ("multi/fence", &*multi::FENCE),
        ("multi/state", &*multi::STATE),
        ("multi/take", &*multi::TAKE),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_include_is_found() {
        assert_eq!(all().len(), FILES.len(), "a script file that no static runs, or the other way round");
        for (name, s) in all() {
            assert!(!s.source().contains("no Lua"), "{name}: not found");
            assert!(!s.source().contains("no Lua helper"), "{name}: an --@include names no helper:\n{}", s.source());
            assert!(!s.source().contains("--"), "{name}: a comment was left in");
        }
        assert!(assemble("--@include nothing_by_that_name\nreturn 1").starts_with("error('redis_lock: no Lua helper \"nothing_by_that_name\"')"));
    }

    #[test]
    fn includes_are_written_in_where_they_stand() {
        let text = assemble("  -- a comment\nlocal a = 1\n\n    --@include tell\nreturn a\n");
        assert!(text.starts_with("local a = 1\nlocal function tell(ch, msg)\n"), "{text}");
        assert!(text.ends_with("end\nreturn a\n"), "{text}");
    }

    #[test]
    fn every_file_has_its_header() {
        for (name, text) in FILES.iter().chain(LIB) {
            assert!(text.starts_with("-- "), "{name}: no header comment");
        }
        for (name, text) in FILES {
            let header: String = text.lines().take_while(|l| l.starts_with("--")).collect();
            assert!(header.contains("KEYS") && header.contains("Returns"), "{name}: the header names no KEYS, or not what it returns");
        }
    }
}
