<?php
// Finishes the stub that `cargo php stubs` prints (read on stdin) for the
// extension loaded in this process:
// - a method documented `@return string|false ...` returns a Zval, which
//   cargo-php can only call `mixed`: the documented type becomes the real one;
// - classes the engine reports final are written final;
// - the exception classes, which are plain PHP classes registered at startup
//   and so invisible to cargo-php, are added from reflection.
$stub = stream_get_contents(STDIN);

$stub = preg_replace_callback('~(/\*\*(?:(?!\*/).)*?@return ([^\s*]+)[^\n]*\n(?:(?!\*/).)*?)\n\s*\* @return mixed\n(\s*\*/\s*\n\s*public function \w+\([^)]*\)): mixed~s',
    fn($m) => $m[1] . "\n" . $m[3] . ': ' . $m[2], $stub);

$stub = preg_replace_callback('~^(\s*)class (\w+)~m', function ($m) {
    return $m[1] . ((class_exists($m[2]) && (new ReflectionClass($m[2]))->isFinal()) ? 'final ' : '') . 'class ' . $m[2];
}, $stub);

$docs = [
    'LockException' => 'Redis itself failed: the base of the extension\'s exceptions.',
    'LockConnectionException' => 'Redis is unreachable, timed out, refused authentication or broke the protocol. The message names the address and the cause, never a password.',
    'LockTimeoutException' => 'The lock could not be had in time, for APIs that throw instead of returning false.',
    'LockLostException' => 'synchronized()\'s callable returned, but the hold had not lasted to the release (the watchdog or the release found its token gone): the work ran without exclusivity, and its result is not returned.',
];
$extra = '';
foreach ((new ReflectionExtension('redis_lock'))->getClasses() as $class) {
    if (!$class->isSubclassOf(Throwable::class) || str_contains($stub, 'class ' . $class->getName() . ' ')) {
        continue;
    }
    $doc = $docs[$class->getName()] ?? '';
    $extra .= "\n    /**\n     * " . wordwrap($doc, 90, "\n     * ") . "\n     */\n"
        . '    class ' . $class->getName() . ' extends \\' . $class->getParentClass()->getName() . " {}\n";
}
$stub = preg_replace('~\n}\s*$~', $extra . "}\n", $stub);
echo $stub;
