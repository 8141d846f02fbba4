//! The list of every script of every kind, generated at build time from the Lua
//! folders (`build/lua.rs`): the tests run them all on a server.

include!(concat!(env!("OUT_DIR"), "/kinds/all.rs"));
