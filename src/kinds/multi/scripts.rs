//! A `MultiLock`'s scripts, generated at build time from the Lua files beside this
//! module (`build/lua.rs`). Each takes a group's keys as `LockKeys`, in the
//! MultiLock's order.

include!(concat!(env!("OUT_DIR"), "/kinds/multi.rs"));
