package redislock.bench;

import java.io.BufferedReader;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * One run of one Redisson lock, driven by bench/peers.php (make bench-peers).
 *
 *   contend KIND LOCK_PORT DATA_PORT THREADS HOLD_US SECTIONS_PER_THREAD KEY [small]
 *   cycle   KIND LOCK_PORT CYCLES
 *
 * "small": a pool of two connections and one for pub/sub, for a JVM of one thread
 * (the driver's runs of one JVM per contender, as PHP runs); else Redisson's defaults.
 *
 * KIND: rlock (RLock), rfair (RFairLock) or rsem (RSemaphore of one permit). The
 * client connects and warms up (JIT, connection pool, a first acquire on another
 * key), then prints "ready" and waits for a line on stdin: the driver takes its
 * server-side snapshot (INFO cpu, CONFIG RESETSTAT) between the two, so neither the
 * JVM's start nor Redisson's connection setup is counted as lock work. Then it runs
 * and prints one JSON line, and exits on the next line of stdin (the driver reads
 * the server's counters first).
 *
 * contend: THREADS threads of this JVM (as Redisson is used) each do their
 * sections: acquire (waiting up to 60 s, lease 5 s, as bench/contention.php's
 * workers ask), a deliberately non-atomic GET/SET increment of a counter on a
 * second server held HOLD_US, release. The counter's final value shows lost updates.
 * cycle: uncontended acquire+release, one thread, CYCLES times.
 */
public final class RedissonPeers {
    public static void main(String[] args) throws Exception {
        String mode = args[0];
        String kind = args[1];
        int lockPort = Integer.parseInt(args[2]);
        Config cfg = new Config();
        var server = cfg.useSingleServer().setAddress("redis://127.0.0.1:" + lockPort);
        if (mode.equals("contend") && args.length > 8 && args[8].equals("small")) {
            server.setConnectionMinimumIdleSize(1).setConnectionPoolSize(2)
                  .setSubscriptionConnectionMinimumIdleSize(1).setSubscriptionConnectionPoolSize(1);
        }
        RedissonClient redisson = Redisson.create(cfg);
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String run = Long.toHexString(System.nanoTime());
        try {
            String json = mode.equals("contend")
                ? contend(redisson, kind, args[7], Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                          Integer.parseInt(args[5]), Integer.parseInt(args[6]), stdin)
                : cycle(redisson, kind, "bench:" + run + ":cycle", Integer.parseInt(args[3]), stdin);
            System.out.println(json);
            System.out.flush();
            stdin.readLine();
        } finally {
            redisson.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }

    /** acquire and release of one kind of lock, for the calling thread. */
    interface Hold {
        boolean acquire() throws InterruptedException;
        void release();
    }

    static Hold hold(RedissonClient redisson, String kind, String key) {
        switch (kind) {
            case "rlock":
            case "rfair": {
                RLock l = kind.equals("rlock") ? redisson.getLock(key) : redisson.getFairLock(key);
                return new Hold() {
                    public boolean acquire() throws InterruptedException { return l.tryLock(60, 5, TimeUnit.SECONDS); }
                    public void release() { l.unlock(); }
                };
            }
            case "rsem": {
                RSemaphore s = redisson.getSemaphore(key);
                s.trySetPermits(1);     // a no-op once set: every thread may call it
                return new Hold() {
                    public boolean acquire() throws InterruptedException { return s.tryAcquire(60, TimeUnit.SECONDS); }
                    public void release() { s.release(); }
                };
            }
            default:
                throw new IllegalArgumentException("unknown kind " + kind + ": rlock, rfair or rsem");
        }
    }

    static void ready(BufferedReader stdin) throws IOException {
        System.out.println("ready");
        System.out.flush();
        if (stdin.readLine() == null) { throw new IOException("the driver went away"); }
    }

    static String contend(RedissonClient redisson, String kind, String key, int dataPort, int threads, int holdUs,
                          int sections, BufferedReader stdin) throws Exception {
        String counterKey = key + ":counter";
        try (Resp data = new Resp(dataPort)) { data.call("SET", counterKey, "0"); }
        // Warm-up on another key: the JIT, the pool's connections, the pub/sub connection.
        Hold warm = hold(redisson, kind, key + ":warm:" + ProcessHandle.current().pid());
        for (int i = 0; i < 200; i++) { if (!warm.acquire()) { throw new IllegalStateException("warm-up failed"); } warm.release(); }
        CyclicBarrier setUp = new CyclicBarrier(threads + 1), go = new CyclicBarrier(threads + 1);
        double[][] waits = new double[threads][sections];
        long[] ends = new long[threads];
        int[] gaveUp = new int[threads];
        Throwable[] failed = new Throwable[1];
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int w = t;
            Thread th = new Thread(() -> {
                try (Resp dataConn = new Resp(dataPort)) {
                    Hold h = hold(redisson, kind, key);
                    setUp.await();
                    go.await();
                    for (int i = 0; i < sections; i++) {
                        long t0 = System.nanoTime();
                        boolean got = h.acquire();
                        waits[w][i] = (System.nanoTime() - t0) / 1e6;
                        if (!got) { gaveUp[w]++; continue; }
                        long v = Long.parseLong(dataConn.call("GET", counterKey));  // not atomic on purpose
                        if (holdUs > 0) { LockSupport.parkNanos(holdUs * 1000L); }
                        dataConn.call("SET", counterKey, Long.toString(v + 1));
                        h.release();
                    }
                    ends[w] = System.nanoTime();
                } catch (Throwable e) {
                    synchronized (failed) { failed[0] = e; }
                }
            });
            ts.add(th);
            th.start();
        }
        setUp.await();
        ready(stdin);
        long start = System.nanoTime();
        go.await();
        for (Thread th : ts) { th.join(); }
        if (failed[0] != null) { throw new RuntimeException("a thread failed", failed[0]); }
        long end = start;
        for (long e : ends) { end = Math.max(end, e); }
        long counter;
        try (Resp data = new Resp(dataPort)) { counter = Long.parseLong(data.call("GET", counterKey)); }
        int total = threads * sections, gave = 0;
        for (int g : gaveUp) { gave += g; }
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "{\"sections\":%d,\"seconds\":%.6f,\"lost\":%d,\"gave_up\":%d,\"waits\":[",
            total, (end - start) / 1e9, total - gave - counter, gave));
        boolean first = true;
        for (double[] ws : waits) {
            for (double x : ws) { sb.append(first ? "" : ",").append(String.format(Locale.ROOT, "%.4f", x)); first = false; }
        }
        return sb.append("]}").toString();
    }

    static String cycle(RedissonClient redisson, String kind, String key, int cycles, BufferedReader stdin) throws Exception {
        Hold h = hold(redisson, kind, key);
        for (int i = 0; i < 500; i++) { if (!h.acquire()) { throw new IllegalStateException("busy"); } h.release(); }
        ready(stdin);
        long t0 = System.nanoTime();
        for (int i = 0; i < cycles; i++) { if (!h.acquire()) { throw new IllegalStateException("busy"); } h.release(); }
        return String.format(Locale.ROOT, "{\"cycles\":%d,\"wall_us\":%.3f}", cycles, (System.nanoTime() - t0) / 1e3 / cycles);
    }

    /** The counter's connection: RESP by hand, so that it has nothing of Redisson's. */
    static final class Resp implements AutoCloseable {
        private final Socket sock;
        private final OutputStream out;
        private final InputStream in;

        Resp(int port) throws IOException {
            sock = new Socket("127.0.0.1", port);
            sock.setTcpNoDelay(true);
            out = new BufferedOutputStream(sock.getOutputStream());
            in = new BufferedInputStream(sock.getInputStream());
        }

        /** Sends one command; returns a bulk or simple reply as text (null for a nil). */
        String call(String... argv) throws IOException {
            StringBuilder sb = new StringBuilder("*").append(argv.length).append("\r\n");
            for (String a : argv) {
                byte[] b = a.getBytes(StandardCharsets.UTF_8);
                sb.append('$').append(b.length).append("\r\n").append(a).append("\r\n");
            }
            out.write(sb.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            String line = line();
            switch (line.charAt(0)) {
                case '+': case ':': return line.substring(1);
                case '$': {
                    int n = Integer.parseInt(line.substring(1));
                    if (n < 0) { return null; }
                    byte[] b = in.readNBytes(n + 2);
                    return new String(b, 0, n, StandardCharsets.UTF_8);
                }
                default: throw new IOException("Redis: " + line);
            }
        }

        private String line() throws IOException {
            StringBuilder sb = new StringBuilder();
            int c;
            while ((c = in.read()) != '\r') {
                if (c < 0) { throw new IOException("connection closed"); }
                sb.append((char) c);
            }
            in.read();  // '\n'
            return sb.toString();
        }

        public void close() throws IOException { sock.close(); }
    }
}
