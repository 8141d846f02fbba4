<?php
// The reference model of tools/model/run.php: what docs/api.md, shared-locks.md,
// multilock.md, semaphores.md, sentinel.md (durable grants) and safety.md promise,
// kept as plain state (each key's holder, readers, queue and lease interval on the
// driver's clock; each object's token and hold), and judged step by step. Where
// the docs leave an answer open, or this code and the docs may both be right, the
// step lists each acceptable answer and the state follows the one observed.
declare(strict_types=1);

const MARGIN = 0.1;     // s: no answer is judged this close to a lease's end
const SLACK = 0.005;    // s: two readings (PTTL, then getRemainingLifetime())
const PERMITS = 3;

final class Model {
    public array $keys = [];
    public array $sem = [];        // token => hold (weight in 'w')
    public array $objs = [];       // "c/o" => object
    public array $waiting = [];    // "c/o" => waiter: key, kind (write|read|upgrade), tok, L, deadline, t0
    public array $pending = [];    // waiters handed a hold by the last step, for the driver to hear
    public array $grantRaw = [];   // key => raw GET right after the hand-over (set by the driver)
    public bool $frozen = false;
    private int $hids = 0;

    /** @param bool $legacy accept the answers of builds before issue 56 (fb13692): a token of 0 or over 256 bytes given to release, extend or isOwned holding nothing, a generated token's shape and '!' refused as a chosen token, a generated token held alone stored with '!' */
    public function __construct(public array $keyNames, public bool $cad, public bool $legacy = false) {
        foreach ($keyNames as $k) { $this->keys[$k] = ['mode' => 'free', 'h' => null, 'readers' => [], 'queue' => []]; }
    }

    /** A hold record: token, id, lease interval(s), the object whose bound follows it. */
    private function hold(?string $tok, ?string $owner, float $L, float $t0, float $t1, bool $gen = false): array {
        return ['tok' => $tok, 'hid' => ++$this->hids, 'exp' => [$t0 + $L, $t1 + $L], 'alts' => null, 'owner' => $owner, 'foreign' => false, 'gen' => $gen];
    }

    public static function alive(array $h, float $t0, float $t1): ?bool {
        [$lo, $hi] = $h['alts'] ? [min(array_column($h['alts'], 0)), max(array_column($h['alts'], 1))] : $h['exp'];
        if ($t1 < $lo - MARGIN) { return true; }
        if ($t0 > $hi + MARGIN) { return false; }
        return null;
    }

    public function obj(string $oid, array $spec): array {
        return $this->objs[$oid] ??= ['spec' => $spec, 'tok' => null, 'ctok' => null, 'lost' => false, 'forgot' => false, 'hold' => null, 'gone' => false, 'doubt' => false];
    }

    /** Forgets every hold whose lease surely ended by $t. */
    public function settle(float $t): void {
        foreach ($this->keys as $k => &$K) {
            if ($K['mode'] === 'write' && self::alive($K['h'], $t, $t) === false) { $K['mode'] = 'free'; $K['h'] = null; }
            foreach ($K['readers'] as $tok => $r) { if (self::alive($r, $t, $t) === false) { unset($K['readers'][$tok]); } }
            if ($K['mode'] === 'read' && !$K['readers']) { $K['mode'] = 'free'; }
        }
        unset($K);
        foreach ($this->sem as $tok => $h) { if (self::alive($h, $t, $t) === false) { unset($this->sem[$tok]); } }
    }

    /** Every live hold's interval, with its key ('s0' for the semaphore). */
    public function holds(): array {
        $out = [];
        foreach ($this->keys as $k => $K) {
            if ($K['mode'] === 'write') { $out[] = [$k, $K['h']]; }
            foreach ($K['readers'] as $r) { $out[] = [$k, $r]; }
        }
        foreach ($this->sem as $h) { $out[] = ['s0', $h]; }
        return $out;
    }

    /** The earliest end of a lease on key $k (INF: none held). */
    public function firstEnd(string $k): float {
        $e = INF;
        foreach ($this->holds() as [$kk, $h]) { if ($kk === $k) { $e = min($e, $h['alts'] ? min(array_column($h['alts'], 0)) : $h['exp'][0]); } }
        return $e;
    }

    // --- what holds what -----------------------------------------------------

    /** Whether token $t holds key $k (a write hold, or a read share): true, false or null (a lease about to end). */
    public function holdsKey(string $k, ?string $t, float $t0, float $t1): ?bool {
        $K = $this->keys[$k];
        if ($t === null) { return false; }
        if ($K['mode'] === 'write') { return $K['h']['tok'] === $t ? self::alive($K['h'], $t0, $t1) : false; }
        if ($K['mode'] === 'read' && isset($K['readers'][$t])) { return self::alive($K['readers'][$t], $t0, $t1); }
        return false;
    }

    /** Whether the object's hold is still the one on the server (same acquisition). */
    public function intact(array $o): bool {
        $h = $o['hold'];
        if (!$h) { return false; }
        if ($h['kind'] === 'sem') { return ($this->sem[$h['tok']]['hid'] ?? 0) === $h['hid']; }
        foreach ($h['keys'] as $k) {
            $K = $this->keys[$k];
            $rec = $h['kind'] === 'read' ? ($K['mode'] === 'read' ? ($K['readers'][$h['tok']] ?? null) : null) : ($K['mode'] === 'write' ? $K['h'] : null);
            if (!$rec || $rec['hid'] !== $h['hid']) { return false; }
        }
        return true;
    }

    /** The record of an intact hold of the object (the first key's), for its interval and flags. */
    public function record(array $o): ?array {
        if (!$this->intact($o)) { return null; }
        $h = $o['hold'];
        if ($h['kind'] === 'sem') { return $this->sem[$h['tok']]; }
        $recs = array_map(fn($k) => $h['kind'] === 'read' ? $this->keys[$k]['readers'][$h['tok']] : $this->keys[$k]['h'], $h['keys']);
        $r = $recs[0];
        foreach ($recs as $x) { $r['foreign'] = $r['foreign'] || $x['foreign']; $r['alts'] = $r['alts'] ?? $x['alts']; }
        return $r;
    }

    /**
     * The tokens an object's call uses: the docs' (the token it last acquired, or the
     * one given) and this code's (its claim, which a release clears and a failed
     * extension marks lost). null: no token, so false without a round trip.
     */
    private function tokensFor(array $o, ?string $given, bool $lostFilter = true): array {
        if ($given !== null) {
            return $lostFilter && $o['lost'] && $given === $o['ctok'] ? [null, $given] : [$given];
        }
        $code = $lostFilter && $o['lost'] ? null : $o['ctok'];
        return both($o['tok'], $code);
    }

    // --- judging -------------------------------------------------------------

    private static function r(mixed $v): Closure { return fn(array $o) => array_key_exists('r', $o) && $o['r'] === $v; }
    private static function rgen(): Closure { return fn(array $o) => is_gen($o['r'] ?? null); }
    private static function x(string $cls): Closure { return fn(array $o) => isset($o['x']) && ex_is($o['x'], $cls); }
    private static function queuedObs(): Closure { return fn(array $o) => !empty($o['queued']); }

    /** The first alternative the observation matches is taken (its state change applied). */
    private function judge(array $alts, array $obs): ?string {
        foreach ($alts as [$desc, $match, $then]) {
            if ($match($obs)) { if ($then) { $then($obs); } return null; }
        }
        $descs = array_values(array_unique(array_column($alts, 0)));
        return 'expected ' . implode(' or ', $descs) . ', got ' . show_obs($obs);
    }

    /** A short wait on a held key: false, and not before its $timeOut (api.md: "retries until $timeOut seconds have passed"). */
    private static function late(float $T): array {
        return ["false after {$T} s", fn($ob) => self::r(false)($ob) && ($ob['elapsed'] ?? 0) >= $T - 0.005, null];
    }

    // --- state changes ---------------------------------------------------------

    private function setHold(string $oid, string $kind, string $tok, array $keys, array $rec): void {
        $o = &$this->objs[$oid];
        $o['tok'] = $o['ctok'] = $tok;
        $o['lost'] = $o['gone'] = $o['doubt'] = $o['forgot'] = false;
        $o['hold'] = ['kind' => $kind, 'tok' => $tok, 'hid' => $rec['hid'], 'keys' => $keys, 'exp' => $rec['exp']];
    }

    private function takeWrite(string $k, string $tok, string $oid, float $L, float $t0, float $t1, bool $gen): void {
        $K = &$this->keys[$k];
        $K['mode'] = 'write';
        $K['readers'] = [];
        $K['h'] = $this->hold($tok, $oid, $L, $t0, $t1, $gen);
        $this->setHold($oid, 'write', $tok, [$k], $K['h']);
    }

    private function addReader(string $k, string $tok, string $oid, float $L, float $t0, float $t1): void {
        $K = &$this->keys[$k];
        $K['mode'] = 'read';
        $K['h'] = null;
        $K['readers'][$tok] = $this->hold($tok, $oid, $L, $t0, $t1);
        $this->setHold($oid, 'read', $tok, [$k], $K['readers'][$tok]);
    }

    /** The key is free: the head of its queue gets it (one writer, or every reader up to the first writer). */
    private function handOver(string $k, float $t0, float $t1): void {
        $K = &$this->keys[$k];
        $K['mode'] = 'free';
        $K['h'] = null;
        $K['readers'] = [];
        while ($K['queue']) {
            $wid = $K['queue'][0];
            $w = $this->waiting[$wid];
            if ($w['kind'] === 'read') {
                array_shift($K['queue']);
                $K['mode'] = 'read';
                $K['readers']["?$wid"] = $this->hold(null, $wid, $w['L'], $t0, $t1);
                $this->pending[] = $wid;
                continue;
            }
            if ($K['mode'] === 'read') { break; }
            array_shift($K['queue']);
            $K['mode'] = 'write';
            $K['h'] = $this->hold($w['tok'], $wid, $w['L'], $t0, $t1, $w['tok'] === null);
            $this->pending[] = $wid;
            break;
        }
    }

    /** A reader's share is given up: the last one out frees the key; the last but an upgrading one hands it the lock. */
    private function dropReader(string $k, string $tok, float $t0, float $t1): void {
        $K = &$this->keys[$k];
        unset($K['readers'][$tok]);
        if (!$K['readers']) { $this->handOver($k, $t0, $t1); return; }
        $head = $K['queue'][0] ?? null;
        if ($head !== null && count($K['readers']) === 1 && $this->waiting[$head]['kind'] === 'upgrade'
                && isset($K['readers'][$this->waiting[$head]['tok']])) {
            array_shift($K['queue']);
            $w = $this->waiting[$head];
            $K['mode'] = 'write';
            $K['readers'] = [];
            $K['h'] = $this->hold($w['tok'], $head, $w['L'], $t0, $t1);
            $this->pending[] = $head;
        }
    }

    /** What the driver heard from a waiter the last step handed a hold to. */
    public function granted(string $wid, array $obs, float $t): ?string {
        $w = $this->waiting[$wid];
        $K = &$this->keys[$w['key']];
        $raw = $this->grantRaw[$w['key']] ?? false;
        if ($w['kind'] === 'read') {
            $rec = $K['readers']["?$wid"];
            $err = $this->judge([['a read token', self::rgen(), null]], $obs);
            if ($err) { return "the waiter handed a read share: $err"; }
            unset($K['readers']["?$wid"]);
            $rec['tok'] = $obs['r'];
            $K['readers'][$obs['r']] = $rec;
            $this->setHold($wid, 'read', $obs['r'], [$w['key']], $rec);
            unset($this->waiting[$wid]);
            return $raw !== false && $raw !== '' ? 'right after the hand-over to readers the key holds ' . show($raw) . ", not ''" : null;
        }
        $alts = $w['tok'] !== null ? [['token ' . show($w['tok']), self::r($w['tok']), null]] : [['a generated token', self::rgen(), null]];
        if ($w['alt'] !== null) { $alts[] = ['its old read token', self::r($w['alt']), null]; }
        $err = $this->judge($alts, $obs);
        if ($err) { return "the waiter handed the lock: $err"; }
        $K['h']['tok'] = $obs['r'];
        $this->setHold($wid, 'write', $obs['r'], [$w['key']], $K['h']);
        unset($this->waiting[$wid]);
        if ($raw !== false && $raw !== $obs['r']) { return 'right after the release the key holds ' . show($raw) . ', not the waiter\'s token ' . show($obs['r']) . ': no hand-over'; }
        return null;
    }

    /** A waiter whose deadline passed: it returns false, and leaves nothing queued. */
    public function timedOut(string $wid, array $obs, float $elapsed): ?string {
        $w = $this->waiting[$wid];
        unset($this->waiting[$wid]);
        $K = &$this->keys[$w['key']];
        $K['queue'] = array_values(array_diff($K['queue'], [$wid]));
        $err = $this->judge([['false', self::r(false), null]], $obs);
        return $err ? "the waiter at its deadline: $err" : null;
    }

    // --- a client's call -------------------------------------------------------

    /**
     * Judges one call of object $oid (spec $spec), method $m with arguments $args, that
     * answered $obs between $t0 and $t1; applies its effect. null when acceptable.
     */
    public function apply(string $oid, array $spec, string $m, array $args, array $obs, float $t0, float $t1): ?string {
        $this->pending = [];
        $o = $this->obj($oid, $spec);
        [$class] = $spec;
        // Every method that takes a token refuses an empty one or one over 256 bytes (api.md, since fb13692).
        $bad = in_array($m, ['releaseLock', 'releaseLock1', 'releaseLock2', 'extendLock', 'isOwned', 'release', 'extend'], true) && self::badToken($args[0] ?? null);
        if ($bad && !$this->legacy) {
            return $this->judge([['ValueError (no token is empty or over 256 bytes)', self::x('ValueError'), null]], $obs);
        }
        $alts = match (true) {
            $class === 'Semaphore' => $this->semCall($oid, $o, $spec, $m, $args, $t0, $t1),
            $class === 'MultiLock' => $this->multiCall($oid, $o, $spec, $m, $args, $t0, $t1),
            default => $this->lockCall($oid, $o, $spec, $m, $args, $t0, $t1, $obs),
        };
        // A hold this process forgot (see forgetOthers): this code takes the object for one holding nothing.
        if ($class === 'Lock' && $o['forgot'] && $o['hold'] && in_array($m, ['tryLock', 'addLock', 'tryReadLock', 'addReadLock'], true)) {
            $alts = [...$alts, ...$this->lockCall($oid, ['hold' => null] + $o, $spec, $m, $args, $t0, $t1, $obs)];
        }
        // Before fb13692 (--legacy-token-args) such a token was taken as one that holds nothing.
        return $this->judge($bad ? [['ValueError', self::x('ValueError'), null], ...$alts] : $alts, $obs);
    }

    /**
     * A release of token $t on $keys by one object: this code forgets every other hold of
     * $t on those keys in the same process, released or not (hold::claim: released()).
     * Those objects then count as holding nothing, their bound 0; the docs say nothing of it.
     */
    private function forgetOthers(string $oid, ?string $t, array $keys): void {
        if ($t === null) { return; }
        $client = explode('/', $oid)[0] . '/';
        foreach ($this->objs as $id => &$ob) {
            if ($id !== $oid && str_starts_with($id, $client) && $ob['ctok'] === $t && $ob['hold'] && array_intersect($ob['hold']['keys'], $keys)) { $ob['forgot'] = true; }
        }
    }

    /** A lease under 1 ms is a ValueError (api.md's table). The generator stays under 0.5 ms: this code rounds 0.5 ms up to 1 ms. */
    private static function badLease(float $L): ?array {
        return $L >= 0.001 ? null : [['ValueError (a lease under 1 ms)', self::x('ValueError'), null]];
    }

    public static function badToken(?string $t): bool { return $t !== null && ($t === '' || strlen($t) > 256); }

    private function lockCall(string $oid, array $o, array $spec, string $m, array $args, float $t0, float $t1, array $obs): array {
        [, $k, $T, $L, $opt] = $spec;
        $durable = isset($opt['durable']);
        $K = $this->keys[$k];
        switch ($m) {
            case 'tryLock':
            case 'addLock':
                $tok = $args[0] ?? null;
                if (self::badToken($tok)) { return [['ValueError', self::x('ValueError'), null]]; }
                $alts = [];
                // A caller's token shaped as a generated one marked: any token by the docs (api.md); refused before issue 56.
                if ($this->legacy && $tok !== null && strlen($tok) === 33 && $tok[32] === '!' && is_gen(substr($tok, 0, 32))) { $alts[] = ['ValueError', self::x('ValueError'), null]; }
                $wait = $m === 'addLock' && $T > 0;
                $h = $o['hold'];
                $keep = null;
                if ($h && $h['kind'] === 'read' && $o['ctok'] !== null && !$o['lost']) {
                    // An upgrade: only its own token, only as the only reader (shared-locks.md); decided by the token.
                    $rt = $o['ctok'];
                    if ($tok !== null && $tok !== $rt) { return [...$alts, ['ValueError (an upgrade keeps its token)', self::x('ValueError'), null], ['false', self::r(false), null]]; }
                    if ($K['mode'] === 'read' && isset($K['readers'][$rt])) {
                        if (count($K['readers']) === 1) {
                            return [...$alts, ['the read token ' . show($rt) . ' (upgraded)', self::r($rt), function () use ($k, $rt, $oid, $L, $t0, $t1) { $this->takeWrite($k, $rt, $oid, $L, $t0, $t1, false); }]];
                        }
                        if ($wait && $T >= 1) { return [...$alts, ['queued first in line (an upgrade)', self::queuedObs(), fn() => $this->enqueue($oid, $k, 'upgrade', $rt, $L, $t0 + $T, $t0, true)]]; }
                        if ($wait) { return [...$alts, self::late($T)]; }
                        return [...$alts, ['false (other readers)', self::r(false), null]];
                    }
                    // Its share is gone: this code tries the write lock with the read token, the docs' object (holding nothing) with a new one.
                    $keep = $rt;
                }
                if ($K['mode'] === 'free') {
                    if ($durable && $this->frozen) { return [...$alts, ['LockConnectionException (the replica is frozen: not durable)', self::x('LockConnectionException'), fn() => $this->undone($oid)]]; }
                    $take = function (array $ob) use ($k, $oid, $L, $t0, $t1, $tok) { $this->takeWrite($k, $ob['r'], $oid, $L, $t0, $t1, $tok === null); };
                    $alts[] = $tok !== null ? ['the token ' . show($tok), self::r($tok), $take] : ['a generated token', self::rgen(), $take];
                    if ($keep !== null && $tok === null) { $alts[] = ['the old read token', self::r($keep), $take]; }
                    if ($durable) { $alts[] = ['LockConnectionException (not acknowledged in time)', self::x('LockConnectionException'), fn() => $this->undone($oid)]; }
                    return $alts;
                }
                if ($wait && $T >= 1) { return [...$alts, ['queued (the key is held)', self::queuedObs(), fn() => $this->enqueue($oid, $k, 'write', $tok, $L, $t0 + $T, $t0, false, $keep)]]; }
                if ($wait) { return [...$alts, self::late($T)]; }
                return [...$alts, ['false (the key is held)', self::r(false), null]];

            case 'tryReadLock':
            case 'addReadLock':
                $wait = $m === 'addReadLock' && $T > 0;
                $h = $o['hold'];
                $claimed = $h && $o['ctok'] !== null && !$o['lost'];
                $alts = [];
                if ($claimed && $h['kind'] === 'read') {
                    // "addReadLock() on an object that reads already returns false"; a share that is gone: either.
                    $alts[] = ['false (it reads already)', self::r(false), null];
                    if ($this->intact($o)) { return $alts; }
                }
                if ($claimed && $h['kind'] === 'write') {
                    // A downgrade: decided by the token (this code's script), even when the key holds it by another acquisition.
                    if ($K['mode'] === 'write' && $K['h']['tok'] === $o['ctok']) {
                        $down = function (array $ob) use ($k, $oid, $L, $t0, $t1) {
                            $this->addReader($k, $ob['r'], $oid, $L, $t0, $t1);
                            $K = &$this->keys[$k];
                            while ($K['queue'] && $this->waiting[$K['queue'][0]]['kind'] === 'read') {
                                $wid = array_shift($K['queue']);
                                $K['readers']["?$wid"] = $this->hold(null, $wid, $this->waiting[$wid]['L'], $t0, $t1);
                                $this->pending[] = $wid;
                            }
                        };
                        $alts = [['its token ' . show($o['ctok']) . ' (downgraded)', self::r($o['ctok']), $down], ['a read token (downgraded)', self::rgen(), $down]];
                        return $this->intact($o) ? $alts : [...$alts, ['false (the write lock it took is gone)', self::r(false), null]];
                    }
                    $alts[] = ['false (the write lock it held is gone)', self::r(false), function () use ($oid) { $this->objs[$oid]['ctok'] = null; $this->objs[$oid]['gone'] = $this->objs[$oid]['gone'] || $this->objs[$oid]['hold'] !== null; $this->objs[$oid]['hold'] = null; }];
                }
                $join = $K['mode'] === 'free' || ($K['mode'] === 'read' && !$K['queue']);
                if ($join) { return [...$alts, ['a read token', self::rgen(), fn($ob) => $this->addReader($k, $ob['r'], $oid, $L, $t0, $t1)]]; }
                if ($wait && $T >= 1) { return [...$alts, ['queued (for a read share)', self::queuedObs(), fn() => $this->enqueue($oid, $k, 'read', null, $L, $t0 + $T, $t0, false)]]; }
                if ($wait) { return [...$alts, self::late($T)]; }
                return [...$alts, ['false', self::r(false), null]];

            case 'releaseLock':
            case 'releaseLock1':
            case 'releaseLock2':
                $alts = [];
                foreach ($this->tokensFor($o, $args[0] ?? null) as $t) {
                    $own = $t !== null && $t === $o['ctok'];
                    $after = function () use ($oid, $own, $t, $k) {
                        if ($own) { $this->objs[$oid]['ctok'] = null; $this->objs[$oid]['hold'] = null; $this->objs[$oid]['gone'] = false; $this->objs[$oid]['lost'] = false; }
                        else { $this->forgetOthers($oid, $t, [$k]); }
                    };
                    $held = $this->holdsKey($k, $t, $t0, $t1);
                    if ($held === true && $t !== '') {
                        $alts[] = ['true (' . show($t) . ' holds it)', self::r(true), function () use ($k, $t, $t0, $t1, $after) {
                            if ($this->keys[$k]['mode'] === 'read') { $this->dropReader($k, $t, $t0, $t1); } else { $this->handOver($k, $t0, $t1); }
                            $after();
                        }];
                        // The object took a read share with this token, which is gone: this code releases that share (false),
                        // the docs' "deletes the key while it holds $token" the write lock the same token holds now.
                        if ($own && ($o['hold']['kind'] ?? '') === 'read' && $this->keys[$k]['mode'] === 'write') { $alts[] = ['false (its read share is gone)', self::r(false), $after]; }
                    } else {
                        $alts[] = ['false (' . ($t === null ? 'no token' : show($t) . ' holds nothing') . ')', self::r(false), $after];
                    }
                }
                return $alts;

            case 'forceReleaseLock':
                $after = function () use ($oid) {
                    $this->objs[$oid]['ctok'] = null;
                    if ($this->objs[$oid]['hold']) { $this->objs[$oid]['gone'] = true; $this->objs[$oid]['hold'] = null; }
                };
                if ($K['mode'] === 'free') { return [['false (the key is free)', self::r(false), $after]]; }
                return [['true', self::r(true), function () use ($k, $t0, $t1, $after) { $this->handOver($k, $t0, $t1); $after(); }]];

            case 'extendLock':
                $L2 = array_key_exists(1, $args) && $args[1] !== null ? $args[1] : $L;
                if ($bad = self::badLease($L2)) { return $bad; }
                $alts = [];
                foreach ($this->tokensFor($o, $args[0] ?? null) as $t) {
                    $held = $this->holdsKey($k, $t, $t0, $t1);
                    $own = $t !== null && $t === $o['ctok'] && !$o['lost'];
                    if ($held === true && $t !== '') {
                        $ext = fn() => $this->extended($oid, [$k], $t, $L2, $t0, $t1, $own, false);
                        if ($durable && $this->frozen) {
                            $alts[] = ['LockConnectionException (not durable)', self::x('LockConnectionException'), fn() => $this->extended($oid, [$k], $t, $L2, $t0, $t1, $own, true)];
                            continue;
                        }
                        $alts[] = ['true', self::r(true), $ext];
                        // The token holds the other kind than the object took (a shared chosen token): this code renews only its kind.
                        if ($own && $o['hold'] && ($o['hold']['kind'] === 'read') !== ($this->keys[$k]['mode'] === 'read')) {
                            $alts[] = ['false (this code renews the kind the object took)', self::r(false), function () use ($oid) { $this->objs[$oid]['lost'] = true; }];
                        }
                        if ($durable) { $alts[] = ['LockConnectionException (not acknowledged in time)', self::x('LockConnectionException'), fn() => $this->extended($oid, [$k], $t, $L2, $t0, $t1, $own, true)]; }
                    } else {
                        $alts[] = ['false (' . ($t === null ? 'no token' : show($t) . ' holds nothing') . ')', self::r(false), function () use ($oid, $own) { if ($own) { $this->objs[$oid]['lost'] = true; } }];
                    }
                }
                return $alts;

            case 'isOwned':
                return $this->ownedAlts($o, $args[0] ?? null, fn($t) => $this->holdsKey($k, $t, $t0, $t1));
        }
        return [['(no rule for ' . $m . ')', fn() => false, null]];
    }

    /** isOwned(): true exactly when the token (the docs' or this code's) holds it now. */
    private function ownedAlts(array $o, ?string $given, Closure $holds): array {
        $alts = [];
        foreach ($this->tokensFor($o, $given) as $t) {
            $v = $t === null || $t === '' ? false : $holds($t);
            if ($v === null) { $alts[] = ['true or false (a lease ending)', fn($ob) => is_bool($ob['r'] ?? null), null]; continue; }
            $alts[] = [var_export($v, true) . ' (' . ($t === null ? 'no token' : show($t)) . ')', self::r($v), null];
        }
        return $alts;
    }

    /** An acquisition undone (durable, not acknowledged): nothing left, the object holds nothing new. */
    private function undone(string $oid): void {
        if ($this->objs[$oid]['hold'] && !$this->intact($this->objs[$oid])) { $this->objs[$oid]['gone'] = true; }
    }

    private function enqueue(string $oid, string $k, string $kind, ?string $tok, float $L, float $deadline, float $t0, bool $first, ?string $alt = null): void {
        $this->waiting[$oid] = ['key' => $k, 'kind' => $kind, 'tok' => $tok, 'alt' => $alt, 'L' => $L, 'deadline' => $deadline, 't0' => $t0];
        if ($first) { array_unshift($this->keys[$k]['queue'], $oid); } else { $this->keys[$k]['queue'][] = $oid; }
    }

    /**
     * An extension of token $t on keys $keys to $L2 by object $oid: done, or (refused
     * durable) done on the master or not, which the next PTTL reading tells.
     */
    private function extended(string $oid, array $keys, string $t, float $L2, float $t0, float $t1, bool $own, bool $refused): void {
        foreach ($keys as $k) {
            $K = &$this->keys[$k];
            if ($K['mode'] === 'read') {
                $r = &$K['readers'][$t];
            } else {
                $r = &$K['h'];
            }
            $new = [$t0 + $L2, $t1 + $L2];
            if ($refused) { $r['alts'] = [$r['exp'], $new]; } else { $r['exp'] = $new; $r['alts'] = null; }
            if (!$own || $r['owner'] !== $oid) { $r['foreign'] = true; }
            unset($r, $K);
        }
        if ($own && !$refused && $this->objs[$oid]['hold']) { $this->objs[$oid]['hold']['exp'] = [$t0 + $L2, $t1 + $L2]; }
        if ($own && $refused) { $this->objs[$oid]['doubt'] = true; }
    }

    /** A refused extension's lease, told apart by the server's PTTL (ms, read between $r0 and $r1). */
    public function collapse(string $k, int $pttl, float $r0, float $r1): ?string {
        $K = &$this->keys[$k];
        $recs = [];
        if ($K['mode'] === 'write') { $recs[] = &$K['h']; }
        foreach ($K['readers'] as $t => $_) { $recs[] = &$K['readers'][$t]; }
        foreach ($recs as &$r) {
            if (!$r['alts']) { continue; }
            $fit = array_values(array_filter($r['alts'], fn($e) => $pttl / 1000 >= $e[0] - $r1 - 0.02 && $pttl / 1000 <= $e[1] - $r0 + 0.02));
            if (!$fit && $K['mode'] === 'write') { return "after a refused extension the server's lease on $k is {$pttl} ms: neither the old lease nor the new one"; }
            if (count($fit) === 1) { $r['exp'] = $fit[0]; $r['alts'] = null; }
        }
        return null;
    }

    private function multiCall(string $oid, array $o, array $spec, string $m, array $args, float $t0, float $t1): array {
        [, $keys, , $L] = $spec;
        $all = function (?string $t) use ($keys, $t0, $t1): ?bool {
            $v = true;
            foreach ($keys as $k) {
                $K = $this->keys[$k];
                $h = $K['mode'] === 'write' && $K['h']['tok'] === $t ? self::alive($K['h'], $t0, $t1) : false;
                if ($h === false) { return false; }
                if ($h === null) { $v = null; }
            }
            return $v;
        };
        switch ($m) {
            case 'tryLock':
                $tok = $args[0] ?? null;
                if (self::badToken($tok)) { return [['ValueError', self::x('ValueError'), null]]; }
                $alts = [];
                if ($this->legacy && $tok !== null && strlen($tok) === 33 && $tok[32] === '!' && is_gen(substr($tok, 0, 32))) { $alts[] = ['ValueError', self::x('ValueError'), null]; }
                foreach ($keys as $k) { if ($this->keys[$k]['mode'] !== 'free') { return [...$alts, ['false (a key is held)', self::r(false), null]]; } }
                $take = function (array $ob) use ($keys, $oid, $L, $t0, $t1, $tok) {
                    $rec = $this->hold($ob['r'], $oid, $L, $t0, $t1, $tok === null);
                    foreach ($keys as $k) { $this->keys[$k] = ['mode' => 'write', 'h' => $rec, 'readers' => [], 'queue' => $this->keys[$k]['queue']]; }
                    $this->setHold($oid, 'multi', $ob['r'], $keys, $rec);
                };
                return [...$alts, $tok !== null ? ['the token ' . show($tok), self::r($tok), $take] : ['a generated token', self::rgen(), $take]];
            case 'releaseLock':
                $alts = [];
                foreach ($this->tokensFor($o, $args[0] ?? null, false) as $t) {
                    $own = $t !== null && $t === $o['ctok'];
                    $mine = array_values(array_filter($keys, fn($k) => $t !== null && $this->keys[$k]['mode'] === 'write' && $this->keys[$k]['h']['tok'] === $t));
                    $then = function () use ($mine, $oid, $own, $t0, $t1, $t, $keys) {
                        foreach ($mine as $k) { $this->keys[$k]['mode'] = 'free'; }
                        foreach ($mine as $k) { $this->handOver($k, $t0, $t1); }
                        if ($own) { $this->objs[$oid]['ctok'] = null; $this->objs[$oid]['hold'] = null; $this->objs[$oid]['gone'] = false; }
                        else { $this->forgetOthers($oid, $t, $keys); }
                    };
                    $whole = count($mine) === count($keys);
                    $alts[] = [var_export($whole, true) . ' (' . show($t) . ' holds ' . count($mine) . ' of ' . count($keys) . ' keys)', self::r($whole), $then];
                    // This code answers false for a hold it found lost, releasing what the token holds all the same.
                    if ($whole && $own && $o['lost']) { $alts[] = ['false (lost)', self::r(false), $then]; }
                }
                return $alts;
            case 'extendLock':
                $L2 = array_key_exists(1, $args) && $args[1] !== null ? $args[1] : $L;
                if ($bad = self::badLease($L2)) { return $bad; }
                $alts = [];
                foreach ($this->tokensFor($o, $args[0] ?? null) as $t) {
                    $own = $t !== null && $t === $o['ctok'] && !$o['lost'];
                    if ($t !== null && $all($t) === true) {
                        $alts[] = ['true', self::r(true), fn() => $this->extended($oid, $keys, $t, $L2, $t0, $t1, $own, false)];
                    } else {
                        $alts[] = ['false', self::r(false), function () use ($oid, $own) { if ($own) { $this->objs[$oid]['lost'] = true; } }];
                    }
                }
                return $alts;
            case 'isOwned':
                return $this->ownedAlts($o, $args[0] ?? null, $all);
        }
        return [['(no rule for ' . $m . ')', fn() => false, null]];
    }

    private function semCall(string $oid, array $o, array $spec, string $m, array $args, float $t0, float $t1): array {
        $L = $spec[4];
        $has = fn(?string $t) => $t !== null && isset($this->sem[$t]) ? self::alive($this->sem[$t], $t0, $t1) : false;
        switch ($m) {
            case 'tryAcquire':
                $w = $args[0] ?? 1;
                if ($w < 1 || $w > PERMITS) { return [['ValueError (a weight out of 1 to ' . PERMITS . ')', self::x('ValueError'), null]]; }
                if (array_sum(array_column($this->sem, 'w')) + $w > PERMITS) { return [['false (not enough permits)', self::r(false), null]]; }
                return [['a generated token', self::rgen(), function (array $ob) use ($oid, $w, $L, $t0, $t1) {
                    $this->sem[$ob['r']] = $this->hold($ob['r'], $oid, $L, $t0, $t1) + ['w' => $w];
                    $this->setHold($oid, 'sem', $ob['r'], ['s0'], $this->sem[$ob['r']]);
                }]];
            case 'release':
                $alts = [];
                foreach ($this->tokensFor($o, $args[0] ?? null, false) as $t) {
                    $own = $t !== null && $t === $o['ctok'];
                    $after = function () use ($oid, $own, $t) {
                        if ($own) { $this->objs[$oid]['ctok'] = null; $this->objs[$oid]['hold'] = null; $this->objs[$oid]['gone'] = false; }
                        else { $this->forgetOthers($oid, $t, ['s0']); }
                    };
                    if ($has($t) === true) { $alts[] = ['true', self::r(true), function () use ($t, $after) { unset($this->sem[$t]); $after(); }]; }
                    else { $alts[] = ['false', self::r(false), $after]; }
                }
                return $alts;
            case 'extend':
                $L2 = array_key_exists(1, $args) && $args[1] !== null ? $args[1] : $L;
                if ($bad = self::badLease($L2)) { return $bad; }
                $alts = [];
                foreach ($this->tokensFor($o, $args[0] ?? null) as $t) {
                    $own = $t !== null && $t === $o['ctok'] && !$o['lost'];
                    if ($has($t) === true) {
                        $alts[] = ['true', self::r(true), function () use ($t, $L2, $t0, $t1, $own, $oid) {
                            $this->sem[$t]['exp'] = [$t0 + $L2, $t1 + $L2];
                            if (!$own || $this->sem[$t]['owner'] !== $oid) { $this->sem[$t]['foreign'] = true; }
                            if ($own && $this->objs[$oid]['hold']) { $this->objs[$oid]['hold']['exp'] = [$t0 + $L2, $t1 + $L2]; }
                        }];
                    } else {
                        $alts[] = ['false', self::r(false), function () use ($oid, $own) { if ($own) { $this->objs[$oid]['lost'] = true; } }];
                    }
                }
                return $alts;
            case 'isOwned':
                return $this->ownedAlts($o, $args[0] ?? null, $has);
        }
        return [['(no rule for ' . $m . ')', fn() => false, null]];
    }
}
