# Appended to the Makefile that phpize's configure writes. cargo builds the crate in
# the folder above; the module is copied to modules/, where install-modules finds it.
# The PHP that configure was given is the one ext-php-rs builds against.
REDIS_LOCK_CRATE = $(srcdir)/..

all: modules/redis_lock.so
build-modules: modules/redis_lock.so

ifneq ($(filter install install-modules,$(MAKECMDGOALS)),)
# `make install` installs what `make` built and never runs cargo: it often runs as
# another user (sudo, PIE) whose PATH has no cargo, and would leave root-owned files
# in the crate's target folder.
modules/redis_lock.so:
	@test -f $@ || { echo "redis_lock: run make before make install: it builds the module with cargo" >&2; exit 1; }
else
# cargo decides what to rebuild, so it runs every time.
modules/redis_lock.so: redis-lock-cargo
	@$(mkinstalldirs) modules
	cp "$(REDIS_LOCK_CRATE)/target/release/libredis_lock.so" $@
endif

redis-lock-cargo:
	cd "$(REDIS_LOCK_CRATE)" && PHP="$(PHP_EXECUTABLE)" PHP_CONFIG="$(REDIS_LOCK_PHP_CONFIG)" \
	  "$(CARGO)" build --release --lib --target-dir "$(REDIS_LOCK_CRATE)/target"

.PHONY: redis-lock-cargo
