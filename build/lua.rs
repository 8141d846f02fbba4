//! The Lua scripts, read from their folders at build time (build.rs), and checked.
//!
//! A kind's scripts are the `*.lua` files of its folder under `src/kinds/` (`lock/`,
//! `semaphore/`, `multi/`); helpers are the files of a `lib/` folder (`kinds/lib/`,
//! `semaphore/lib/`), written into a script where a line `--@include lib/NAME` (a
//! path under `src/kinds/`, without `.lua`) stands. Each script opens with a header
//! that names its inputs:
//!
//! ```text
//! -- acquire: takes a Lock for a writer, or queues for it.
//! --
//! -- @key lock         the lock
//! -- @key owner?       who holds it (absent: none kept)
//! -- @keys lock queue: for each key of the group, in order (LockKeys' fields)
//! -- @arg token        the token
//! -- @flag fair        in fair mode: a free lock goes to the waiters queued
//! -- @arg record?      the record of who takes it
//! --                   (an indented line goes on with the one above)
//! ```
//!
//! `?` marks a slot that may be left out (only the last ones of their list). A
//! `@flag` is a boolean: the caller gives a `bool`, the script a Lua boolean. From
//! the header come a prologue that gives every slot its name in Lua (`local lock,
//! owner = KEYS[1], KEYS[2]`), so no script body says `KEYS` or `ARGV`, and one Rust
//! struct per script whose fields are the same names. Every slot must be used by the
//! script: a dead one fails the build.

use std::collections::BTreeMap;

/// What a slot carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// Bytes, as given.
    Bytes,
    /// A boolean: "1" or "0" on the wire.
    Flag,
}

/// One named KEYS or ARGV slot.
#[derive(Debug, Clone)]
pub struct Slot {
    pub name: String,
    pub ty: Type,
    pub optional: bool,
    pub doc: String,
}

/// A script's header.
#[derive(Debug, Clone, Default)]
pub struct Header {
    /// The first line, without the script's name.
    pub summary: String,
    /// The rest of the header's prose (what it returns, how it works).
    pub doc: String,
    pub keys: Vec<Slot>,
    /// A repeated group of keys: `LockKeys` fields given for each key of a list.
    pub each: Option<(Vec<String>, String)>,
    pub args: Vec<Slot>,
}

/// The `LockKeys` fields a repeated group may name.
pub const LOCK_KEYS: &[&str] = &["lock", "queue", "patience", "fence", "readers", "owner"];

/// One script, read, assembled and checked.
#[derive(Debug, Clone)]
pub struct Script {
    /// Its path under `src/kinds/`, without `.lua`: "lock/acquire".
    pub path: String,
    pub header: Header,
    /// The text the server runs: the prologue, then the body with its includes
    /// written in, without comments, blank lines or indentation.
    pub text: String,
}

/// Reads a header (the leading comment lines).
pub fn parse_header(path: &str, source: &str) -> Result<Header, String> {
    let err = |line: usize, why: &str| format!("src/kinds/{path}.lua:{}: {why}", line + 1);
    let mut h = Header::default();
    let stem = path.rsplit('/').next().unwrap_or(path);
    // Where the doc of the last slot goes on, if an indented line follows.
    enum Last {
        None,
        Key,
        Each,
        Arg,
        Prose,
    }
    let mut last = Last::None;
    for (n, line) in source.lines().enumerate() {
        let Some(text) = line.strip_prefix("--") else { break };
        if text.starts_with("@include") {
            break;
        }
        if n == 0 {
            let Some(summary) = text.trim().strip_prefix(stem).and_then(|s| s.strip_prefix(':'))
            else {
                return Err(err(
                    n,
                    &format!("the header must open with \"-- {stem}: what it does\""),
                ));
            };
            h.summary = summary.trim().to_string();
            continue;
        }
        let t = text.trim_start();
        if let Some(rest) = t.strip_prefix("@keys ") {
            let Some((names, doc)) = rest.split_once(':') else {
                return Err(err(n, "@keys NAME…: DOC"));
            };
            let names: Vec<String> = names.split_whitespace().map(str::to_string).collect();
            if let Some(bad) = names.iter().find(|name| !LOCK_KEYS.contains(&name.as_str())) {
                return Err(err(
                    n,
                    &format!(
                        "@keys names LockKeys fields ({}); {bad:?} is not one",
                        LOCK_KEYS.join(", ")
                    ),
                ));
            }
            if h.each.is_some() || !h.keys.is_empty() {
                return Err(err(n, "a script takes either @key slots or one @keys group"));
            }
            h.each = Some((names, doc.trim().to_string()));
            last = Last::Each;
        } else if let Some((tag, rest)) = ["@key ", "@arg ", "@flag "]
            .iter()
            .find_map(|tag| t.strip_prefix(tag).map(|rest| (*tag, rest)))
        {
            let rest = rest.trim_start();
            let (name, doc) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            let (name, optional) = match name.strip_suffix('?') {
                Some(name) => (name, true),
                None => (name, false),
            };
            if name.is_empty()
                || !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                || name.starts_with(|c: char| c.is_ascii_digit())
            {
                return Err(err(n, &format!("slot names are lower-case Lua names: {name:?}")));
            }
            let slot = Slot {
                name: name.to_string(),
                ty: if tag == "@flag " { Type::Flag } else { Type::Bytes },
                optional,
                doc: doc.trim().to_string(),
            };
            let list = if tag == "@key " { &mut h.keys } else { &mut h.args };
            if list.last().is_some_and(|s| s.optional) && !optional {
                return Err(err(
                    n,
                    &format!("{name}: only the last slots of a list may be left out (?)"),
                ));
            }
            if tag == "@key " && h.each.is_some() {
                return Err(err(n, "a script takes either @key slots or one @keys group"));
            }
            list.push(slot);
            last = if tag == "@key " { Last::Key } else { Last::Arg };
        } else if t.starts_with('@') {
            return Err(err(
                n,
                &format!("unknown tag: {}", t.split_whitespace().next().unwrap_or(t)),
            ));
        } else if text.starts_with("   ") && !matches!(last, Last::None | Last::Prose) {
            let doc = match last {
                Last::Key => h.keys.last_mut().map(|s| &mut s.doc),
                Last::Arg => h.args.last_mut().map(|s| &mut s.doc),
                Last::Each => h.each.as_mut().map(|e| &mut e.1),
                _ => None,
            };
            if let Some(doc) = doc {
                doc.push(' ');
                doc.push_str(t);
            }
        } else {
            last = if t.is_empty() { Last::None } else { Last::Prose };
            if !t.is_empty() || !h.doc.is_empty() {
                h.doc.push_str(t);
                h.doc.push('\n');
            }
        }
    }
    h.doc = h.doc.trim().to_string();
    if h.keys.is_empty() && h.each.is_none() {
        return Err(format!(
            "src/kinds/{path}.lua: a script names at least one key (@key or @keys)"
        ));
    }
    let mut seen = Vec::new();
    for name in
        h.keys.iter().chain(&h.args).map(|s| &s.name).chain(h.each.iter().flat_map(|e| &e.0))
    {
        if seen.contains(&name) {
            return Err(format!("src/kinds/{path}.lua: the slot {name:?} is named twice"));
        }
        if ["n", "keys"].contains(&name.as_str()) {
            return Err(format!(
                "src/kinds/{path}.lua: {name:?} is taken (the group's count, the group)"
            ));
        }
        seen.push(name);
    }
    Ok(h)
}

/// The prologue that names every slot.
pub fn prologue(h: &Header) -> String {
    let mut out = String::new();
    let mut assign = |names: Vec<String>, values: Vec<String>| {
        if !names.is_empty() {
            out.push_str(&format!("local {} = {}\n", names.join(", "), values.join(", ")));
        }
    };
    assign(
        h.keys.iter().map(|s| s.name.clone()).collect(),
        (1..=h.keys.len()).map(|i| format!("KEYS[{i}]")).collect(),
    );
    let plain: Vec<(usize, &Slot)> =
        h.args.iter().enumerate().filter(|(_, s)| s.ty == Type::Bytes).collect();
    assign(
        plain.iter().map(|(_, s)| s.name.clone()).collect(),
        plain.iter().map(|(i, _)| format!("ARGV[{}]", i + 1)).collect(),
    );
    let flags: Vec<(usize, &Slot)> =
        h.args.iter().enumerate().filter(|(_, s)| s.ty == Type::Flag).collect();
    assign(
        flags.iter().map(|(_, s)| s.name.clone()).collect(),
        flags.iter().map(|(i, _)| format!("ARGV[{}] == '1'", i + 1)).collect(),
    );
    if let Some((names, _)) = &h.each {
        let w = names.len();
        out.push_str(&format!("local n = #KEYS / {w}\n"));
        out.push_str(&format!("local {} = {}\n", names.join(", "), vec!["{}"; w].join(", ")));
        let values: Vec<String> = (0..w)
            .map(|j| {
                if w - j == 1 {
                    format!("KEYS[{w} * i]")
                } else {
                    format!("KEYS[{w} * i - {}]", w - j - 1)
                }
            })
            .collect();
        let targets: Vec<String> = names.iter().map(|name| format!("{name}[i]")).collect();
        out.push_str(&format!(
            "for i = 1, n do {} = {} end\n",
            targets.join(", "),
            values.join(", ")
        ));
    }
    out
}

/// `source` with its includes written in (each looked up by `lib`), and its
/// comments, blank lines and indentation left out.
pub fn expand(
    path: &str,
    source: &str,
    lib: &dyn Fn(&str) -> Option<String>,
    out: &mut String,
    depth: usize,
) -> Result<(), String> {
    if depth > 8 {
        return Err(format!("src/kinds/{path}.lua: includes nested too deep"));
    }
    for line in source.lines() {
        let code = line.trim();
        if let Some(name) = code.strip_prefix("--@include ") {
            let name = name.trim();
            let Some(text) = lib(name) else {
                return Err(format!("src/kinds/{path}.lua: no helper src/kinds/{name}.lua"));
            };
            if !name.contains("/lib/") && !name.starts_with("lib/") {
                return Err(format!(
                    "src/kinds/{path}.lua: {name}: only files of a lib/ folder are included"
                ));
            }
            expand(name, &text, lib, out, depth + 1)?;
            continue;
        }
        if code.is_empty() || code.starts_with("--") {
            continue;
        }
        out.push_str(code);
        out.push('\n');
    }
    Ok(())
}

/// `code` with its string literals blanked ('…' and "…"), so that a name inside a
/// string is not taken for a use.
fn without_strings(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut quote = None;
    let mut escaped = false;
    for c in code.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                    out.push(c);
                }
                if quote.is_some() {
                    out.push(' ');
                }
            }
            None => {
                if c == '\'' || c == '"' {
                    quote = Some(c);
                }
                out.push(c);
            }
        }
    }
    out
}

/// Whether `code` uses the Lua name `name`: as a word, not a field (`x.name`).
pub fn uses(code: &str, name: &str) -> bool {
    let bytes = code.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut from = 0;
    while let Some(at) = code[from..].find(name) {
        let start = from + at;
        let end = start + name.len();
        let before = start.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(end).copied();
        if !before.is_some_and(|b| word(b) || b == b'.' || b == b':') && !after.is_some_and(word) {
            return true;
        }
        from = end;
    }
    false
}

/// Checks a script's body (includes written in) against its header: it never says
/// `KEYS` or `ARGV` itself, and it uses every slot.
pub fn check(path: &str, h: &Header, body: &str) -> Result<(), String> {
    let code = without_strings(body);
    for raw in ["KEYS", "ARGV"] {
        if uses(&code, raw) {
            return Err(format!("src/kinds/{path}.lua: the body says {raw}: name the slot in the header (@key, @arg) and use its name"));
        }
    }
    let names = h
        .keys
        .iter()
        .chain(&h.args)
        .map(|s| s.name.as_str())
        .chain(h.each.iter().flat_map(|e| e.0.iter().map(String::as_str)));
    for name in names {
        if !uses(&code, name) {
            return Err(format!("src/kinds/{path}.lua: the slot {name:?} is never used: a dead slot costs every call its encoding"));
        }
    }
    Ok(())
}

/// Reads, assembles and checks one script.
pub fn build(
    path: &str,
    source: &str,
    lib: &dyn Fn(&str) -> Option<String>,
) -> Result<Script, String> {
    let header = parse_header(path, source)?;
    let mut body = String::new();
    expand(path, source, lib, &mut body, 0)?;
    check(path, &header, &body)?;
    let text = prologue(&header) + &body;
    Ok(Script { path: path.to_string(), header, text })
}

/// `read_acquire` → `ReadAcquire`.
pub fn type_name(stem: &str) -> String {
    stem.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

fn doc_lines(out: &mut String, indent: &str, text: &str) {
    for line in text.lines() {
        if line.is_empty() {
            out.push_str(&format!("{indent}///\n"));
        } else {
            out.push_str(&format!("{indent}/// {line}\n"));
        }
    }
}

/// The Rust of one kind's scripts: per script a struct of its named slots, the
/// script itself, and how the struct is written on the wire (`net::script::Args`).
pub fn rust(scripts: &[Script]) -> String {
    let mut out = String::new();
    out.push_str("// Generated by build.rs from the Lua files beside this module: edit those.\n");
    for s in scripts {
        let stem = s.path.rsplit('/').next().unwrap_or(&s.path);
        let ty = type_name(stem);
        let stat = stem.to_ascii_uppercase();
        let h = &s.header;
        doc_lines(&mut out, "", &format!("{}: {}\n\n`src/kinds/{}.lua`", stem, h.summary, s.path));
        if !h.doc.is_empty() {
            out.push_str("///\n");
            doc_lines(&mut out, "", &h.doc);
        }
        out.push_str(&format!("#[derive(Clone, Copy)]\npub struct {ty}<'a> {{\n"));
        for k in &h.keys {
            doc_lines(&mut out, "    ", &format!("KEYS: {}", k.doc));
            let t = if k.optional { "Option<&'a [u8]>" } else { "&'a [u8]" };
            out.push_str(&format!("    pub {}: {t},\n", k.name));
        }
        if let Some((names, doc)) = &h.each {
            doc_lines(
                &mut out,
                "    ",
                &format!("KEYS, for each key: its {}. {doc}", names.join(", ")),
            );
            out.push_str("    pub keys: &'a [std::sync::Arc<crate::keys::LockKeys>],\n");
        }
        for a in &h.args {
            doc_lines(&mut out, "    ", &format!("ARGV: {}", a.doc));
            let t = match (a.ty, a.optional) {
                (Type::Flag, _) => "bool",
                (Type::Bytes, true) => "Option<&'a [u8]>",
                (Type::Bytes, false) => "&'a [u8]",
            };
            out.push_str(&format!("    pub {}: {t},\n", a.name));
        }
        out.push_str("}\n\n");
        out.push_str(&format!("/// The script of [`{ty}`].\n"));
        out.push_str(&format!(
            "pub static {stat}: std::sync::LazyLock<crate::net::script::Script> = std::sync::LazyLock::new(|| crate::net::script::Script::new({:?}, {:?}));\n\n",
            s.path, s.text
        ));
        out.push_str(&format!("impl crate::net::script::Args for {ty}<'_> {{\n"));
        out.push_str(&format!("    fn script(&self) -> &'static crate::net::script::Script {{\n        &{stat}\n    }}\n\n"));
        let required_keys = h.keys.iter().filter(|k| !k.optional).count();
        let mut keys = format!("{required_keys}");
        for k in h.keys.iter().filter(|k| k.optional) {
            keys.push_str(&format!(" + usize::from(self.{}.is_some())", k.name));
        }
        if let Some((names, _)) = &h.each {
            keys = match names.len() {
                1 => "self.keys.len()".to_string(),
                n => format!("self.keys.len() * {n}"),
            };
        }
        let required_args = h.args.iter().filter(|a| !a.optional).count();
        let mut args = format!("{required_args}");
        for a in h.args.iter().filter(|a| a.optional) {
            args.push_str(&format!(" + usize::from(self.{}.is_some())", a.name));
        }
        out.push_str(&format!(
            "    fn counts(&self) -> (usize, usize) {{\n        ({keys}, {args})\n    }}\n\n"
        ));
        out.push_str("    fn write(&self, buf: &mut Vec<u8>) {\n");
        for k in &h.keys {
            if k.optional {
                out.push_str(&format!("        if let Some(v) = self.{} {{\n            crate::net::resp::push_bulk(buf, v);\n        }}\n", k.name));
            } else {
                out.push_str(&format!(
                    "        crate::net::resp::push_bulk(buf, self.{});\n",
                    k.name
                ));
            }
        }
        if let Some((names, _)) = &h.each {
            out.push_str("        for k in self.keys {\n");
            for name in names {
                out.push_str(&format!(
                    "            crate::net::resp::push_bulk(buf, &k.{name});\n"
                ));
            }
            out.push_str("        }\n");
        }
        for a in &h.args {
            match (a.ty, a.optional) {
                (Type::Flag, _) => out.push_str(&format!("        crate::net::resp::push_bulk(buf, if self.{} {{ b\"1\" }} else {{ b\"0\" }});\n", a.name)),
                (Type::Bytes, true) => out.push_str(&format!("        if let Some(v) = self.{} {{\n            crate::net::resp::push_bulk(buf, v);\n        }}\n", a.name)),
                (Type::Bytes, false) => out.push_str(&format!("        crate::net::resp::push_bulk(buf, self.{});\n", a.name)),
            }
        }
        out.push_str("    }\n\n");
        out.push_str("    fn each(&self, f: &mut dyn FnMut(&[u8], bool)) {\n");
        for k in &h.keys {
            if k.optional {
                out.push_str(&format!(
                    "        if let Some(v) = self.{} {{\n            f(v, true);\n        }}\n",
                    k.name
                ));
            } else {
                out.push_str(&format!("        f(self.{}, true);\n", k.name));
            }
        }
        if let Some((names, _)) = &h.each {
            out.push_str("        for k in self.keys {\n");
            for name in names {
                out.push_str(&format!("            f(&k.{name}, true);\n"));
            }
            out.push_str("        }\n");
        }
        for a in &h.args {
            match (a.ty, a.optional) {
                (Type::Flag, _) => out.push_str(&format!(
                    "        f(if self.{} {{ b\"1\" }} else {{ b\"0\" }}, false);\n",
                    a.name
                )),
                (Type::Bytes, true) => out.push_str(&format!(
                    "        if let Some(v) = self.{} {{\n            f(v, false);\n        }}\n",
                    a.name
                )),
                (Type::Bytes, false) => {
                    out.push_str(&format!("        f(self.{}, false);\n", a.name))
                }
            }
        }
        out.push_str("    }\n}\n\n");
    }
    out
}

/// The list of every script, for the tests: `(path, script)`.
pub fn all(kinds: &BTreeMap<String, Vec<Script>>) -> String {
    let mut out = String::from("// Generated by build.rs from the Lua folders: edit those.\n");
    out.push_str("/// Every script, by its path under `src/kinds/` (`lock/acquire`).\n");
    out.push_str(
        "pub fn all() -> Vec<(&'static str, &'static crate::net::script::Script)> {\n    vec![\n",
    );
    for (kind, scripts) in kinds {
        for s in scripts {
            let stem = s.path.rsplit('/').next().unwrap_or(&s.path);
            out.push_str(&format!(
                "        ({:?}, &*crate::kinds::{kind}::scripts::{}),\n",
                s.path,
                stem.to_ascii_uppercase()
            ));
        }
    }
    out.push_str("    ]\n}\n");
    out
}
