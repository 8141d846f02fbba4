#!/usr/bin/env bash
# Usage: tools/test/test-install.sh   (make test-install, inside tools/clean-root.sh)
#
# Checks each way of installing the extension, the way a user would, with no -d flag:
#   1. make install, then make uninstall;
#   2. the .deb from make deb: apt-get install, apt-get remove, apt-get purge;
#   3. phpize && ./configure && make && make install, the PECL/PIE flow, including
#      configure's refusals without cargo and without libclang; composer validate.
# After 1 and 2, the operator's tool /usr/bin/redis-lock must run with this PHP and
# list a lock another process holds; after removal, it must be gone.
# After each install, `php --ri redis_lock` must answer, and a php-fpm pool (Debian's
# php-fpm<ver>, reading its own php.ini and conf.d) must serve a request that takes
# and releases a lock on a throwaway server. After each removal, neither may know
# the module, and neither may warn about it.
#
# It installs and removes system packages, so it refuses to run outside a root made
# by tools/clean-root.sh: tools/clean-root.sh -- make test-install
set -uo pipefail
cd "$(dirname "$0")/../.."

if [ ! -f /.redis-lock-clean-root ]; then
    echo "test-install: this installs and removes system packages; run it in a throwaway root:" >&2
    echo "  tools/clean-root.sh -- make test-install" >&2
    exit 2
fi
if [ -z "${REDIS_LOCK_TEST_DSN:-}" ]; then
    tools/env/deps.sh --install-tests || exit 1
    exec tools/test/with-redis.sh "$0"
fi

ver=$(php-config --version | cut -d. -f1,2)
api=$(php-config --phpapi)
ext_dir=$(php-config --extension-dir)
fpm=$(command -v "php-fpm$ver")
work=$(mktemp -d /tmp/redis-lock-install.XXXXXX)
fpm_pid=

. tools/test/tap.sh

# A php-fpm master with one pool on a free loopback port, run as Debian runs it:
# its php.ini and conf.d are /etc/php/<ver>/fpm/, workers run as www-data.
fpm_port=$(php -n -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo substr(strrchr(stream_socket_get_name($s, false), ":"), 1);')
cat >"$work/fpm.conf" <<EOF
[global]
pid = $work/fpm.pid
error_log = $work/fpm.log
daemonize = no
[lock]
listen = 127.0.0.1:$fpm_port
user = www-data
group = www-data
pm = static
pm.max_children = 2
catch_workers_output = yes
EOF
chmod 755 "$work"
cat >"$work/lock.php" <<'EOF'
<?php
// Served by php-fpm: take a lock, see it held, release it, see it free.
if (!class_exists('Lock')) { exit(php_sapi_name() . " has no Lock class\n"); }
$key = 'install-test:' . bin2hex(random_bytes(6));
$lock = new Lock($key, 0, 5, ['dsn' => $_GET['dsn']]);
$token = $lock->addLock();
$other = new Lock($key, 0, 5, ['dsn' => $_GET['dsn']]);
$held = is_string($token) && $other->tryLock() === false && $lock->isOwned($token);
$released = $lock->releaseLock($token) && !$lock->isLocked();
echo php_sapi_name(), ' redis_lock ', phpversion('redis_lock'), ': ',
    $held && $released ? 'took and released a lock' : 'FAILED', "\n";
EOF
cat >"$work/ini.php" <<'EOF'
<?php
// An ini_set() ends with its request: the next request a worker serves reads
// php.ini's value again (the engine restores it, and the extension must not keep
// the settings it read before).
$lock = new Lock('install-test:ini:' . bin2hex(random_bytes(6)), 0, 5, ['dsn' => $_GET['dsn']]);
$fenced = is_string($t = $lock->addLock()) ? $lock->getFencingToken() : null;
$lock->releaseLock($t);
echo is_int($fenced) ? 'fenced' : 'UNFENCED', ' in worker ', getmypid(), "\n";
ini_set('redis_lock.fencing', 'Off');
new Lock('install-test:ini', 0, 5, ['dsn' => $_GET['dsn']]);   // made with the changed value
EOF
# Six requests to a pool of two workers: a worker serves at least three of them.
fpm_ini_requests() {
    for _ in 1 2 3 4 5 6; do fpm_get ini.php; done | grep -c '^fenced in worker'
}
fpm_start() {
    "$fpm" --fpm-config "$work/fpm.conf" &
    fpm_pid=$!
    for _ in $(seq 100); do
        php -n -r 'exit(@fsockopen("127.0.0.1", (int) $argv[1]) ? 0 : 1);' "$fpm_port" && return 0
        sleep 0.05
    done
    cat "$work/fpm.log"
    return 1
}
fpm_stop() {
    [ -n "$fpm_pid" ] || return 0
    kill -QUIT "$fpm_pid" 2>/dev/null
    wait "$fpm_pid" 2>/dev/null
    fpm_pid=
}
# The framework bridges in php-fpm: a request that dies of a fatal error releases the
# Symfony lock it held (per-request state, a shutdown function); one that ends
# normally leaves a lock without autoRelease to its lease, as Symfony documents.
cp -r bridges "$work/bridges"
chmod -R a+rX "$work/bridges"
cat >"$work/bridge.php" <<'EOF'
<?php
require '/usr/share/php/Symfony/Component/Lock/autoload.php';
require __DIR__ . '/bridges/autoload.php';
$factory = new Symfony\Component\Lock\LockFactory(new RedisLock\Bridge\Symfony\LockStore($_GET['dsn']));
$name = $_GET['name'];
switch ($_GET['step']) {
    case 'fatal':
        $factory->createLock($name, 30, false)->acquire() or exit("FAILED to take it\n");
        // A fatal error's response carries no output: a marker on the server says it was taken.
        (new Lock("$name:taken", 0, 60, ['dsn' => $_GET['dsn'], 'auto_release' => false]))->tryLock();
        ini_set('memory_limit', '16M');
        $waste = str_repeat('x', 64 << 20);
    case 'end':
        $factory->createLock($name, 30, false)->acquire() or exit("FAILED to take it\n");
        exit("took $name\n");
    case 'look':
        foreach ([$name, "$name:taken"] as $key) {
            echo $key, ' is ', (new Lock($key, 0, 1, ['dsn' => $_GET['dsn']]))->isLocked() ? 'held' : 'free', "\n";
        }
}
EOF
# fpm_get [SCRIPT [QUERY]]: a GET request to the pool (default: lock.php).
fpm_get() {
    SCRIPT_FILENAME=$work/${1:-lock.php} SCRIPT_NAME=/${1:-lock.php} REQUEST_METHOD=GET \
        QUERY_STRING="dsn=$REDIS_LOCK_TEST_DSN${2:+&$2}" cgi-fcgi -bind -connect "127.0.0.1:$fpm_port" </dev/null
}
cleanup() { fpm_stop; rm -rf "$work"; }
trap cleanup EXIT

# The module answers in the CLI and in a php-fpm pool, with no -d flag.
expect_enabled() {
    local how=$1
    expect_output "$how: php --ri redis_lock" "^redis_lock support => enabled" php --ri redis_lock
    expect_output "$how: php -m lists redis_lock" "^redis_lock$" php -m
    expect_no_output "$how: php starts without a warning" "Warning|Unable to load|Cannot load" php -r 'echo 1;'
    if fpm_start; then
        expect_output "$how: php-fpm $ver serves a request that takes and releases a lock" \
            "fpm-fcgi redis_lock [0-9.]+: took and released a lock" fpm_get
        fpm_stop
        expect_no_output "$how: php-fpm starts without a warning" "WARNING|Unable to load|Cannot load" cat "$work/fpm.log"
    else
        not_ok "$how: php-fpm $ver starts"
    fi
}
# Neither the CLI nor php-fpm knows the module, and neither warns about it.
expect_disabled() {
    local how=$1
    expect_no_output "$how: php -m no longer lists redis_lock" "^redis_lock$" php -m
    expect_no_output "$how: php starts without a warning" "Warning|Unable to load|Cannot load" php -r 'echo 1;'
    expect_no_output "$how: no conf.d link is left" "redis_lock" find "/etc/php/$ver" -name '*redis_lock*' -path '*conf.d*'
    if fpm_start; then
        expect_output "$how: php-fpm no longer has the Lock class" "fpm-fcgi has no Lock class" fpm_get
        fpm_stop
        expect_no_output "$how: php-fpm starts without a warning" "WARNING|Unable to load|Cannot load" cat "$work/fpm.log"
    else
        not_ok "$how: php-fpm $ver starts"
    fi
}

# The operator's tool, as installed: /usr/bin/redis-lock on this PHP, its help, and a
# listing that shows a lock another process holds (under a prefix of its own).
cli_list() {
    local prefix=install-test-cli:$RANDOM$RANDOM:
    php -r '(new Lock("held", 0, 30, ["dsn" => $argv[1], "prefix" => $argv[2], "auto_release" => false, "owner_info" => true]))->tryLock() or exit(1);' \
        "$REDIS_LOCK_TEST_DSN" "$prefix" || { echo "could not take the lock"; return 1; }
    redis-lock --dsn="$REDIS_LOCK_TEST_DSN" --prefix="$prefix" list
}
expect_tool() {
    local how=$1
    check "$how: redis-lock is /usr/bin/redis-lock, run by php$ver" bash -c \
        "[ \"\$(command -v redis-lock)\" = /usr/bin/redis-lock ] && [ \"\$(head -n 1 \"\$(readlink -f /usr/bin/redis-lock)\")\" = '#!/usr/bin/php$ver' ]"
    expect_output "$how: redis-lock --help runs" "^usage: redis-lock \[OPTIONS\] list \[PATTERN\]$" redis-lock --help
    expect_output "$how: redis-lock list shows a lock another process holds" "^held +lock +write +[0-9.]+s +1 +0 +[^ ]+:[0-9]+ cli( |$)" cli_list
    expect_fail_output "$how: redis-lock says what is wrong, and fails" "^redis-lock: unknown command: frobnicate$" redis-lock frobnicate
}

echo "# 1. make install / make uninstall (PHP $ver, API $api)"
check "make install" make install
expect_output "as another user it refuses, and says why" "cannot write to $ext_dir: run as root" \
    setpriv --reuid=nobody --regid=nogroup --clear-groups tools/package/install.sh install target/release/libredis_lock.so
check "the module is in the extension dir" test -f "$ext_dir/redis_lock.so"
expect_output "the ini is in mods-available, with its priority" "^; priority=20" cat "/etc/php/$ver/mods-available/redis_lock.ini"
expect_enabled "make install"
expect_tool "make install"
if fpm_start; then
    expect_output "php-fpm: a request takes a Symfony lock through the bridge, then dies of a fatal error" \
        "Allowed memory size" fpm_get bridge.php "step=fatal&name=fpm-fatal"
    expect_output "php-fpm: the request had taken it" "fpm-fatal:taken is held" fpm_get bridge.php "step=look&name=fpm-fatal"
    expect_output "php-fpm: a request that dies of a fatal error releases the Symfony lock it held" \
        "fpm-fatal is free" fpm_get bridge.php "step=look&name=fpm-fatal"
    expect_output "php-fpm: a request that ends normally takes a lock without autoRelease" \
        "took fpm-end" fpm_get bridge.php "step=end&name=fpm-end"
    expect_output "php-fpm: which outlives the request, as Symfony documents" \
        "fpm-end is held" fpm_get bridge.php "step=look&name=fpm-end"
    expect_output "php-fpm: an ini_set() ends with its request (6 requests on 2 workers, each sees fencing on)" \
        "^6$" fpm_ini_requests
    fpm_stop
    : >"$work/fpm.log"   # the fatal error's log lines are this check's, not a startup warning
else
    not_ok "php-fpm $ver starts"
fi
check "make uninstall" make uninstall
check "the module is gone from the extension dir" test ! -e "$ext_dir/redis_lock.so"
check "the ini is gone from mods-available" test ! -e "/etc/php/$ver/mods-available/redis_lock.ini"
expect_no_output "no enable/disable state is left behind" "redis_lock" find /var/lib/php/modules -name redis_lock
expect_disabled "make uninstall"
check "make uninstall removed /usr/bin/redis-lock" test ! -e /usr/bin/redis-lock

echo "# 2. make deb; apt-get install / remove / purge"
check "make deb" make deb
deb=$(ls target/deb/php"$ver"-redis-lock_*_"$(dpkg --print-architecture)".deb 2>/dev/null | head -n 1)
check "the package is named php$ver-redis-lock_<version>_<arch>.deb" test -n "$deb"
expect_output "the package depends on phpapi-$api" "phpapi-$api" dpkg-deb -f "$deb" Depends
expect_output "the package carries the IDE stub" "usr/share/doc/php$ver-redis-lock/redis_lock.stubs.php" dpkg-deb -c "$deb"
expect_output "the package carries the tool, for this PHP" "^-rwxr-xr-x .* \./usr/bin/redis-lock$ver$" dpkg-deb -c "$deb"
check "apt-get install ./$(basename "$deb")" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$deb"
check "the package put the module in the extension dir" test -f "$ext_dir/redis_lock.so"
expect_enabled "apt-get install"
check "apt-get install: /usr/bin/redis-lock is the alternative for redis-lock$ver" \
    test "$(readlink -f /usr/bin/redis-lock)" = "/usr/bin/redis-lock$ver"
expect_tool "apt-get install"
check "apt-get remove php$ver-redis-lock" env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq "php$ver-redis-lock"
expect_disabled "apt-get remove"
check "apt-get remove: /usr/bin/redis-lock is gone, its alternative too" \
    bash -c "[ ! -e /usr/bin/redis-lock ] && [ ! -L /usr/bin/redis-lock ] && ! update-alternatives --query redis-lock >/dev/null 2>&1"
check "apt-get purge php$ver-redis-lock" env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "php$ver-redis-lock"
check "purge removed the ini" test ! -e "/etc/php/$ver/mods-available/redis_lock.ini"

echo "# 3. phpize && ./configure && make && make install (PECL, PIE)"
# Composer learnt php-ext's schema in 2.7: an older one (Debian 12 ships 2.5) can only
# leave that key unchecked.
schema=/usr/share/php/data/Composer/res/composer-schema.json
# PIE 1.4 takes download-url-method as a list (binary first, then source); Composer
# 2.8's schema (Debian 13) still knows it as one string, so with that composer the key
# is left out of a copy and the rest is validated.
list_known='$d = json_decode(file_get_contents($argv[1]), true)["properties"]["php-ext"]["properties"]["download-url-method"] ?? [];
exit(in_array("array", (array) ($d["type"] ?? []), true) ? 0 : 1);'
if grep -qs '"php-ext"' "$schema" && php -r "$list_known" "$schema"; then
    check "composer validate --strict" composer validate --strict --no-interaction
elif grep -qs '"php-ext"' "$schema"; then
    php -r '$c = json_decode(file_get_contents("composer.json"), true); unset($c["php-ext"]["download-url-method"]);
        echo json_encode($c, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES), "\n";' >"$work/composer.json"
    check "composer validate --strict (download-url-method aside: this composer knows only its one-string form)" \
        composer validate --strict --no-interaction "$work/composer.json"
else
    check "composer validate --strict (this composer predates php-ext)" \
        composer validate --strict --no-check-publish --no-interaction
fi
build=$(php -r '$c = json_decode(file_get_contents("composer.json"), true); echo $c["php-ext"]["build-path"];')
check "phpize in the build-path ($build)" bash -c "cd '$build' && phpize"
expect_output "configure refuses without cargo, and says so" "cargo not found" \
    bash -c "cd '$build' && env PATH=/usr/bin:/bin HOME=/nonexistent ./configure"
libclang=$(dpkg-query -W -f='${Package} ${Status}\n' 'libclang1-*' 2>/dev/null | awk '/install ok installed/ {print $1}')
check "libclang removed for the next check" env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq $libclang
expect_output "configure refuses without libclang, and says so" "libclang not found" \
    bash -c "cd '$build' && ./configure"
check "libclang installed again" tools/env/deps.sh
check "./configure" bash -c "cd '$build' && ./configure"
check "make" make -C "$build"
check "the module is at modules/redis_lock.so" test -f "$build/modules/redis_lock.so"
check "make install" make -C "$build" install
check "the module is in the extension dir" test -f "$ext_dir/redis_lock.so"
# What PIE does next on Debian: an ini with the package's priority, and phpenmod.
check "enable it: ini in mods-available, phpenmod" bash -c \
    "echo extension=redis_lock.so > /etc/php/$ver/mods-available/redis_lock.ini && phpenmod -v $ver -s ALL redis_lock"
expect_enabled "phpize"
check "the project's Makefile was left alone" git diff --quiet -- Makefile
check "make uninstall" make uninstall
expect_disabled "uninstall after phpize"

finish
