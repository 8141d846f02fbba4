//! A `Semaphore`'s scripts, generated at build time from the Lua files beside this
//! module (`build/lua.rs`). Every one first reclaims the holds whose lease has ended
//! (on Redis's clock, `lib/permits.lua`), then takes, frees, renews or reports
//! permits, and hands freed permits to the queued waiters that now fit.

include!(concat!(env!("OUT_DIR"), "/kinds/semaphore.rs"));
