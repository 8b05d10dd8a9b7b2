/* libFuzzer target: the index-list parser and the overlap scan (docs/rules.md §4).
 *
 * Input: 4 bytes little-endian int32 `completions`, then the completed list, a '|' byte, the
 * failed list (no '|': the rest is split in the middle). Each list is copied into its own exact
 * heap block, so any read past its end is an ASan report.
 *
 * Invariants, checked against a tiny reference model written here from §4:
 *  - validity is deterministic, and "invalid" always comes with a message, "valid" with none;
 *  - a valid list re-parses as valid, and so does its canonical re-rendering ("+01-3" -> "1-3"),
 *    which names the same indexes;
 *  - every index of a valid list is in [0, completions) and the intervals strictly increase;
 *  - the overlap scan is symmetric, false when a list is empty, true on (L, L) for a valid
 *    non-empty L, and on two valid lists agrees with a brute-force intersection, reporting the
 *    smallest common index. */
#include "jobguard/indexes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

#define MAX_MODEL_INTERVALS 4096 /* inputs are at most a few KB: ≤ 2048 intervals per list */

struct interval {
    int64_t x, y;
};

/* Parses a list that jg_index_list_valid accepted: "a" or "a-b" pieces, Go Atoi numbers (an
 * optional '+' since '-' separates). Returns the number of intervals, or -1 if the model
 * disagrees that it is well formed. */
static int model_parse(const char *s, size_t n, struct interval *out) {
    int k = 0;
    size_t i = 0;
    if (n == 0) return 0;
    for (;;) {
        int64_t v[2];
        int parts = 0;
        for (;;) {
            bool plus = i < n && s[i] == '+';
            if (plus) i++;
            size_t start = i;
            uint64_t acc = 0;
            while (i < n && s[i] >= '0' && s[i] <= '9') {
                acc = acc * 10 + (uint64_t)(s[i] - '0');
                if (acc > INT32_MAX) return -1; /* valid indexes are < completions ≤ INT32_MAX */
                i++;
            }
            if (i == start || parts == 2) return -1;
            v[parts++] = (int64_t)acc;
            if (i < n && s[i] == '-') {
                i++;
                continue;
            }
            break;
        }
        if (k == MAX_MODEL_INTERVALS) return -1;
        out[k].x = v[0];
        out[k].y = parts == 2 ? v[1] : v[0];
        k++;
        if (i == n) return k;
        if (s[i] != ',') return -1;
        i++;
    }
}

static char *render(const struct interval *iv, int n, size_t *len) {
    char *s = malloc((size_t)n * 24 + 1);
    CHECK(s != NULL);
    size_t p = 0;
    for (int i = 0; i < n; i++) {
        if (i) s[p++] = ',';
        if (iv[i].x == iv[i].y)
            p += (size_t)sprintf(s + p, "%lld", (long long)iv[i].x);
        else
            p += (size_t)sprintf(s + p, "%lld-%lld", (long long)iv[i].x, (long long)iv[i].y);
    }
    *len = p;
    return s;
}

static bool valid(const char *p, size_t n, int32_t completions) {
    jg_buf err = JG_BUF_INIT;
    bool ok = jg_index_list_valid((jg_str){p, n}, completions, &err);
    CHECK(!err.oom);
    CHECK(ok == (err.len == 0));
    /* Deterministic, message included. */
    jg_buf err2 = JG_BUF_INIT;
    CHECK(jg_index_list_valid((jg_str){p, n}, completions, &err2) == ok);
    CHECK(err.len == err2.len && (err.len == 0 || memcmp(err.data, err2.data, err.len) == 0));
    jg_buf_free(&err);
    jg_buf_free(&err2);
    return ok;
}

static bool overlap(const char *a, size_t an, const char *b, size_t bn, int32_t completions,
                    int64_t *at) {
    int64_t at1 = -1, at2 = -1;
    bool r1 = jg_index_lists_overlap((jg_str){a, an}, (jg_str){b, bn}, completions, &at1);
    bool r2 = jg_index_lists_overlap((jg_str){b, bn}, (jg_str){a, an}, completions, &at2);
    CHECK(r1 == r2);
    if (r1) CHECK(at1 == at2);
    if (an == 0 || bn == 0) CHECK(!r1);
    *at = at1;
    return r1;
}

/* Checks one list the engine accepted against the model; returns its intervals. */
static int check_valid_list(const char *p, size_t n, int32_t completions, struct interval *iv) {
    int k = model_parse(p, n, iv);
    CHECK(k >= 0);
    for (int i = 0; i < k; i++) {
        CHECK(iv[i].x >= 0 && iv[i].x <= iv[i].y && iv[i].y < completions);
        if (iv[i].x != iv[i].y) CHECK(iv[i].x < iv[i].y);
        if (i) CHECK(iv[i - 1].y < iv[i].x);
    }
    /* The canonical rendering is valid too and names the same intervals. */
    size_t cn;
    char *canon = render(iv, k, &cn);
    CHECK(valid(canon, cn, completions));
    static struct interval again[MAX_MODEL_INTERVALS];
    CHECK(model_parse(canon, cn, again) == k);
    CHECK(memcmp(again, iv, (size_t)k * sizeof *iv) == 0);
    free(canon);
    /* Overlap with itself: the first index. */
    if (n > 0) {
        int64_t at;
        CHECK(overlap(p, n, p, n, completions, &at));
        CHECK(k == 0 || at == iv[0].x);
    }
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4) return 0;
    uint32_t raw = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
                   (uint32_t)data[3] << 24;
    int32_t completions = (int32_t)raw;
    const char *rest = (const char *)data + 4;
    size_t rn = size - 4;
    const char *bar = memchr(rest, '|', rn);
    size_t cn = bar ? (size_t)(bar - rest) : rn / 2;
    size_t fn = bar ? rn - cn - 1 : rn - cn;
    /* Exact-size copies (malloc(0) may return NULL: keep at least one byte, unused). */
    char *c = malloc(cn ? cn : 1), *f = malloc(fn ? fn : 1);
    CHECK(c && f);
    memcpy(c, rest, cn);
    memcpy(f, rest + (bar ? cn + 1 : cn), fn);

    static struct interval civ[MAX_MODEL_INTERVALS], fiv[MAX_MODEL_INTERVALS];
    bool c_ok = valid(c, cn, completions), f_ok = valid(f, fn, completions);
    int ck = c_ok ? check_valid_list(c, cn, completions, civ) : 0;
    int fk = f_ok ? check_valid_list(f, fn, completions, fiv) : 0;
    if (c_ok && cn) CHECK(completions > 0);
    if (f_ok && fn) CHECK(completions > 0);

    int64_t at;
    bool ov = overlap(c, cn, f, fn, completions, &at);
    if (c_ok && f_ok && (int64_t)ck * fk <= 1000000) {
        /* Brute force on the intervals: smallest common index. */
        bool want = false;
        int64_t want_at = INT64_MAX;
        for (int i = 0; i < ck; i++)
            for (int j = 0; j < fk; j++) {
                int64_t lo = civ[i].x > fiv[j].x ? civ[i].x : fiv[j].x;
                int64_t hi = civ[i].y < fiv[j].y ? civ[i].y : fiv[j].y;
                if (lo <= hi && lo < want_at) {
                    want = true;
                    want_at = lo;
                }
            }
        CHECK(ov == want);
        if (ov) CHECK(at == want_at);
    }
    free(c);
    free(f);
    return 0;
}
