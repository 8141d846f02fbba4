dnl The phpize (PECL, PIE) build of redis_lock, a PHP extension written in Rust:
dnl   phpize && ./configure && make && make install
dnl configure only checks the tools; the Makefile fragment builds the crate one
dnl folder up with cargo and leaves the module at modules/redis_lock.so, where
dnl phpize's install-modules takes it from.

PHP_ARG_ENABLE([redis_lock],
  [whether to enable redis_lock],
  [AS_HELP_STRING([--enable-redis_lock], [Build redis_lock, native distributed locks on Redis (needs cargo and libclang)])],
  [yes])

if test "$PHP_REDIS_LOCK" != "no"; then
  dnl Rust: cargo on the PATH, or where rustup puts it, or $CARGO.
  AC_PATH_PROG([CARGO], [cargo], [no], [$PATH:$HOME/.cargo/bin])
  if test "$CARGO" = "no"; then
    AC_MSG_ERROR([cargo not found. redis_lock is written in Rust: install Rust 1.88 or later (rustup, or your distribution's cargo), or set CARGO=/path/to/cargo])
  fi
  AC_MSG_CHECKING([for Rust 1.88 or later])
  redis_lock_cargo_version=`"$CARGO" --version 2>&1`
  set -- `echo "$redis_lock_cargo_version" | $SED -n 's/^cargo \([[0-9]]*\)\.\([[0-9]]*\)\..*/\1 \2/p'`
  if test -z "$2" || test "$1" -lt 1 || { test "$1" -eq 1 && test "$2" -lt 88; }; then
    AC_MSG_RESULT([no])
    AC_MSG_ERROR([$CARGO is too old ($redis_lock_cargo_version): redis_lock needs Rust 1.88 or later])
  fi
  AC_MSG_RESULT([$redis_lock_cargo_version])

  dnl libclang: ext-php-rs generates its bindings to PHP with bindgen, which loads
  dnl libclang at build time. Look where bindgen looks: $LIBCLANG_PATH, then llvm's
  dnl and the system's library folders. libclang-cpp is another library.
  AC_MSG_CHECKING([for libclang])
  redis_lock_libclang=
  for redis_lock_dir in $LIBCLANG_PATH `llvm-config --libdir 2>/dev/null` /usr/lib/llvm-*/lib /usr/lib/*-linux-gnu* /usr/lib64 /usr/lib /usr/local/lib; do
    for redis_lock_lib in "$redis_lock_dir"/libclang.so "$redis_lock_dir"/libclang.so.* "$redis_lock_dir"/libclang-[[0-9]]*.so*; do
      if test -f "$redis_lock_lib"; then redis_lock_libclang=$redis_lock_lib; break 2; fi
    done
  done
  if test -z "$redis_lock_libclang"; then
    AC_MSG_RESULT([no])
    AC_MSG_ERROR([libclang not found. Building redis_lock runs bindgen, which needs libclang: on Debian or Ubuntu, apt-get install libclang-dev; elsewhere, install clang's library and set LIBCLANG_PATH to its folder])
  fi
  AC_MSG_RESULT([$redis_lock_libclang])

  dnl No C sources: modules/ is the only folder the build needs.
  PHP_ADD_BUILD_DIR([modules])
  PHP_SUBST([CARGO])
  dnl ext-php-rs wants php-config as a path, and configure may hold only its name.
  REDIS_LOCK_PHP_CONFIG=`command -v "$PHP_CONFIG"`
  PHP_SUBST([REDIS_LOCK_PHP_CONFIG])
  PHP_ADD_MAKEFILE_FRAGMENT([$abs_srcdir/Makefile.frag], [$abs_srcdir], [$abs_builddir])
fi
