//! `script`: a PHP file on a thread per argument (the nemesis's `--threads`).

use crate::php::{eval, request, thread};

/// `script`: the PHP file `$SCRIPT` on one PHP thread per line of the file `$ARGS`,
/// all at once, each in one request with `$argv = [$SCRIPT, that line]`. Tools that
/// want PHP threads rather than processes use it (the nemesis's `--threads`). When
/// every thread has ended, one line per thread: `thread N: ended|failed`, then what
/// it printed, indented. "failed" is a fatal error, an uncaught throwable or `exit`.
/// True when every thread ended.
pub(super) fn script() -> bool {
    let (Ok(path), Ok(args)) = (std::env::var("SCRIPT"), std::env::var("ARGS")) else {
        println!(
            "not ok - script needs SCRIPT (a PHP file) and ARGS (a file, one argument per thread)"
        );
        return false;
    };
    let Ok(lines) = std::fs::read_to_string(&args) else {
        println!("not ok - script: cannot read ARGS {args}");
        return false;
    };
    let threads: Vec<_> = lines
        .lines()
        .filter(|l| !l.is_empty())
        .map(|arg| {
            // Both strings reach PHP as hex, so no quoting can break the code.
            let code = format!(
                "$argv = [hex2bin('{}'), hex2bin('{}')]; $argc = 2;
                 try {{ require $argv[0]; echo \"\\n#ended\\n\"; }}
                 catch (Throwable $e) {{ echo 'uncaught ', $e, \"\\n\"; }}",
                hex(&path),
                hex(arg)
            );
            thread(move || {
                let mut completed = false;
                let out = request(|| completed = eval(&code));
                (completed, out)
            })
        })
        .collect();
    let mut all = true;
    for (i, t) in threads.into_iter().enumerate() {
        let (completed, out) = t.join().unwrap_or((false, "the thread panicked".to_owned()));
        // The marker is printed only when the file ran to its end (`exit` unwinds past it).
        let ended = completed && out.trim_end().ends_with("#ended");
        let out = out.trim_end().trim_end_matches("#ended").trim_end();
        all &= ended;
        println!("thread {i}: {}", if ended { "ended" } else { "failed" });
        for line in out.lines() {
            println!("    {line}");
        }
    }
    all
}

/// Bytes as lowercase hex, for PHP's hex2bin().
fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}
