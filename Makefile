# Everything runs from here: `make demo` and `make test` work on a fresh Debian machine.
SHELL := /bin/bash
PHP ?= php
CARGO ?= cargo
EXT := $(CURDIR)/target/release/libredis_lock.so
# Recursive (=) so that they are read after `deps` has installed PHP. PHP_CONFIG in
# the environment picks another PHP; the tools and ext-php-rs's build read it too.
RUN_TESTS = $(shell $${PHP_CONFIG:-php-config} --extension-dir)/build/run-tests.php
PHP_EXT_ARGS := -n -d extension=posix -d extension=$(EXT)
# Bench and demo also load phpredis, after the extensions it links against.
PHP_BENCH_ARGS = $(PHP_EXT_ARGS) $(shell tools/env/phpredis-args.sh)
# Empty where this PHP has no phpredis (Debian ships none for PHP 8.5 and 8.6).
PHPREDIS = $(filter extension=redis,$(PHP_BENCH_ARGS))
# The servers the suite runs on: Redis, and Valkey too where it is installed
# (tools/env/deps.sh installs it where the release ships it: Debian 13).
SERVERS = redis $(if $(shell command -v valkey-server),valkey)
# The server the test helpers start: redis-server, or valkey-server (…-cli, …-sentinel).
SERVER ?= redis
export REDIS_LOCK_TEST_SERVER = $(SERVER)
# Where a test that needs a server feature this server lacks notes what it left
# untested (php-tests/_helper.inc, rl_untested()); `make test` ends with the list.
export REDIS_LOCK_UNTESTED ?= $(CURDIR)/target/untested.txt

.PHONY: all deps build test test-all test-builds test-one test-rust test-php test-bridges test-zts test-zts-apache test-frankenphp test-image dist check-layers check-links stubs stubs-check demo bench bench-zts \
	install uninstall deb test-install clean

all: build

deps:
	@tools/env/deps.sh

build: deps
	$(CARGO) build --release

## The suite a change needs, with nothing built but the module: the layer and link
## checks, on each server of SERVERS the core's, the phpt and the bridges' tests and
## the model test, a short seeded nemesis (test-nemesis: random faults, a history
## checker) on the last of them (Valkey where installed: on Valkey 9 it runs the
## server's own compare-and-delete). make lint (rustfmt and clippy) runs first, the
## stub check last; NO_LINT=1 leaves both out (CI runs them once, on the host: they
## check the source, and the stub check's debug build took a clean root 6 minutes).
test: build
	@rm -f "$(REDIS_LOCK_UNTESTED)"
	@$(MAKE) --no-print-directory $(if $(NO_LINT),,lint) check-layers check-links
	@for s in $(SERVERS); do \
	    echo "== the suite on $$s"; \
	    $(MAKE) --no-print-directory test-one SERVER=$$s || exit 1; \
	done
	@$(MAKE) --no-print-directory test-nemesis SERVER=$(lastword $(SERVERS))
	@$(if $(NO_LINT),,$(MAKE) --no-print-directory stubs-check)
	@$(MAKE) --no-print-directory untested

## What the last runs left untested for want of a server feature (each line names the
## test, the server, what went untested and why).
.PHONY: untested
untested:
	@if [ -s "$(REDIS_LOCK_UNTESTED)" ]; then \
	    echo "== untested here, for want of a server feature ($(words $(SERVERS)) server(s): $(strip $(SERVERS))):"; \
	    sort -u "$(REDIS_LOCK_UNTESTED)" | sed 's/^/  /'; \
	else echo "== untested here: nothing (every test found the server features it needs)"; fi

## Everything on this machine (CI's lane 1 runs it, the NTS image path aside, which
## its Debian 12 root runs in /usr/local): make test, then what needs PHP built from source
## (tools/env/php-src.sh, cached): the thread-safe PHP (test-zts), FrankenPHP built on
## it (test-frankenphp), Apache's threads (test-zts-apache), and the images' install
## path with PIE's source build and binary, on the NTS and the ZTS PHP.
test-all: test test-builds

test-builds: build
	@$(MAKE) --no-print-directory test-zts
	@$(MAKE) --no-print-directory test-frankenphp
	@$(MAKE) --no-print-directory test-zts-apache
	@tools/test/test-image.sh --own-prefix
	@tools/test/test-image.sh --own-prefix --zts

## The Rust habits: rustfmt's layout (rustfmt.toml) on the module and the threaded
## harness, and clippy with every warning an error, tests included.
.PHONY: lint
lint: deps
	@for c in fmt clippy; do $(CARGO) $$c --version >/dev/null 2>&1 || { echo "lint: cargo $$c is missing: rustup component add $${c/fmt/rustfmt} (rustup's default profile has both)" >&2; exit 1; }; done
	$(CARGO) fmt --check
	$(CARGO) fmt --check --manifest-path harness/Cargo.toml
	$(CARGO) clippy --release --all-targets --quiet -- -D warnings

## The core's floors (php > kinds > hold > topology > net > ground): every
## import points down, and no circle between files (tools/check/check-layers.php).
check-layers: deps
	$(PHP) -n tools/check/check-layers.php

## Every relative link and image in README.md, docs/ and tools/'s READMEs resolves, anchors included.
check-links: deps
	$(PHP) -n tools/check/check-links.php

## The suite on one server: make test-one SERVER=valkey
test-one: test-rust test-php test-bridges test-model

test-rust: deps
	tools/test/with-redis.sh $(CARGO) test --no-default-features
	@# Lease bounds on the clock that counts a suspended machine: a time namespace
	@# whose boot clock is a day ahead stands for a day of suspension (src/clock.rs).
	@if unshare --time --boottime 86400 true 2>/dev/null; then \
	    REDIS_LOCK_TEST_BOOT_AHEAD=1 unshare --time --boottime 86400 $(CARGO) test --no-default-features --lib -q clock::; \
	else echo "test-rust: no time namespace here (unshare --time): the boot-clock test ran without one"; fi

## The phpt suite, PHPT_JOBS tests at a time (3; 1: one after another), beside each
## other on one shared server (tools/test/phpt.sh).
test-php: build
	REDIS_LOCK_EXT=$(EXT) TEST_PHP_EXECUTABLE=$$(command -v $(PHP)) NO_INTERACTION=1 \
	tools/test/with-redis.sh tools/test/phpt.sh $(PHP) $(RUN_TESTS) -q --show-diff --set-timeout 300 $(PHP_EXT_ARGS) php-tests

## The module on a thread-safe (ZTS) PHP built from Debian's source (tools/env/php-src.sh
## zts, cached): the phpt suite with the ZTS CLI, the -zts PIE archive, and the threaded
## harness (harness/: 16 PHP threads in one process, FrankenPHP's worker mode).
test-zts: build
	tools/test/test-zts.sh

## The framework bridges' phpunit tests (bridges/tests), against Debian's framework
## packages. Debian's php.ini and conf.d are read: phpunit and the frameworks need
## the shared modules (dom, mbstring, …) that -n would leave out.
test-bridges: build
	REDIS_LOCK_EXT=$(EXT) tools/test/with-redis.sh $(PHP) -d extension=$(EXT) $$(command -v phpunit) -c bridges/phpunit.xml

## Regenerates stubs/redis_lock.stubs.php from the code.
stubs: deps
	$(CARGO) build
	tools/package/stubs.sh target/debug/libredis_lock.so > stubs/redis_lock.stubs.php

## Fails when the committed stub no longer matches the code.
stubs-check: deps
	$(CARGO) build
	tools/package/stubs.sh target/debug/libredis_lock.so | diff -u stubs/redis_lock.stubs.php - \
	  || { echo "stubs/redis_lock.stubs.php is stale: run make stubs"; exit 1; }

## Many processes contend for one lock on a throwaway Redis (or REDIS_LOCK_DSN).
demo: build
	@if [ -n "$$REDIS_LOCK_DSN" ]; then $(PHP) $(PHP_BENCH_ARGS) bench/demo.php; \
	else tools/test/with-redis.sh $(PHP) $(PHP_BENCH_ARGS) bench/demo.php; fi

## This extension against the article's class on phpredis: uncontended cost, then
## the same cycles through the fault proxy at +4 ms a round trip, with the connections
## after a wait and the cluster bus messages per hand-over (bench/results/network.md), then
## contention (writes bench/results/contention.{md,svg}); then what locks cost one Redis
## (bench/results/capacity.md: many keys, 500 waiters, 100,000 locks held); then MultiLocks over random
## key subsets against Locks taken one after another, and a MultiLock's wait in a stream of Lock holders;
## then Redlock against one server; then failovers waited out on a Cluster and on Sentinel
## (bench/results/failover.md);
## then the semaphore and the shared lock against the framework packages (bench/results/frameworks.{md,svg});
## then the framework bridges against the frameworks' own Redis locks (bench/results/bridges.{md,svg});
## then Laravel's funnels, Redis::funnel() against the bridge's Cache::funnel() (bench/results/funnel.{md,svg}).
## Where this PHP has no phpredis, the extension's own figures only: each script says so
## in a line, and leaves bench/results/ as it is (but redlock.md and failover.md, which need no phpredis).
bench: build
	BENCH_PHP="$(PHP) $(PHP_BENCH_ARGS)" tools/test/with-redis.sh $(PHP) -n bench/uncontended.php
	$(PHP) $(PHP_BENCH_ARGS) bench/network.php
	$(PHP) $(PHP_BENCH_ARGS) bench/contention.php
	$(PHP) $(PHP_BENCH_ARGS) bench/capacity.php
	$(PHP) $(PHP_EXT_ARGS) bench/multilock.php
	$(PHP) $(PHP_EXT_ARGS) bench/redlock.php
	$(PHP) $(PHP_EXT_ARGS) bench/failover.php
	@if [ -z "$(PHPREDIS)" ]; then \
	    echo "bench: no phpredis for this PHP (Debian ships none for PHP 8.5 and 8.6): the article's class and the frameworks' Redis stores are written on it, so the comparisons with them (frameworks.php, bridges.php, funnel.php) are skipped"; \
	else \
	    set -ex; \
	    $(PHP) $(PHP_BENCH_ARGS) bench/frameworks.php; \
	    $(PHP) -d extension=$(EXT) bench/bridges.php; \
	    $(PHP) -d extension=$(EXT) bench/funnel.php; \
	fi

## Redisson beside this extension (bench/peers.php): its RLock, RFairLock and RSemaphore
## (bench/peers/redisson, Java 17, Redisson from Maven Central, pinned in its pom.xml) and
## Lock, Semaphore and the article's class, at 8 and 32 contenders x 1 ms and uncontended,
## on one throwaway Redis, in rounds of every lock in turn (bench/results/peers.md; about
## 12 minutes at the default BENCH_ROUNDS=3 on a busy 2-core VM, mostly JVM starts). Maven's repository
## is kept in MAVEN_REPO, in the PHP builds' cache as FrankenPHP's Go modules are (tools/env/php-src.sh,
## which tools/clean-root.sh keeps per suite), so a second run downloads nothing. Not part of make test.
MAVEN_REPO ?= $(or $(REDIS_LOCK_PHP_CACHE),/var/tmp/redis-lock-php)/maven
.PHONY: bench-peers bench-peers-tools
bench-peers: bench-peers-tools build
	mvn -B -q -f bench/peers/redisson/pom.xml -Dmaven.repo.local=$(MAVEN_REPO) package
	BENCH_PHP="$(PHP) $(PHP_BENCH_ARGS)" $(PHP) $(PHP_BENCH_ARGS) bench/peers.php

# Before the build, so that a machine without Java learns it at once.
bench-peers-tools:
	@command -v java >/dev/null && command -v mvn >/dev/null || { echo "bench-peers: needs java (17 or later) and mvn on PATH (Debian: apt-get install openjdk-17-jdk-headless maven)"; exit 2; }

## What durable grants cost: the plain lock, wait_replicas 1 and durable 1 on a master
## with one replica, uncontended and 8 x 1 ms contended (bench/results/durable.md).
.PHONY: bench-durable
bench-durable: build
	$(PHP) $(PHP_EXT_ARGS) bench/durable.php

## Debian's NTS CLI against the ZTS CLI (tools/env/php-src.sh zts), side by side: the
## uncontended cycle and 8 processes x 1 ms holds (bench/results/zts.md), then callgrind.
bench-zts: build
	tools/bench/bench-zts.sh

## As root: the module into PHP's extension dir, its ini into mods-available,
## enabled for every SAPI (phpenmod), and the redis-lock command into
## `php-config --prefix`/bin (docs/cli.md). `make uninstall` undoes it.
install: build
	tools/package/install.sh install $(EXT)

uninstall:
	tools/package/install.sh uninstall

## A Debian package, php<ver>-redis-lock_<version>_<arch>.deb, in target/deb/.
deb: build
	tools/package/deb.sh $(EXT) $(CURDIR)/target/deb

## The archive PIE's pre-packaged-binary method downloads, for the PHP of PHP_CONFIG:
## target/dist/php_redis_lock-<version>_php<M.m>-<arch>-linux-glibc[-zts].tgz
dist: build
	tools/package/dist.sh $(EXT) $(CURDIR)/target/dist

## The module under threads: Apache httpd with mpm_event and a ZTS mod_php built from
## Debian's source (tools/env/php-src.sh zts-apache, cached), 2 processes x 16 threads:
## an exact counter under ab -c 32, a long hold kept, a fatal error's lock released,
## recycled processes leaking nothing.
test-zts-apache: build
	tools/test/test-zts-apache.sh

## The module in real FrankenPHP, built from its Go module against the ZTS PHP
## (tools/env/frankenphp.sh, cached): 2 processes x 32 threads (16 classic, 16 running a
## worker script), under load: exact counters, the per-request release in both modes,
## holds kept only where asked, redis_lock_stats() per process, fatal errors and
## timeouts, workers restarted every 50 requests losing nothing.
test-frankenphp: deps
	tools/test/test-frankenphp.sh

## The official php images' install path (docker-php-ext-install's steps), PIE's source
## build and make dist, on a PHP built from Debian's source as the images build
## theirs (tools/env/php-src.sh nts, cached): in /usr/local inside tools/clean-root.sh,
## in a prefix of its own elsewhere. make test-all runs it in a prefix of its own.
test-image: deps
	tools/test/test-image.sh

## Each install path (make install, phpize, the .deb) checked with the CLI and a
## php-fpm pool. It installs and removes system packages, so it runs only inside a
## throwaway root: tools/clean-root.sh -- make test-install
test-install:
	tools/test/test-install.sh

clean:
	$(CARGO) clean

## The nemesis (tools/nemesis/): worker processes take locks while a seeded schedule
## partitions, pauses and resets them and stalls, kills and restarts Redis; check.php
## judges the history by what the lock promised (a second holder inside a live lease
## bound is a violation; an overlap whose earlier holder was not told is silent;
## fences going back; liveness after the faults). `make test-nemesis`: the checker's
## self-test, then a short seeded run, about 2 min, that fails on a violation. `make
## nemesis`: NEMESIS_SEEDS on every topology, the table in bench/results/nemesis.md
## (with threads of the ZTS harness once make test-zts built it). `make nemesis-plant`:
## the tree built with a bug planted, each of which must turn a run red.
## NEMESIS_EXT runs another build (then this tree is not built).
.PHONY: nemesis test-nemesis nemesis-plant
NEMESIS_BUILD := $(if $(NEMESIS_EXT),deps,build)
NEMESIS_EXT ?= $(EXT)
nemesis: $(NEMESIS_BUILD)
	NEMESIS_EXT=$(NEMESIS_EXT) PHP=$(PHP) tools/nemesis/suite.sh long

test-nemesis: $(NEMESIS_BUILD)
	$(PHP) -n tools/nemesis/check-test.php
	NEMESIS_EXT=$(NEMESIS_EXT) PHP=$(PHP) tools/nemesis/suite.sh short

nemesis-plant: deps
	PHP=$(PHP) tools/nemesis/plant.sh

## The model test (tools/model/): 3 client processes run seeded random operations
## (tokens chosen to hurt, waits, readers, MultiLock, Semaphore, durable locks with the
## replica frozen) against a master and a replica; every answer, the keys' raw values
## and PTTL, inspect(), isOwned() and getRemainingLifetime() are compared with a
## reference model step by step, and a failure is shrunk to its shortest sequence.
## `make test-model`: MODEL_BUDGET seconds (45) of sequences from seed MODEL_SEED (1),
## in test-one (on each server of make test): the same sequences on every run, so a
## change is judged by cases that passed before it; then 20 s of them with every wait
## driven through its LockWait (--async), as an event loop drives it. `make model`: 10 minutes from a
## random seed (or MODEL_SEED), every kind of failure reported: it looks for new ones.
## MODEL_EXT runs another build (then this tree is not built).
.PHONY: test-model model
MODEL_BUILD := $(if $(MODEL_EXT),deps,build)
MODEL_EXT ?= $(EXT)
test-model: $(MODEL_BUILD)
	MODEL_EXT=$(MODEL_EXT) PHP=$(PHP) $(PHP) -n -d extension=posix tools/model/run.php --budget $(or $(MODEL_BUDGET),45) --seed $(or $(MODEL_SEED),1)
	MODEL_EXT=$(MODEL_EXT) PHP=$(PHP) $(PHP) -n -d extension=posix tools/model/run.php --budget 20 --seed $(or $(MODEL_SEED),1) --async

model: $(MODEL_BUILD)
	MODEL_EXT=$(MODEL_EXT) PHP=$(PHP) $(PHP) -n -d extension=posix tools/model/run.php --budget $(or $(MODEL_BUDGET),600) $(if $(MODEL_SEED),--seed $(MODEL_SEED)) --keep-going

## The phpt suite and the bridges' phpunit tests STRESS_RUNS times in a row (default 10)
## while a busy loop per core keeps the CPU full (tools/test/test-under-load.sh -b -r,
## run-tests.php's retry off so that a failed first try shows its diff;
## stopped on any exit): they must pass every time, so no test leans on timing a busy
## machine cannot keep.
.PHONY: test-stress
STRESS_RUNS ?= 10
test-stress: build
	EXT=$(EXT) PHP=$(PHP) tools/test/test-under-load.sh -b -r -n $(STRESS_RUNS)
