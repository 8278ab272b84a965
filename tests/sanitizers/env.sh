# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# shellcheck shell=sh
# Sanitizer run-time options for the test runners of a sanitizer build
# (configure --enable-sanitizers=...). Sourced by tests/with-vsim (unit tests)
# and tests/e2e/lib.sh (opensm with the plugin); POSIX sh.
#
# pw_san_env SUPP_DIR [LOG_PREFIX]: export ASAN_OPTIONS, LSAN_OPTIONS,
# UBSAN_OPTIONS and TSAN_OPTIONS. Every finding ends the process with a
# non-zero status (halt_on_error, exitcode); with LOG_PREFIX the reports go to
# LOG_PREFIX.<pid> files instead of stderr (opensm's stderr is not the test's).
# Options already in the environment are kept and win (they come last).
pw_san_env() {
    _pw_supp=$1
    _pw_log=${2:+:log_path=$2}
    ASAN_OPTIONS="suppressions=$_pw_supp/asan.supp:halt_on_error=1:abort_on_error=0:detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1:strict_string_checks=1:print_summary=1${_pw_log}${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    LSAN_OPTIONS="suppressions=$_pw_supp/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0:malloc_context_size=40${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${_pw_log}${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
    TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=$_pw_supp/tsan.supp${_pw_log}${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
    export ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS
    unset _pw_supp _pw_log
}
