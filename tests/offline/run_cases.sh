#!/usr/bin/env bash
# The offline commands' cases: tests/offline/cases/<case>/ holds `cmd` (the jobguard arguments,
# split on blanks, run in the case folder so that paths and messages are relative), optional
# `stdin`, and the exact `expected.stdout`, `expected.stderr` and `expected.rc`.
#
#   run_cases.sh JOBGUARD_BINARY CASES_DIR [--update]
#
# --update writes the expected files from what jobguard does (review the diff before committing).
set -u
bin=$(realpath "$1")
cases=$2
update=${3:-}
pass=0
fail=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for dir in "$cases"/*/; do
	name=$(basename "$dir")
	[[ $name == _* ]] && continue # shared inputs
	read -ra args <"$dir/cmd"
	if [[ -f $dir/stdin ]]; then
		(cd "$dir" && "$bin" "${args[@]}" <stdin >"$out/stdout" 2>"$out/stderr")
	else
		(cd "$dir" && "$bin" "${args[@]}" </dev/null >"$out/stdout" 2>"$out/stderr")
	fi
	echo $? >"$out/rc"
	if [[ $update == --update ]]; then
		cp "$out/stdout" "$dir/expected.stdout"
		cp "$out/stderr" "$dir/expected.stderr"
		cp "$out/rc" "$dir/expected.rc"
	fi
	ok=1
	for f in stdout stderr rc; do
		if ! cmp -s "$out/$f" "$dir/expected.$f"; then
			ok=0
			echo "FAIL $name: $f differs:"
			diff "$dir/expected.$f" "$out/$f" | head -20
		fi
	done
	if ((ok)); then
		pass=$((pass + 1))
		echo "ok   $name"
	else
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
((fail == 0 && pass > 0))
