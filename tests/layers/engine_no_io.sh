#!/usr/bin/env bash
# The engine and the base library promise no I/O (docs/development.md): every function they call
# from outside themselves must be memory or string work. nm lists what each archive leaves
# undefined; anything not on the list below (getenv, fopen, read, printf, time, ...) fails, named.
set -uo pipefail
allowed=' free malloc realloc calloc memchr memcmp memcpy memmove memset memrchr qsort bsearch
  snprintf vsnprintf strchr strrchr strcmp strncmp strcspn strspn strlen strnlen strstr
  json_set_alloc_funcs __stack_chk_fail __assert_fail __cpu_indicator_init __cpu_model
  _GLOBAL_OFFSET_TABLE_ '
allowed=" $(echo $allowed) " # one line, a space around every name
fail=0 pass=0
for lib in "$@"; do
    if ! undefined=$(nm -u "$lib"); then
        echo "not ok - $lib: nm cannot read it"
        fail=$((fail + 1))
        continue
    fi
    while read -r sym; do
        case $sym in
        jg_* | rd_* | scan_* | sindex_* | __asan_* | __ubsan_* | __sanitizer_* | __tsan_*)
            pass=$((pass + 1))
            continue
            ;;
        esac
        case $allowed in
        *" $sym "*) pass=$((pass + 1)) ;;
        *)
            echo "not ok - $(basename "$lib") calls $sym, outside the engine's no-I/O promise"
            fail=$((fail + 1))
            ;;
        esac
    done < <(awk '$1 == "U" {print $2}' <<<"$undefined" | sort -u)
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
