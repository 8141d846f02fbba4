//! Real servers for the core's tests: a throwaway `redis-server` on a free
//! loopback port, and a TCP relay in front of it that can lose a reply, the
//! way a network does. `REDIS_LOCK_TEST_SERVER=valkey` makes them Valkey's.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// A server program (`server`, `cli`): `redis-server`, or `valkey-server` when
/// `REDIS_LOCK_TEST_SERVER=valkey`.
pub fn bin(program: &str) -> String {
    let flavour = std::env::var("REDIS_LOCK_TEST_SERVER").unwrap_or_else(|_| "redis".to_string());
    format!("{flavour}-{program}")
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// A redis-server that lives as long as this value.
pub struct RedisServer {
    pub port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

impl RedisServer {
    pub fn start() -> Self {
        Self::start_free(&[])
    }

    pub fn start_on(port: u16) -> Self {
        Self::start_with(port, &[])
    }

    /// A server with extra `redis-server` arguments on `port`, which the caller needs.
    pub fn start_with(port: u16, extra: &[&str]) -> Self {
        Self::try_start(port, extra).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A server on a port of its own choosing. A free port can be taken between
    /// the probe and the server's bind (by another test's server or a client's
    /// ephemeral port): a server that exits at start is tried again elsewhere.
    pub fn start_free(extra: &[&str]) -> Self {
        let mut last = String::new();
        for _ in 0..5 {
            match Self::try_start(free_port(), extra) {
                Ok(server) => return server,
                Err(e) => last = e,
            }
        }
        panic!("{last}, five times")
    }

    fn try_start(port: u16, extra: &[&str]) -> Result<Self, String> {
        let dir =
            std::env::temp_dir().join(format!("redis-lock-cargo-{port}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let child = Command::new(bin("server"))
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .args(extra)
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{} must be installed (make test installs it): {e}", bin("server"))
            });
        let mut server = RedisServer { port, dir, child: Some(child) };
        // A loaded machine (CI runs several roots at once) can be slow to exec.
        let deadline = Instant::now() + Duration::from_secs(15);
        while server.cmd(&["PING"]).is_err() {
            let exited = server.child.as_mut().and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                return Err(format!("{} exited at start on {port} ({status})", bin("server")));
            }
            if Instant::now() >= deadline {
                return Err(format!("{} did not start on {port}", bin("server")));
            }
            thread::sleep(Duration::from_millis(10));
        }
        Ok(server)
    }

    pub fn dsn(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Runs one command on a connection of its own.
    pub fn cmd(&self, args: &[&str]) -> redis::RedisResult<redis::Value> {
        let client = redis::Client::open(self.dsn())?;
        let mut conn = client.get_connection_with_timeout(Duration::from_secs(2))?;
        let mut c = redis::cmd(args[0]);
        for a in &args[1..] {
            c.arg(*a);
        }
        c.query(&mut conn)
    }

    /// Sends `signal` to the server: SIGSTOP hangs it (its host still accepts and
    /// acknowledges, the server answers nothing), SIGCONT wakes it.
    pub fn signal(&self, signal: i32) {
        if let Some(child) = &self.child {
            // SAFETY: a plain kill(2) of our own child.
            unsafe { libc::kill(child.id() as i32, signal) };
        }
    }

    /// How many `SET`s the server has run (INFO commandstats).
    pub fn set_calls(&self) -> u64 {
        let info = match self.cmd(&["INFO", "commandstats"]) {
            Ok(redis::Value::BulkString(b)) => String::from_utf8_lossy(&b).into_owned(),
            Ok(redis::Value::VerbatimString { text, .. }) => text,
            other => panic!("INFO: {other:?}"),
        };
        info.lines()
            .find_map(|l| l.strip_prefix("cmdstat_set:calls="))
            .and_then(|rest| rest.split(',').next()?.parse().ok())
            .unwrap_or(0)
    }

    /// SIGKILL, no goodbye.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A Redis Cluster of three masters, no replicas, made with `redis-cli --cluster create`.
pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
}

impl RedisCluster {
    pub fn start() -> Self {
        let nodes: Vec<RedisServer> = (0..3)
            // The bus port is chosen too: port + 10000 overflows for a free port above 55535.
            .map(|_| {
                let mut last = String::new();
                for _ in 0..5 {
                    let bus = free_port().to_string();
                    let extra = [
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        "nodes.conf",
                        "--cluster-port",
                        &bus,
                    ];
                    match RedisServer::try_start(free_port(), &extra) {
                        Ok(node) => return node,
                        Err(e) => last = e,
                    }
                }
                panic!("{last}, five times")
            })
            .collect();
        let addrs: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect();
        let status = Command::new(bin("cli"))
            .args(["--cluster", "create"])
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("{} must be installed: {e}", bin("cli")));
        assert!(status.success(), "cluster create failed");
        let deadline = Instant::now() + Duration::from_secs(20);
        for n in &nodes {
            loop {
                let info = n
                    .cmd(&["CLUSTER", "INFO"])
                    .ok()
                    .and_then(|v| redis::from_redis_value::<String>(v).ok());
                if info.is_some_and(|i| i.contains("cluster_state:ok")) {
                    break;
                }
                assert!(Instant::now() < deadline, "cluster did not converge");
                thread::sleep(Duration::from_millis(50));
            }
        }
        RedisCluster { nodes }
    }

    /// The node that serves `key`'s slot.
    pub fn owner(&self, key: &str) -> &RedisServer {
        self.nodes
            .iter()
            .find(|n| matches!(n.cmd(&["EXISTS", key]), Ok(redis::Value::Int(_))))
            .expect("an owner")
    }

    pub fn id(node: &RedisServer) -> String {
        match node.cmd(&["CLUSTER", "MYID"]) {
            Ok(redis::Value::BulkString(b)) => String::from_utf8(b).expect("utf-8 id"),
            other => panic!("CLUSTER MYID: {other:?}"),
        }
    }
}

/// A relay from a loopback port to a server, which can drop replies.
pub struct Relay {
    pub port: u16,
    drop_replies: Arc<AtomicUsize>,
}

impl Relay {
    pub fn start(upstream: u16) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind relay");
        let port = listener.local_addr().expect("relay addr").port();
        let drop_replies = Arc::new(AtomicUsize::new(0));
        let drops = drop_replies.clone();
        thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else { continue };
                let (c2, s2) =
                    (client.try_clone().expect("clone"), server.try_clone().expect("clone"));
                let drops = drops.clone();
                thread::spawn(move || pipe(client, server, None));
                thread::spawn(move || pipe(s2, c2, Some(drops)));
            }
        });
        Relay { port, drop_replies }
    }

    pub fn dsn(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The next `n` replies (read chunks, for short replies) never reach the client.
    pub fn lose_replies(&self, n: usize) {
        self.drop_replies.store(n, Ordering::SeqCst);
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream, drops: Option<Arc<AtomicUsize>>) {
    let mut buf = [0u8; 16384];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if let Some(d) = &drops {
            if d.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| v.checked_sub(1)).is_ok() {
                continue;
            }
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Both);
}

/// A sentinel that names whatever master the test says (`name`), or knows no service
/// (`None`): enough of the protocol for discovery (`PING`, `SENTINEL
/// GET-MASTER-ADDR-BY-NAME`), so that a test can stage a failover's states at will.
pub struct FakeSentinel {
    pub port: u16,
    names: Arc<std::sync::Mutex<Option<u16>>>,
}

impl FakeSentinel {
    pub fn start(names: Option<u16>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind fake sentinel");
        let port = listener.local_addr().expect("fake sentinel addr").port();
        let names = Arc::new(std::sync::Mutex::new(names));
        let shared = names.clone();
        thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let names = shared.clone();
                thread::spawn(move || answer_as_sentinel(client, &names));
            }
        });
        FakeSentinel { port, names }
    }

    pub fn dsn(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// From now on it names the master on `port` (`None`: it knows no such service).
    pub fn name(&self, port: Option<u16>) {
        *self.names.lock().unwrap() = port;
    }
}

fn answer_as_sentinel(mut client: TcpStream, names: &std::sync::Mutex<Option<u16>>) {
    let mut reader = std::io::BufReader::new(client.try_clone().expect("clone"));
    let mut line = String::new();
    loop {
        // One command: *<n>, then n times $<len> and the bytes.
        line.clear();
        if std::io::BufRead::read_line(&mut reader, &mut line).unwrap_or(0) == 0 {
            return;
        }
        let n: usize = line.trim().trim_start_matches('*').parse().unwrap_or(0);
        let mut first = Vec::new();
        for i in 0..n {
            line.clear();
            std::io::BufRead::read_line(&mut reader, &mut line).unwrap_or(0);
            let len: usize = line.trim().trim_start_matches('$').parse().unwrap_or(0);
            let mut arg = vec![0u8; len + 2];
            if reader.read_exact(&mut arg).is_err() {
                return;
            }
            if i == 0 {
                first = arg[..len].to_ascii_uppercase();
            }
        }
        let reply = match (&first[..], *names.lock().unwrap()) {
            (b"PING", _) => "+PONG\r\n".to_string(),
            (b"SENTINEL", Some(port)) => {
                format!("*2\r\n$9\r\n127.0.0.1\r\n${}\r\n{port}\r\n", port.to_string().len())
            }
            (b"SENTINEL", None) => "$-1\r\n".to_string(),
            _ => "+OK\r\n".to_string(),
        };
        if client.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}
