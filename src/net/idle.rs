//! Idle connections (or wake subscribers) kept per endpoint, least recently used
//! closed first beyond a cap: the registry's connections and `wake`'s subscribers.

use std::sync::Arc;

/// Idle connections (or subscribers), one per endpoint key, each with when it was
/// last used. A process uses one or a few, so a list searched by the key's address
/// (then its text) beats hashing the key.
pub(crate) struct Idle<T> {
    list: Vec<(Arc<str>, T, u64)>,
    /// Counts uses: the entry with the smallest stamp is the least recently used.
    clock: u64,
}

impl<T> Default for Idle<T> {
    fn default() -> Self {
        Idle { list: Vec::new(), clock: 0 }
    }
}

impl<T> Idle<T> {
    pub(crate) fn position(&self, key: &Arc<str>) -> Option<usize> {
        self.list.iter().position(|(k, _, _)| Arc::ptr_eq(k, key) || **k == **key)
    }

    /// The entry at `at`, marked as just used.
    pub(crate) fn used(&mut self, at: usize) -> &mut T {
        self.clock += 1;
        self.list[at].2 = self.clock;
        &mut self.list[at].1
    }

    pub(crate) fn take(&mut self, key: &Arc<str>) -> Option<T> {
        let at = self.position(key)?;
        Some(self.list.swap_remove(at).1)
    }

    /// Keeps `value` for `key`, closing the least recently used others beyond `cap`.
    /// Returns where it is.
    pub(crate) fn put(&mut self, key: &Arc<str>, value: T, cap: usize) -> usize {
        if let Some(at) = self.position(key) {
            self.list[at].1 = value;
            self.used(at);
            return at;
        }
        while self.list.len() >= cap.max(1) {
            let Some(oldest) =
                self.list.iter().enumerate().min_by_key(|(_, e)| e.2).map(|(i, _)| i)
            else {
                break;
            };
            self.list.swap_remove(oldest);
        }
        self.list.push((key.clone(), value, 0));
        let at = self.list.len() - 1;
        self.used(at);
        at
    }

    /// Runs `f` on every entry.
    pub(crate) fn each(&mut self, f: impl FnMut(&mut T)) {
        self.list.iter_mut().map(|(_, value, _)| value).for_each(f);
    }

    pub(crate) fn clear(&mut self) {
        self.list.clear();
    }

    /// Empties the list without closing anything (a forked child's inherited sockets).
    pub(crate) fn forget_all(&mut self) {
        for (_, value, _) in self.list.drain(..) {
            std::mem::forget(value);
        }
    }
}
