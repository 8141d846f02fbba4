# Everything runs from here: `make demo` and `make test` work on a fresh Debian machine.
SHELL := /bin/bash
PHP ?= php
CARGO ?= cargo
EXT := $(CURDIR)/target/release/libredis_lock.so
RUN_TESTS = $(firstword $(wildcard /usr/lib/php/*/build/run-tests.php))
PHP_EXT_ARGS := -n -d extension=posix -d extension=$(EXT)
# Bench and demo also load phpredis (igbinary first: phpredis links against it).
PHP_BENCH_ARGS := $(PHP_EXT_ARGS) -d extension=igbinary -d extension=redis

.PHONY: all deps build test test-rust test-php stubs stubs-check demo bench clean

all: build

deps:
	@tools/deps.sh

build: deps
	$(CARGO) build --release

## The whole suite, as CI runs it.
test: build test-rust test-php stubs-check

test-rust: deps
	tools/with-redis.sh $(CARGO) test --no-default-features

test-php: build
	REDIS_LOCK_EXT=$(EXT) TEST_PHP_EXECUTABLE=$$(command -v $(PHP)) NO_INTERACTION=1 \
	tools/with-redis.sh $(PHP) -n $(RUN_TESTS) -q --show-diff $(PHP_EXT_ARGS) php-tests

## Regenerates stubs/redis_lock.stubs.php from the code.
stubs: deps
	$(CARGO) build
	tools/stubs.sh target/debug/libredis_lock.so > stubs/redis_lock.stubs.php

## Fails when the committed stub no longer matches the code.
stubs-check: deps
	$(CARGO) build
	tools/stubs.sh target/debug/libredis_lock.so | diff -u stubs/redis_lock.stubs.php - \
	  || { echo "stubs/redis_lock.stubs.php is stale: run make stubs"; exit 1; }

## Many processes contend for one lock on a throwaway Redis (or REDIS_LOCK_DSN).
demo: build
	@if [ -n "$$REDIS_LOCK_DSN" ]; then $(PHP) $(PHP_BENCH_ARGS) bench/demo.php; \
	else tools/with-redis.sh $(PHP) $(PHP_BENCH_ARGS) bench/demo.php; fi

## This extension against the article's class on phpredis: uncontended cost, then
## contention (writes bench/results/contention.{md,svg}); then Redlock against one server.
bench: build
	tools/with-redis.sh $(PHP) $(PHP_BENCH_ARGS) bench/uncontended.php
	$(PHP) $(PHP_BENCH_ARGS) bench/contention.php
	$(PHP) $(PHP_EXT_ARGS) bench/redlock.php

clean:
	$(CARGO) clean
