<?php
// Usage: php -n -d extension=MODULE.so tools/package/ini.php > redis_lock.ini
//
// Writes the redis_lock.ini that `make install` and `make deb` install:
// packaging/redis_lock.ini.in, its @DIRECTIVES@ line replaced by every directive of
// the loaded module, commented out, with its default (the module's own, so what
// src/config.rs declares, and src/php/ini.rs for the startup ones), under the
// meaning docs/configuration.md's tables give it. A new option so needs no line here: its declaration and its docs row make it.
// Fails when the module and the table disagree on the names (the crate's test
// `the_documented_table_is_the_declaration` also holds their defaults to each other).

$root = dirname(__DIR__, 2);
if (!extension_loaded('redis_lock')) {
    fail('the redis_lock module is not loaded: run php -n -d extension=MODULE.so ' . $argv[0]);
}
$defaults = ini_get_all('redis_lock', false);

$lines = file("$root/docs/configuration.md", FILE_IGNORE_NEW_LINES) ?: fail('cannot read docs/configuration.md');
// Two tables: the options (also keys of $options), and the directives read only at
// startup (the pool's metrics).
$blocks = [];
$seen = [];
foreach (['| name | default | meaning |', '| startup directive | default | meaning |'] as $header) {
$start = array_search($header, $lines, true);
$start !== false || fail("docs/configuration.md has no \"$header\" table");
for ($i = $start + 2; isset($lines[$i]) && str_starts_with($lines[$i], '|'); $i++) {
    [, $names, $default, $meaning] = array_map('trim', explode('|', $lines[$i], 4)) + [3 => ''];
    // What the default cell says besides the value ("`0` (no cap)"), kept.
    $note = preg_match('~^`[^`]*` \(([^`()]+)\)$~', $default, $m) ? " (default: $m[1])" : '';
    $block = comment(rtrim($meaning, ' |') . $note);
    foreach (explode(',', $names) as $name) {
        $name = 'redis_lock.' . trim($name, " `");
        array_key_exists($name, $defaults) || fail("docs/configuration.md lists $name, which the module does not have");
        $seen[$name] = true;
        $block .= ";$name = " . value($name, $defaults[$name]) . "\n";
    }
    $blocks[] = $block;
}
}
foreach (array_diff_key($defaults, $seen) as $name => $_) {
    fail("$name is not in docs/configuration.md's table");
}

$template = file_get_contents("$root/packaging/redis_lock.ini.in");
$template !== false && str_contains($template, "@DIRECTIVES@\n") || fail('packaging/redis_lock.ini.in has no @DIRECTIVES@ line');
echo str_replace("@DIRECTIVES@\n", implode("\n", $blocks), $template);

/** A docs cell as ini comment lines: links and code marks dropped, wrapped. */
function comment(string $markdown): string
{
    $text = preg_replace('~\s*\(see \[[^\]]*\]\([^)]*\)\)~', '', $markdown);   // "(see [Waiting](waiting.md))"
    $text = preg_replace('~; see \[[^\]]*\]\([^)]*\)~', '', $text);           // "(...; see [API](api.md))"
    $text = preg_replace('~\[([^\]]*)\]\([^)]*\)~', '$1', $text);             // [text](link) -> text
    $text = str_replace('`', '', $text);
    return '; ' . wordwrap($text, 78, "\n; ", false) . "\n";
}

/** A default as php.ini reads it back unchanged: a number bare, anything else quoted. */
function value(string $name, string $default): string
{
    if (preg_match('~^[0-9]+(\.[0-9]+)?$~', $default)) {
        return $default;
    }
    // Inside double quotes php.ini gives these a meaning of their own.
    strpbrk($default, "\"\\\$\n") === false || fail("$name: its default cannot be written quoted");
    return '"' . $default . '"';
}

function fail(string $why): never
{
    fwrite(STDERR, "ini.php: $why\n");
    exit(1);
}
