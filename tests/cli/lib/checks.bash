# The checks every tests/cli script shares; source it first thing (`. "$(dirname "$0")/lib/checks.bash"
# "$1"`), with pao's path as the argument. It sets $pao (absolute: some checks run from another
# folder), $tmp (a scratch folder removed at exit) and $failures, and defines:
#   expect CODE ARGS...        pao ARGS exits with CODE (stdout / stderr kept in $tmp)
#   expect_tool CODE TOOL ARGS... the same for another binary
#   says FILE TEXT             the last command's stdout / stderr holds TEXT
#   never_says FILE TEXT       ... does not
#   short_lines FILE           ... has no line over 1000 characters
#   check DESCRIPTION CMD...   a shell condition holds
#   finish                     prints the count of failures; exit status 0 only without any
# Not a test itself: ctest runs the tests/cli/*.sh scripts only.
set -u
pao=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
# Commands run under these bounds (set them before a check to change them): a regression that
# allocates without limit or hangs fails fast instead of filling or stalling the machine.
cli_memory_limit_kb=${cli_memory_limit_kb:-unlimited}
cli_timeout_s=${cli_timeout_s:-120}
# AddressSanitizer reserves terabytes of address space for its shadow: no ulimit -v under it (the
# memory checks still refuse what MemAvailable cannot hold).
[ "${PAO_CLI_SANITIZED:-0}" = 1 ] && cli_memory_limit_kb=unlimited
# pao-bench and pao-sim-bench: named by ctest when the build defines them, used when built.
[ -x "${PAO_BENCH:-}" ] || PAO_BENCH=""
[ -x "${PAO_SIM_BENCH:-}" ] || PAO_SIM_BENCH=""

fail_check() {  # fail_check MESSAGE [FILE]: one failure, with the start of FILE
  echo "FAIL: $1"
  [ $# -gt 1 ] && head -c 400 "$2" && echo
  failures=$((failures + 1))
}

expect_tool() {  # expect_tool CODE TOOL ARGS...
  local want=$1 tool=$2
  shift 2
  (ulimit -v "$cli_memory_limit_kb" && exec timeout "$cli_timeout_s" "$tool" "$@") >"$tmp/stdout" 2>"$tmp/stderr"
  local got=$?
  if [ "$got" != "$want" ]; then
    fail_check "$(basename "$tool") $* exited $got, expected $want" "$tmp/stderr"
  else
    echo "ok:   $want  $(basename "$tool") $*"
  fi
}
expect() { expect_tool "$1" "$pao" "${@:2}"; }

says() {  # says FILE TEXT
  if grep -qF -- "$2" "$tmp/$1"; then echo "ok:   says '$2'"; else
    fail_check "expected '$2' in the $1 of the last command" "$tmp/$1"
  fi
}
never_says() {  # never_says FILE TEXT
  if grep -qF -- "$2" "$tmp/$1"; then fail_check "'$2' in the $1 of the last command"; else
    echo "ok:   never says '$2'"
  fi
}
short_lines() {  # short_lines FILE
  if awk 'length > 1000 { exit 1 }' "$tmp/$1"; then echo "ok:   $1 lines are short"; else
    fail_check "a line of $1 is over 1000 characters"
  fi
}
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then echo "ok:   $what"; else fail_check "$what"; fi
}

finish() {
  echo "$(basename "$0"): $failures failure(s)"
  [ "$failures" = 0 ]
  exit
}
