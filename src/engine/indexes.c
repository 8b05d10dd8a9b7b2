/* Index lists "0-3,5,7-9" (docs/rules.md §4), reproduced from upstream's parseIndexInterval,
 * validateIndexesFormat and validateFailedIndexesNotOverlapCompleted. */
#include "jobguard/indexes.h"

#include <string.h>

/* Go's strconv.Atoi: optional sign, ASCII digits only, must fit in int64 (int on 64-bit). */
static bool go_atoi(jg_str s, int64_t *out) {
    size_t i = 0;
    bool neg = false;
    if (s.n > 0 && (s.p[0] == '+' || s.p[0] == '-')) {
        neg = s.p[0] == '-';
        i = 1;
    }
    if (i >= s.n) return false;
    uint64_t v = 0;
    const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < s.n; i++) {
        unsigned d = (unsigned char)s.p[i] - '0';
        if (d > 9) return false;
        if (v > (limit - d) / 10) return false; /* out of range */
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* Splits at the next `sep` starting at *pos; returns false when there is no piece left. */
static bool next_piece(jg_str s, size_t *pos, char sep, jg_str *piece) {
    if (*pos > s.n) return false;
    const char *start = s.p + *pos;
    const char *end = memchr(start, sep, s.n - *pos);
    size_t len = end ? (size_t)(end - start) : s.n - *pos;
    *piece = (jg_str){start, len};
    *pos += len + 1; /* one past the separator, or s.n + 1 at the end */
    return true;
}

/* parseIndexInterval: one "x" or "x-y" interval. On error appends the message when err != NULL. */
static bool parse_interval(jg_str interval, int32_t completions, int64_t *x, int64_t *y,
                           jg_buf *err) {
    jg_str parts[3];
    size_t nparts = 0, pos = 0;
    jg_str piece;
    while (nparts < 3 && next_piece(interval, &pos, '-', &piece))
        parts[nparts++] = piece;
    if (nparts > 2) {
        if (err) {
            jg_buf_puts(err, "the fragment ");
            jg_buf_go_quote(err, interval.p, interval.n);
            jg_buf_puts(err, " violates the requirement that an index interval can have at most "
                             "two parts separated by '-'");
        }
        return false;
    }
    for (size_t k = 0; k < nparts; k++) {
        int64_t v;
        if (!go_atoi(parts[k], &v)) {
            if (err) {
                jg_buf_puts(err, "cannot convert string to integer for index: ");
                jg_buf_go_quote(err, parts[k].p, parts[k].n);
            }
            return false;
        }
        if (v >= (int64_t)completions) {
            if (err) {
                jg_buf_puts(err, "too large index: ");
                jg_buf_go_quote(err, parts[k].p, parts[k].n);
            }
            return false;
        }
        if (k == 0) {
            *x = *y = v;
        } else {
            if (*x >= v) {
                if (err)
                    jg_buf_printf(err, "non-increasing order, previous: %lld, current: %lld",
                                  (long long)*x, (long long)v);
                return false;
            }
            *y = v;
        }
    }
    return true;
}

bool jg_index_list_valid(jg_str s, int32_t completions, jg_buf *err) {
    if (s.n == 0) return true;
    bool have_last = false;
    int64_t last = 0;
    size_t pos = 0;
    jg_str interval;
    while (next_piece(s, &pos, ',', &interval)) {
        int64_t x, y;
        if (!parse_interval(interval, completions, &x, &y, err)) return false;
        if (have_last && last >= x) {
            if (err)
                jg_buf_printf(err, "non-increasing order, previous: %lld, current: %lld",
                              (long long)last, (long long)x);
            return false;
        }
        last = y;
        have_last = true;
    }
    return true;
}

struct cursor {
    jg_str s;
    size_t pos;
    bool valid; /* a current interval exists */
    bool ok;    /* it parsed */
    int64_t x, y;
};

static void advance(struct cursor *c, int32_t completions) {
    jg_str interval;
    c->valid = next_piece(c->s, &c->pos, ',', &interval);
    if (c->valid) c->ok = parse_interval(interval, completions, &c->x, &c->y, NULL);
}

bool jg_index_lists_overlap(jg_str completed, jg_str failed, int32_t completions, int64_t *at) {
    if (completed.n == 0 || failed.n == 0) return false;
    struct cursor c = {.s = completed}, f = {.s = failed};
    advance(&c, completions);
    advance(&f, completions);
    while (c.valid && f.valid) {
        if (!c.ok) {
            advance(&c, completions);
        } else if (!f.ok) {
            advance(&f, completions);
        } else if (c.x <= f.y && f.x <= c.y) {
            *at = c.x > f.x ? c.x : f.x;
            return true;
        } else if (c.x <= f.x) {
            advance(&c, completions);
        } else {
            advance(&f, completions);
        }
    }
    return false;
}
