<?php
// Usage: php -n tools/check-layers.php [SRC_DIR]   (make check-layers, part of make test)
//
// Keeps src/ in floors, each importing only the floors below it:
//
//   php > kinds > hold > wait > topology > net > the ground floor (src/*.rs)
//
// It reads every `crate::` path in src/ (use lines and paths written inline; comment
// lines are skipped) and fails, printing the offending import, on:
//   - an import that climbs: a module importing one on a floor above its own;
//   - an import that crosses: between two folders of the same floor (none share one);
//   - a circle between files (through any number of them), which within one folder
//     the floors alone would not catch.
// A folder's mod.rs belongs to its folder, and a module's own files (kinds/lock/*.rs
// of kinds/lock/mod.rs) are its parts: they may use it (through `super::`, which is
// not read). A folder that no floor lists is an error, so a new one must be given
// its place.

const FLOORS = ['' => 0, 'net' => 1, 'topology' => 2, 'wait' => 3, 'hold' => 4, 'kinds' => 5, 'php' => 6];

$src = rtrim($argv[1] ?? dirname(__DIR__) . '/src', '/');
$files = [];
$it = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($src, FilesystemIterator::SKIP_DOTS));
foreach ($it as $f) {
    if (substr($f->getFilename(), -3) === '.rs') {
        $files[] = substr($f->getPathname(), strlen($src) + 1);
    }
}
sort($files);

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
        $problems[] = "src/$rel: the folder '$folder' has no floor: give it one in tools/check-layers.php";
        continue;
    }
    foreach (file("$src/$rel") as $i => $line) {
        if (preg_match('~^\s*//~', $line)) {
            continue;
        }
        preg_match_all('~\bcrate::(\w+)(?:::(\w+))?~', $line, $m, PREG_SET_ORDER);
        foreach ($m as $hit) {
            // The longest module path that names a file: crate::net::pool::run -> net::pool.
            $to = isset($hit[2], $modules["$hit[1]::$hit[2]"]) ? "$hit[1]::$hit[2]" : $hit[1];
            if (!isset($modules[$to])) {
                continue;   // a macro or item at the crate root
            }
            if ($to === $from || str_starts_with($from, "$to::")) {
                continue;   // itself, or its own folder's mod.rs
            }
            $where = "src/$rel:" . ($i + 1);
            $edges[$from][$to] ??= $where;
            $target = folder_of($to);
            if ($target === $folder) {
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

// Circles between files: Tarjan's strongly connected components.
$index = $low = $stack = $on = [];
$n = 0;
$circles = [];
$visit = function (string $v) use (&$visit, &$index, &$low, &$stack, &$on, &$n, &$circles, $edges): void {
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
            $circles[] = $scc;
        }
    }
};
foreach (array_keys($edges) as $v) {
    if (!isset($index[$v])) {
        $visit($v);
    }
}
foreach ($circles as $scc) {
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

foreach ($problems as $p) {
    echo "check-layers: $p\n";
}
$count = array_sum(array_map('count', $edges));
if ($problems) {
    echo 'check-layers: ' . count($problems) . " problem(s) in $count imports\n";
    exit(1);
}
echo "check-layers: $count imports between " . count($modules) . " modules, every one pointing down, no circles\n";
