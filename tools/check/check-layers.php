<?php
// Usage: php -n tools/check/check-layers.php [SRC_DIR]   (make check-layers, part of make test)
//        php -n tools/check/check-layers.php --self-test
//
// Keeps src/ in floors, each importing only the floors below it:
//
//   php > kinds > hold > topology > net > the ground floor (src/*.rs)
//
// It reads every path in src/ that names a module of the crate (inside an inline
// module, `mod tests { use super::*; }`, `super` is the file's own): `crate::a::b`,
// `super::x` (and `super::super::x`), `self::x`, and in `use` lines a child module's
// name (`use release::fire` in kinds/lock/mod.rs). Comment lines are skipped. It
// fails, printing the offending import, on:
//   - an import that climbs: a module importing one on a floor above its own;
//   - an import that crosses: between two folders of the same floor (none share one);
//   - a circle between files (through any number of them), `super::` paths and a
//     parent's imports of its children included: a module's own files may use it,
//     or it them, but not both ways round.
// A folder that no floor lists is an error, so a new one must be given its place.
// --self-test plants a circle (and a climb) in a scratch tree and checks that each is
// found, and that a clean tree passes.

const FLOORS = ['' => 0, 'net' => 1, 'topology' => 2, 'hold' => 3, 'kinds' => 4, 'php' => 5];

if (($argv[1] ?? '') === '--self-test') {
    exit(self_test());
}
$src = rtrim($argv[1] ?? dirname(__DIR__, 2) . '/src', '/');
[$problems, $count, $modules] = check($src);
foreach ($problems as $p) {
    echo "check-layers: $p\n";
}
if ($problems) {
    echo 'check-layers: ' . count($problems) . " problem(s) in $count imports\n";
    exit(1);
}
echo "check-layers: $count imports between " . count($modules) . " modules, every one pointing down, no circles\n";

/** The module a file is: "net::pool", "config", "net" (net/mod.rs), "" (lib.rs). */
function module_of(string $rel): string
{
    $parts = explode('/', substr($rel, 0, -3));
    $last = array_pop($parts);
    if ($last !== 'mod' && $last !== 'lib') {
        $parts[] = $last;
    }
    return implode('::', $parts);
}

/** The folder a module lives in ("" for the ground floor). */
function folder_of(string $module): string
{
    $parts = explode('::', $module);
    return count($parts) > 1 || isset(FLOORS[$parts[0]]) ? $parts[0] : '';
}

/** The module `$path` (segments, from the crate root) names: its longest prefix that is a module, or null. */
function resolve(array $path, array $modules): ?string
{
    if (!$path) {
        return '';
    }
    for ($n = count($path); $n > 0; $n--) {
        $m = implode('::', array_slice($path, 0, $n));
        if (isset($modules[$m])) {
            return $m;
        }
    }
    return null;
}

/**
 * The modules one line of module $from imports: its `crate::`, `super::` and `self::`
 * paths, and in a `use` line a first segment that is one of $from's child modules.
 */
function imports(string $line, string $from, array $modules, ?string $file = null): array
{
    $file ??= $from;
    $here = $from === '' ? [] : explode('::', $from);
    $out = [];
    // `super::*` and `super::{a, b}` name the parent itself (and whatever follows);
    // visibility (`pub(super)`, `pub(in crate::kinds)`) names nothing.
    $line = preg_replace('~\bpub\s*\((?:in\s+)?[\w:]+\)~', 'pub', $line);
    preg_match_all('~\b(crate|(?:super::)+super|super|self)((?:::\w+)*)(?=::[*{]|::\w|\W|$)~', $line, $m, PREG_SET_ORDER);
    foreach ($m as [, $head, $tail]) {
        if ($tail === '' && $head !== 'super' && !str_starts_with($head, 'super')) {
            continue;   // a bare `self` (self.x) or `crate`
        }
        $rest = $tail === '' ? [] : explode('::', substr($tail, 2));
        if ($head === 'crate') {
            $base = [];
        } elseif ($head === 'self') {
            $base = $here;
        } else {
            $up = substr_count($head, 'super');
            $base = array_slice($here, 0, max(0, count($here) - $up));
        }
        $out[] = resolve(array_merge($base, $rest), $modules);
    }
    // `use child::item` / `pub use child::{…}`: a child module named without `self::`.
    if (preg_match('~^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+(\w+)::~', $line, $u) && !in_array($u[1], ['crate', 'super', 'self', 'std', 'core', 'alloc'], true)) {
        $child = implode('::', array_merge($here, [$u[1]]));
        if (isset($modules[$child])) {
            $out[] = $child;
        }
    }
    return array_values(array_filter($out, fn($t) => $t !== null && $t !== '' && $t !== $from && $t !== $file));
}

/** [problems, imports counted, modules] for the tree $src. */
function check(string $src): array
{
    $files = [];
    $it = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($src, FilesystemIterator::SKIP_DOTS));
    foreach ($it as $f) {
        if (substr($f->getFilename(), -3) === '.rs') {
            $files[] = substr($f->getPathname(), strlen($src) + 1);
        }
    }
    sort($files);
    $modules = [];
    foreach ($files as $rel) {
        $modules[module_of($rel)] = $rel;
    }
    $problems = [];
    $edges = [];   // module => [imported module => "file:line"]
    foreach ($files as $rel) {
        $from = module_of($rel);
        if ($from === '') {
            continue;   // lib.rs only wires the floors together
        }
        $folder = folder_of($from);
        if (!isset(FLOORS[$folder])) {
            $problems[] = "src/$rel: the folder '$folder' has no floor: give it one in tools/check/check-layers.php";
            continue;
        }
        // Inside an inline module (`mod tests { use super::*; … }`), `super` is the
        // file's own module: its lines are read as that inner module's.
        $inner = null;
        foreach (file("$src/$rel") as $i => $line) {
            if (preg_match('~^\s*//~', $line)) {
                continue;
            }
            if (preg_match('~^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*\{~', $line, $mm)) {
                $inner = "$from::{$mm[1]}";
            }
            foreach (imports($line, $inner ?? $from, $modules, $from) as $to) {
                $where = "src/$rel:" . ($i + 1);
                $edges[$from][$to] ??= $where;
                $target = folder_of($to);
                if ($target === $folder || $to === '') {
                    continue;
                }
                $a = FLOORS[$folder];
                $b = FLOORS[$target] ?? null;
                if ($b === null) {
                    $problems[] = "$where: $from imports $to, whose folder '$target' has no floor";
                } elseif ($b > $a) {
                    $problems[] = "$where: $from imports $to, a floor above its own (" . ($folder ?: 'ground') . " < $target)";
                } elseif ($b === $a) {
                    $problems[] = "$where: $from imports $to, across the floor ($folder and $target share one)";
                }
            }
        }
    }
    foreach (circles($edges) as $scc) {
        sort($scc);
        $lines = [];
        foreach ($scc as $a) {
            foreach ($edges[$a] as $b => $where) {
                if (in_array($b, $scc, true)) {
                    $lines[] = "    $where: $a imports $b";
                }
            }
        }
        $problems[] = 'a circle between ' . implode(', ', $scc) . ":\n" . implode("\n", $lines);
    }
    return [$problems, array_sum(array_map('count', $edges)), $modules];
}

/** The strongly connected components of more than one module (Tarjan). */
function circles(array $edges): array
{
    $index = $low = $stack = $on = [];
    $n = 0;
    $found = [];
    $visit = function (string $v) use (&$visit, &$index, &$low, &$stack, &$on, &$n, &$found, $edges): void {
        $index[$v] = $low[$v] = $n++;
        $stack[] = $v;
        $on[$v] = true;
        foreach (array_keys($edges[$v] ?? []) as $w) {
            if (!isset($index[$w])) {
                $visit($w);
                $low[$v] = min($low[$v], $low[$w]);
            } elseif (!empty($on[$w])) {
                $low[$v] = min($low[$v], $index[$w]);
            }
        }
        if ($low[$v] === $index[$v]) {
            $scc = [];
            do {
                $w = array_pop($stack);
                $on[$w] = false;
                $scc[] = $w;
            } while ($w !== $v);
            if (count($scc) > 1) {
                $found[] = $scc;
            }
        }
    };
    foreach (array_keys($edges) as $v) {
        if (!isset($index[$v])) {
            $visit($v);
        }
    }
    return $found;
}

/** Plants trees that must fail, and one that must pass; 0 when every verdict is right. */
function self_test(): int
{
    $cases = [
        'a clean tree passes' => [[
            'lib.rs' => 'pub mod kinds; pub mod net;',
            'net/mod.rs' => 'pub mod pool;',
            'net/pool.rs' => 'use crate::keys::Key;',
            'keys.rs' => '',
            'kinds/mod.rs' => 'pub mod lock;',
            'kinds/lock/mod.rs' => "mod acquire;\nmod wait;\nuse crate::net::pool::run;\nuse wait::w;",
            'kinds/lock/acquire.rs' => "use super::Lock;\nmod tests {\n    use super::*;\n}",
            'kinds/lock/wait.rs' => "use crate::net::pool::y;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}",
        ], null],
        'a parent that uses its child, which uses it (super::)' => [[
            'lib.rs' => 'pub mod kinds;',
            'kinds/mod.rs' => 'pub mod lock;',
            'kinds/lock/mod.rs' => "mod release;\nuse release::fire;",
            'kinds/lock/release.rs' => 'use super::*;',
        ], 'a circle between kinds::lock, kinds::lock::release'],
        'a circle through three files, one by super::super::' => [[
            'lib.rs' => 'pub mod kinds;',
            'kinds/mod.rs' => "pub mod a;\npub mod b;\nuse crate::kinds::a::x;",
            'kinds/a.rs' => 'use self::inner;',
            'kinds/b/mod.rs' => 'pub mod c;',
            'kinds/b/c.rs' => 'use super::super::Thing;',
        ], 'a circle between kinds, kinds::a'],
        'an import that climbs' => [[
            'lib.rs' => 'pub mod net; pub mod kinds;',
            'net/mod.rs' => 'use crate::kinds::Lock;',
            'kinds/mod.rs' => '',
        ], 'a floor above its own'],
    ];
    // The second case's circle is kinds::lock <-> kinds::lock::release; the third's is
    // kinds <- kinds::b::c (super::super) and kinds -> kinds::a -> (self) is not one:
    // kinds imports kinds::a, and kinds::b::c imports kinds, but nothing closes it
    // unless kinds imports kinds::b::c: planted below.
    $cases['a circle through three files, one by super::super::'][0]['kinds/mod.rs'] .= "\nuse crate::kinds::b::c::y;";
    $cases['a circle through three files, one by super::super::'][1] = 'a circle between kinds, kinds::b::c';
    $failed = 0;
    foreach ($cases as $name => [$tree, $expect]) {
        $dir = sys_get_temp_dir() . '/check-layers-' . getmypid() . '-' . md5($name);
        foreach ($tree as $rel => $text) {
            @mkdir(dirname("$dir/$rel"), 0777, true);
            file_put_contents("$dir/$rel", $text . "\n");
        }
        [$problems] = check($dir);
        $text = implode("\n", $problems);
        $ok = $expect === null ? !$problems : str_contains($text, $expect);
        echo ($ok ? 'ok   ' : 'FAIL ') . $name . ($ok ? '' : ": got " . ($text ?: 'no problem')) . "\n";
        $failed += $ok ? 0 : 1;
        exec('rm -rf ' . escapeshellarg($dir));
    }
    echo $failed ? "check-layers self-test: $failed case(s) failed\n" : "check-layers self-test: every planted problem found\n";
    return $failed ? 1 : 0;
}
