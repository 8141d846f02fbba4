<?php
// The nemesis checker's arithmetic (check.php): promises as merged intervals, where two
// meet, how many are in force at once; and the helpers its text uses.
declare(strict_types=1);

/** How much before its acquire's return a bound sample may be read (clock rounding), in ms. */
const EARLY_MS = 0.5;
/** How much a promise may exceed the lease (ms): the drift allowance and rounding. */
const LONGER_MS = 1.0;

/** The p-th percentile (0–100) of a list of numbers, by nearest rank; null for none. */
function pct(array $xs, float $p): ?float {
    if (!$xs) { return null; }
    sort($xs);
    return $xs[max(0, (int) ceil($p / 100 * count($xs)) - 1)];
}

/** $s cut to $n characters (bytes: the messages are ASCII), with an ellipsis when cut. */
function cut(string $s, int $n): string {
    return strlen($s) <= $n ? $s : substr($s, 0, $n - 1) . '…';
}

/** An exception message with what varies between occurrences folded, so that alike errors count together. */
function fold(string $exc): string {
    $s = preg_replace('#redis://127\.0\.0\.1:\d+#', 'redis://…', $exc);
    $s = preg_replace('/\d+(\.\d+)?/', 'N', $s);
    return cut($s, 240);
}

/** The class of a history's "Class: message" exception, without its namespace. */
function exc_class(?string $exc): string {
    $cls = trim(explode(':', (string) $exc, 2)[0]);
    $at = strrpos($cls, '\\');
    return $at === false ? $cls : substr($cls, $at + 1);
}

/** Intervals [s, e] (e may be INF) sorted and merged where they meet or touch; empty ones dropped. */
function merge_intervals(array $iv): array {
    $iv = array_values(array_filter($iv, fn($x) => $x[1] > $x[0]));
    usort($iv, fn($a, $b) => $a[0] <=> $b[0]);
    $out = [];
    foreach ($iv as $x) {
        $last = count($out) - 1;
        if ($last >= 0 && $x[0] <= $out[$last][1]) { $out[$last][1] = max($out[$last][1], $x[1]); continue; }
        $out[] = $x;
    }
    return $out;
}

/** Where two merged promises share more than an instant: [from, to], or null. */
function promises_meet(array $a, array $b): ?array {
    foreach ($a as $x) {
        foreach ($b as $y) {
            $from = max($x[0], $y[0]);
            $to = min($x[1], $y[1]);
            if ($from < $to) { return [$from, $to]; }
        }
    }
    return null;
}

/** Whether a merged promise covers the instant $t (its intervals are [s, e)). */
function covers(array $promise, float $t): bool {
    foreach ($promise as [$s, $e]) { if ($s <= $t && $t < $e) { return true; } }
    return false;
}

/**
 * The instants where more than $permits of the sections' promises are in force: each
 * promise that starts while $permits others are, as [the sections in force, from, to]
 * (to: when the count falls back to $permits).
 */
function over_permits(array $sections, int $permits): array {
    $ev = [];
    foreach ($sections as $i => $s) {
        foreach ($s['promise'] as [$a, $b]) { $ev[] = [$a, 1, $i]; $ev[] = [$b, -1, $i]; }
    }
    // Ends before starts at one instant: promises that touch do not meet.
    usort($ev, fn($x, $y) => [$x[0], $x[1]] <=> [$y[0], $y[1]]);
    $active = [];
    $found = [];
    $open = [];   // indexes into $found still over the permits
    foreach ($ev as [$t, $d, $i]) {
        if ($d < 0) {
            unset($active[$i]);
            if (count($active) <= $permits) {
                foreach ($open as $k) { $found[$k][2] = $t; }
                $open = [];
            }
            continue;
        }
        $active[$i] = true;
        if (count($active) > $permits) {
            $found[] = [array_map(fn($k) => $sections[$k], array_keys($active)), $t, INF];
            $open[] = count($found) - 1;
        }
    }
    return $found;
}

/** A promise as text: "120.0–620.0, 640.0–∞ ms", or "none". */
function promise_text(array $promise): string {
    if (!$promise) { return 'none'; }
    return implode(', ', array_map(fn($x) => sprintf('%.1f–%s', $x[0], is_infinite($x[1]) ? '∞' : sprintf('%.1f', $x[1])), $promise)) . ' ms';
}
