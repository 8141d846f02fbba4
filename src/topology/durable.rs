//! The acknowledgement a durable grant waits for (`durable`, `durable_aof`): the
//! command that asks for it, and what its reply says. `Route::confirm` sends it after
//! one hold's check; the watchdog after a pipeline of renewals.

use crate::net::call::Call;
use crate::net::resp;
use crate::terms::Durable;
use redis::Value;

/// Hands `with` the command that waits for `d`'s acknowledgements of this
/// connection's writes: `WAIT replicas ms`, or with `aof` `WAITAOF 1 replicas ms`.
pub fn wait_call<T>(d: &Durable, with: impl FnOnce(&Call<'_>) -> T) -> T {
    let ms = d.timeout.as_millis().max(1).to_string();
    let count = d.replicas.to_string();
    if d.aof {
        with(&Call::Command(&[b"WAITAOF", b"1", count.as_bytes(), ms.as_bytes()]))
    } else {
        with(&Call::Command(&[b"WAIT", count.as_bytes(), ms.as_bytes()]))
    }
}

/// Whether `reply` (to `wait_call`) acknowledges what `d` asks: `Ok(())`, or what it
/// did acknowledge, for a message; `None` for a reply of another shape.
pub fn judge(reply: &Value, d: &Durable) -> Option<Result<(), String>> {
    let ms = d.timeout.as_millis().max(1);
    let enough = |n: i64, want: u32| n >= i64::from(want);
    match (reply, d.aof) {
        (Value::Int(n), false) => Some(if enough(*n, d.replicas) {
            Ok(())
        } else {
            Err(format!("{n} of {} replicas acknowledged it within {ms} ms (WAIT)", d.replicas))
        }),
        (Value::Array(both), true) if both.len() == 2 => {
            let (local, replicas) = (resp::int(&both[0])?, resp::int(&both[1])?);
            Some(if enough(local, 1) && enough(replicas, d.replicas) {
                Ok(())
            } else {
                Err(format!(
                    "its own AOF {} it on disk and {replicas} of {} replicas' did within {ms} ms (WAITAOF)",
                    if enough(local, 1) { "had" } else { "did not have" },
                    d.replicas
                ))
            })
        }
        _ => None,
    }
}

/// The strictest of `all`: the most replicas, the AOF if any asks, the longest
/// timeout (one wait after a pipeline of renewals serves them all).
pub fn strictest(all: impl Iterator<Item = Durable>) -> Option<Durable> {
    all.reduce(|a, b| Durable { replicas: a.replicas.max(b.replicas), aof: a.aof || b.aof, timeout: a.timeout.max(b.timeout) })
}
