<?php
// Checks every relative link and image in README.md, docs/**/*.md and the READMEs
// of tools/ and its folders: the target file or directory exists inside the
// repository, and a #anchor names a heading of the target markdown file under
// GitHub's rules. Links with a
// scheme (https:, mailto:, ...) are skipped, and so is everything inside fenced
// code blocks and inline code spans.
//
//   php -n tools/check/check-links.php [ROOT]     ROOT defaults to this script's repository
//
// Prints `FILE:LINE: broken link TARGET (why)` for each broken link and exits 1,
// or a one-line summary and exits 0. Needs only PHP's always-built extensions
// (pcre, standard): no mbstring, no dom.

declare(strict_types=1);

$root = $argv[1] ?? dirname(__DIR__, 2);
$root = realpath($root);
if ($root === false || !is_dir($root)) {
    fwrite(STDERR, "check-links: no such directory: " . ($argv[1] ?? dirname(__DIR__, 2)) . "\n");
    exit(2);
}

/** The markdown files checked: README.md, everything under docs/, and tools/'s READMEs. */
function markdownFiles(string $root): array
{
    $files = [];
    if (is_file("$root/README.md")) {
        $files[] = "$root/README.md";
    }
    if (is_dir("$root/docs")) {
        $it = new RecursiveIteratorIterator(
            new RecursiveDirectoryIterator("$root/docs", FilesystemIterator::SKIP_DOTS)
        );
        $docs = [];
        foreach ($it as $f) {
            if ($f->isFile() && preg_match('/\.(md|markdown)$/i', $f->getFilename())) {
                $docs[] = $f->getPathname();
            }
        }
        sort($docs);
        $files = array_merge($files, $docs);
    }
    $tools = array_merge(glob("$root/tools/README.md") ?: [], glob("$root/tools/*/README.md") ?: []);
    sort($tools);
    return array_merge($files, $tools);
}

/**
 * The file's lines with fenced code blocks blanked (the line count is kept),
 * and whether each line was inside a fence.
 */
function unfence(string $text): array
{
    $lines = preg_split('/\r\n|\n|\r/', $text);
    $out = [];
    $open = null;   // [char, length] of the open fence
    foreach ($lines as $line) {
        if ($open === null) {
            if (preg_match('/^\s*(`{3,}|~{3,})/', $line, $m)
                && !($m[1][0] === '`' && str_contains(substr($line, strlen($m[0])), '`'))) {
                $open = [$m[1][0], strlen($m[1])];
                $out[] = '';
                continue;
            }
            $out[] = $line;
        } else {
            if (preg_match('/^\s*(`{3,}|~{3,})\s*$/', $line, $m)
                && $m[1][0] === $open[0] && strlen($m[1]) >= $open[1]) {
                $open = null;
            }
            $out[] = '';
        }
    }
    return $out;
}

/**
 * The code spans of one paragraph: [start, end] byte offsets, backticks
 * included. A run of N backticks opens a span that the next run of exactly N
 * closes; a run with no such partner is literal.
 */
function codeSpans(string $block): array
{
    preg_match_all('/`+/', $block, $runs, PREG_OFFSET_CAPTURE);
    $runs = $runs[0];
    $spans = [];
    $n = count($runs);
    for ($r = 0; $r < $n; $r++) {
        [$tick, $at] = $runs[$r];
        if ($at > 0 && $block[$at - 1] === '\\') {
            continue;   // an escaped backtick cannot open a span
        }
        for ($c = $r + 1; $c < $n && strlen($runs[$c][0]) !== strlen($tick); $c++) {
        }
        if ($c === $n) {
            continue;
        }
        $spans[] = [$at, $runs[$c][1] + strlen($runs[$c][0])];
        $r = $c;
    }
    return $spans;
}

/** Blanks inline code spans, paragraph by paragraph, keeping newlines (so offsets still map to lines). */
function stripCodeSpans(string $text): string
{
    $blocks = preg_split('/(\n[ \t]*\n)/', $text, -1, PREG_SPLIT_DELIM_CAPTURE);
    foreach ($blocks as $i => $block) {
        if ($i % 2 === 0) {
            foreach (codeSpans($block) as [$a, $b]) {
                $block = substr_replace($block, preg_replace('/[^\n]/', ' ', substr($block, $a, $b - $a)), $a, $b - $a);
            }
            $blocks[$i] = $block;
        }
    }
    return implode('', $blocks);
}

/** Lowercases ASCII, and the common non-ASCII alphabets (Latin, Greek, Cyrillic). */
function lower(string $s): string
{
    $s = strtolower($s);
    if (!preg_match('/[\x80-\xff]/', $s)) {
        return $s;
    }
    return preg_replace_callback('/[^\x00-\x7f]/u', function (array $m): string {
        $cp = unpackUtf8($m[0]);
        $lc = $cp;
        if (($cp >= 0xC0 && $cp <= 0xDE && $cp !== 0xD7)      // À..Þ
            || ($cp >= 0x391 && $cp <= 0x3AB && $cp !== 0x3A2) // Α..Ϋ
            || ($cp >= 0x410 && $cp <= 0x42F)) {               // А..Я
            $lc = $cp + 32;
        } elseif ($cp >= 0x400 && $cp <= 0x40F) {              // Ѐ..Џ
            $lc = $cp + 80;
        } elseif ((($cp >= 0x100 && $cp <= 0x137) || ($cp >= 0x14A && $cp <= 0x177)
                || ($cp >= 0x460 && $cp <= 0x4BF) || ($cp >= 0x4D0 && $cp <= 0x52F)) && $cp % 2 === 0) {
            $lc = $cp + 1;
        } elseif ((($cp >= 0x139 && $cp <= 0x148) || ($cp >= 0x179 && $cp <= 0x17E)) && $cp % 2 === 1) {
            $lc = $cp + 1;
        } elseif ($cp === 0x178) {
            $lc = 0xFF;
        }
        return $lc === $cp ? $m[0] : packUtf8($lc);
    }, $s);
}

function unpackUtf8(string $c): int
{
    $b = array_values(unpack('C*', $c));
    return match (count($b)) {
        1 => $b[0],
        2 => (($b[0] & 0x1F) << 6) | ($b[1] & 0x3F),
        3 => (($b[0] & 0x0F) << 12) | (($b[1] & 0x3F) << 6) | ($b[2] & 0x3F),
        default => (($b[0] & 0x07) << 18) | (($b[1] & 0x3F) << 12) | (($b[2] & 0x3F) << 6) | ($b[3] & 0x3F),
    };
}

function packUtf8(int $cp): string
{
    if ($cp < 0x80) {
        return chr($cp);
    }
    if ($cp < 0x800) {
        return chr(0xC0 | ($cp >> 6)) . chr(0x80 | ($cp & 0x3F));
    }
    if ($cp < 0x10000) {
        return chr(0xE0 | ($cp >> 12)) . chr(0x80 | (($cp >> 6) & 0x3F)) . chr(0x80 | ($cp & 0x3F));
    }
    return chr(0xF0 | ($cp >> 18)) . chr(0x80 | (($cp >> 12) & 0x3F))
        . chr(0x80 | (($cp >> 6) & 0x3F)) . chr(0x80 | ($cp & 0x3F));
}

/** The text a heading renders to: code spans keep their content, links their text, markup goes. */
function headingText(string $raw): string
{
    $parts = [];   // [text, is code]
    $pos = 0;
    foreach (codeSpans($raw) as [$a, $b]) {
        $parts[] = [substr($raw, $pos, $a - $pos), false];
        $ticks = strspn($raw, '`', $a);
        $inner = substr($raw, $a + $ticks, $b - $a - 2 * $ticks);
        if (strlen($inner) > 2 && $inner[0] === ' ' && $inner[-1] === ' ' && trim($inner) !== '') {
            $inner = substr($inner, 1, -1);
        }
        $parts[] = [$inner, true];
        $pos = $b;
    }
    $parts[] = [substr($raw, $pos), false];
    $text = '';
    foreach ($parts as [$s, $code]) {
        if (!$code) {
            $s = preg_replace('/!?\[([^\]]*)\]\([^)]*\)/', '$1', $s);     // links and images: their text
            $s = preg_replace('/!?\[([^\]]*)\]\[[^\]]*\]/', '$1', $s);    // reference links
            $s = preg_replace('/<[^>]+>/', '', $s);                       // inline HTML
            $s = preg_replace('/(?<![\p{L}\p{N}_])_+(?=\S)|(?<=\S)_+(?![\p{L}\p{N}_])/u', '', $s); // _emphasis_
            $s = preg_replace('/\\\\([!-\/:-@\[-`{-~])/', '$1', $s);      // backslash escapes
            $s = html_entity_decode($s, ENT_QUOTES | ENT_HTML5, 'UTF-8');
        }
        $text .= $s;
    }
    return trim($text);
}

/** GitHub's anchor for a heading's text (github-slugger, before duplicates). */
function slug(string $text): string
{
    $s = lower($text);
    $s = preg_replace('/[^\p{L}\p{M}\p{N}_\- ]/u', '', $s);
    return str_replace(' ', '-', $s);
}

/** Every anchor a markdown file produces, in GitHub's order, duplicates numbered. */
function anchors(string $file): array
{
    static $cache = [];
    if (isset($cache[$file])) {
        return $cache[$file];
    }
    $lines = unfence((string) file_get_contents($file));
    $seen = [];
    $ids = [];
    $add = function (string $base) use (&$seen, &$ids): void {
        $id = $base;
        if (isset($seen[$base])) {
            do {
                $id = $base . '-' . (++$seen[$base]);
            } while (isset($seen[$id]));
        }
        $seen[$id] = 0;
        $ids[$id] = true;
    };
    $prev = '';
    foreach ($lines as $n => $line) {
        if (preg_match('/^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/', $line, $m)) {
            $add(slug(headingText($m[2] ?? '')));
            $prev = '';
            continue;
        }
        if (preg_match('/^ {0,3}(=+|-+)[ \t]*$/', $line) && trim($prev) !== ''
            && !preg_match('/^\s*([-*+>|]|\d+[.)])(\s|$)|^ {4}|^\s*#/', $prev)) {
            $add(slug(headingText(trim($prev))));
            $prev = '';
            continue;
        }
        // Explicit HTML anchors: <a name="x"> or id="x".
        if (preg_match_all('/<[a-z][^>]*\s(?:name|id)\s*=\s*["\']([^"\']+)["\']/i', $line, $mm)) {
            foreach ($mm[1] as $id) {
                $ids[$id] = true;
            }
        }
        $prev = $line;
    }
    return $cache[$file] = $ids;
}

/** The links of one markdown file: [line, target] pairs, code excluded. */
function links(string $file): array
{
    $text = implode("\n", unfence((string) file_get_contents($file)));
    $text = stripCodeSpans($text);
    $found = [];
    // Inline links and images: [text](dest "title") / ![alt](dest)
    preg_match_all('/\]\(\s*(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:"[^"]*"|\'[^\']*\'|\([^)]*\)))?\s*\)/',
        $text, $m, PREG_OFFSET_CAPTURE);
    foreach ($m[1] as [$dest, $at]) {
        $found[] = [substr_count($text, "\n", 0, $at) + 1, trim($dest, '<>')];
    }
    // Reference definitions: [label]: dest
    preg_match_all('/^ {0,3}\[[^\]]+\]:[ \t]*(<[^>\n]*>|\S+)/m', $text, $m, PREG_OFFSET_CAPTURE);
    foreach ($m[1] as [$dest, $at]) {
        $found[] = [substr_count($text, "\n", 0, $at) + 1, trim($dest, '<>')];
    }
    // HTML: <img src="..."> and <a href="...">
    preg_match_all('/<(?:img|a|source)\b[^>]*?\s(?:src|href|srcset)\s*=\s*["\']([^"\']*)["\']/i', $text, $m, PREG_OFFSET_CAPTURE);
    foreach ($m[1] as [$dest, $at]) {
        $found[] = [substr_count($text, "\n", 0, $at) + 1, $dest];
    }
    usort($found, fn($a, $b) => $a[0] <=> $b[0]);
    return $found;
}

/** Why a link does not resolve, or null when it does. */
function problem(string $root, string $file, string $target): ?string
{
    $hash = strpos($target, '#');
    $path = $hash === false ? $target : substr($target, 0, $hash);
    $anchor = $hash === false ? null : rawurldecode(substr($target, $hash + 1));
    $path = rawurldecode(preg_replace('/\?.*$/', '', $path));

    if ($path === '') {
        $dest = $file;
    } else {
        $base = $path[0] === '/' ? $root : dirname($file);
        $dest = realpath($base . '/' . ltrim($path, '/'));
        if ($dest === false) {
            return 'no such file';
        }
        if ($dest !== $root && !str_starts_with($dest, $root . '/')) {
            return 'outside the repository';
        }
    }
    if ($anchor === null || $anchor === '') {
        return null;
    }
    if (is_dir($dest)) {
        return 'an anchor on a directory';
    }
    if (!preg_match('/\.(md|markdown)$/i', $dest)) {
        if (preg_match('/^L(\d+)(?:C\d+)?(?:-L(\d+)(?:C\d+)?)?$/', $anchor, $m)) {
            $count = substr_count((string) file_get_contents($dest), "\n") + 1;
            return max((int) $m[1], (int) ($m[2] ?? 0)) <= $count ? null : 'no such line';
        }
        return 'an anchor into a file that is not markdown';
    }
    return isset(anchors($dest)[$anchor]) ? null : 'no heading makes this anchor';
}

$files = markdownFiles($root);
$total = 0;
$broken = 0;
foreach ($files as $file) {
    $rel = substr($file, strlen($root) + 1);
    foreach (links($file) as [$line, $target]) {
        if ($target === '' || preg_match('/^[a-z][a-z0-9+.-]*:/i', $target) || str_starts_with($target, '//')) {
            continue;   // a URL with a scheme, or an empty destination
        }
        $total++;
        $why = problem($root, $file, $target);
        if ($why !== null) {
            echo "$rel:$line: broken link $target ($why)\n";
            $broken++;
        }
    }
}

if ($broken > 0) {
    echo "check-links: $broken of $total links broken in " . count($files) . " files\n";
    exit(1);
}
echo "check-links: $total links in " . count($files) . " files, all resolve\n";
exit(0);
