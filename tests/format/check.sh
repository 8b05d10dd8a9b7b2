#!/usr/bin/env bash
# Every C file of the repository as clang-format 14 writes it with the top-level .clang-format:
#   tests/format/check.sh SOURCE_ROOT
# One check per file (the first lines of the difference when it fails), then "N passed, M failed".
# Skipped (exit 77) without clang-format 14: other versions lay out some constructs differently.
# Fix a failure with: clang-format -i FILE... (or: git ls-files '*.c' '*.h' | xargs clang-format -i)
set -uo pipefail
top=${1:?usage: tests/format/check.sh SOURCE_ROOT}
cd "$top" || exit 1

cf=
for c in clang-format-14 clang-format; do
    if command -v "$c" >/dev/null && [[ $("$c" --version) =~ version\ 14\. ]]; then
        cf=$c
        break
    fi
done
if [[ -z $cf ]]; then
    echo "SKIP: clang-format 14 not found (.ci/deps all installs it)"
    exit 77
fi

# The tracked files in a git checkout; every C file under the source folders otherwise (a tarball).
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files -- '*.c' '*.h')
else
    mapfile -t files < <(find src include tests bench fuzz -name '*.[ch]' | LC_ALL=C sort)
fi
if ((${#files[@]} == 0)); then
    echo "FAIL: no C file found under $top"
    echo "0 passed, 1 failed"
    exit 1
fi

# One clang-format for all files (a process per file took most of the test's time); it names
# each place that differs. Then the difference of each such file.
if ! report=$("$cf" --style=file --dry-run "${files[@]}" 2>&1); then
    echo "FAIL: $cf --dry-run: $(tail -n 3 <<<"$report")"
    echo "0 passed, 1 failed"
    exit 1
fi
mapfile -t bad < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' \
    <<<"$report" | LC_ALL=C sort -u)
for f in "${bad[@]}"; do
    d=$("$cf" --style=file "$f" | diff -u --label "$f" --label "$f (clang-format)" "$f" -)
    echo "FAIL $f: $(grep -c '^[-+][^-+]' <<<"$d") lines differ from $cf; run: $cf -i $f"
    head -n 20 <<<"$d" | sed 's/^/    /'
done
fail=${#bad[@]}
echo "$((${#files[@]} - fail)) passed, $fail failed"
((fail == 0))
