#!/usr/bin/env bash
# Runs a command and checks both its exit status and its output, which CTest's
# PASS_REGULAR_EXPRESSION alone cannot (it ignores the exit status).
# Usage: cli_status.sh <expected exit status> <extended regex over the output,
#        newlines read as spaces> <command> [arguments...]
set -uo pipefail
want=$1
pattern=$2
shift 2
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne "$want" ]; then
  echo "cli_status: exit status $rc, expected $want"
  exit 1
fi
if ! printf '%s' "$out" | tr '\n' ' ' | grep -Eq -- "$pattern"; then
  echo "cli_status: the output does not match: $pattern"
  exit 1
fi
echo "cli_status: exit status $rc and output as expected"
