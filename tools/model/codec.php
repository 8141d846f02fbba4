<?php
// How values travel between tools/model/run.php and its client processes, one JSON
// line each way: strings as {"s": hex} (tokens are binary), floats as {"f": number,
// or "INF", "-INF", "NAN"}, arrays as {"a": {...}}.
declare(strict_types=1);

function enc(mixed $v): mixed {
    if (is_string($v)) { return ['s' => bin2hex($v)]; }
    if (is_float($v)) { return ['f' => is_finite($v) ? $v : (is_nan($v) ? 'NAN' : ($v > 0 ? 'INF' : '-INF'))]; }
    if (is_array($v)) { return ['a' => array_map('enc', $v)]; }
    return $v;
}

function dec(mixed $v): mixed {
    if (!is_array($v)) { return $v; }
    if (isset($v['s'])) { return hex2bin($v['s']); }
    if (array_key_exists('f', $v)) { return is_string($v['f']) ? ['INF' => INF, '-INF' => -INF, 'NAN' => NAN][$v['f']] : (float) $v['f']; }
    if (isset($v['a'])) { return array_map('dec', $v['a']); }
    return array_map('dec', $v);
}
