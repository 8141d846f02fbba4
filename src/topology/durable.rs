//! The acknowledgement a durable grant waits for (`durable`, `durable_aof`): the
//! command that asks for it, and what its reply says. `renew` sends it after a
//! pipeline of renewals (one hold's check, or the watchdog's round).

use crate::net::call::Call;
use crate::net::resp;
use crate::terms::Durable;
use redis::Value;

/// Hands `with` the commands that wait for each of `all`'s acknowledgements of this
/// connection's writes: `WAIT replicas ms`, or with `aof` `WAITAOF 1 replicas ms`.
pub fn wait_calls<T>(all: &[Durable], with: impl FnOnce(&[Call<'_>]) -> T) -> T {
    let args: Vec<(bool, String, String)> = all
        .iter()
        .map(|d| (d.aof, d.replicas.to_string(), d.timeout.as_millis().max(1).to_string()))
        .collect();
    let parts: Vec<Vec<&[u8]>> = args
        .iter()
        .map(|(aof, count, ms)| {
            let (count, ms) = (count.as_bytes(), ms.as_bytes());
            if *aof {
                vec![&b"WAITAOF"[..], b"1", count, ms]
            } else {
                vec![&b"WAIT"[..], count, ms]
            }
        })
        .collect();
    let calls: Vec<Call<'_>> = parts.iter().map(|p| Call::Command(p)).collect();
    with(&calls)
}

/// Whether `reply` (to `wait_calls`) acknowledges what `d` asks: `Ok(())`, or what it
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
    all.reduce(|a, b| Durable {
        replicas: a.replicas.max(b.replicas),
        aof: a.aof || b.aof,
        timeout: a.timeout.max(b.timeout),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const ONE: Durable = Durable { replicas: 1, aof: false, timeout: Duration::from_millis(100) };
    const AOF: Durable = Durable { replicas: 1, aof: true, timeout: Duration::from_millis(100) };

    /// Enough acknowledgements pass, fewer say how many, and a reply of another shape
    /// (a broken or hostile server) is told apart rather than read as a count.
    #[test]
    fn judges_wait_and_waitaof_replies() {
        assert_eq!(judge(&Value::Int(1), &ONE), Some(Ok(())));
        assert_eq!(judge(&Value::Int(3), &ONE), Some(Ok(())));
        assert_eq!(
            judge(&Value::Int(0), &ONE),
            Some(Err("0 of 1 replicas acknowledged it within 100 ms (WAIT)".to_string()))
        );
        assert_eq!(judge(&Value::Array(vec![Value::Int(1), Value::Int(1)]), &AOF), Some(Ok(())));
        let short =
            judge(&Value::Array(vec![Value::Int(0), Value::Int(1)]), &AOF).unwrap().unwrap_err();
        assert!(short.contains("did not have it on disk"), "{short}");
        let short =
            judge(&Value::Array(vec![Value::Int(1), Value::Int(0)]), &AOF).unwrap().unwrap_err();
        assert!(short.contains("had it on disk and 0 of 1 replicas'"), "{short}");
        for bad in [
            Value::Nil,
            Value::Int(1),
            Value::Array(vec![Value::Int(1)]),
            Value::Array(vec![Value::Nil, Value::Int(1)]),
        ] {
            assert_eq!(judge(&bad, &AOF), None, "{bad:?}");
        }
        assert_eq!(judge(&Value::Array(vec![Value::Int(1), Value::Int(1)]), &ONE), None);
        assert_eq!(judge(&Value::BulkString(b"1".to_vec()), &ONE), None);
    }

    /// One wait after a pipeline serves every hold in it: the most replicas, the AOF
    /// if any asks, the longest timeout.
    #[test]
    fn the_strictest_of_several() {
        let a = Durable { replicas: 2, aof: false, timeout: Duration::from_millis(50) };
        assert_eq!(
            strictest([ONE, a, AOF].into_iter()),
            Some(Durable { replicas: 2, aof: true, timeout: Duration::from_millis(100) })
        );
        assert_eq!(strictest(std::iter::empty()), None);
    }
}
