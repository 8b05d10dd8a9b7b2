/* decode/fields: typed readers (fields.h), as Go's encoding/json decodes into the API types. */
#include "fields.h"

#include "jobguard/alloc.h"

#include <stdio.h>
#include <string.h>

void rd_join_path(char out[PATH_MAX_LEN], const char *base, const char *child) {
    size_t b = strnlen(base, 100), c = strnlen(child, PATH_MAX_LEN - 102);
    memcpy(out, base, b);
    out[b] = '.';
    memcpy(out + b + 1, child, c);
    out[b + 1 + c] = '\0';
}
/* ---- typed readers: the cursor is at a member value ---- */

const char *rd_type_name(struct scanner *sc) {
    switch (sc->p < sc->end ? *sc->p : 0) {
    case '{':
        return "an object";
    case '[':
        return "an array";
    case '"':
        return "a string";
    case 't':
    case 'f':
        return "a boolean";
    case 'n':
        return "null";
    default: {
        struct scanner probe = *sc;
        enum num_kind k = NUM_INT;
        int64_t v;
        jg_decode_error e;
        probe.err = &e;
        if (scan_number(&probe, &k, &v) != JG_DECODE_OK) return "a value";
        return k == NUM_REAL ? "a non-integer number" : "an integer";
    }
    }
}

status_t rd_wrong_type(struct scanner *sc, const char *path, const char *key, const char *want) {
    return scan_fail(sc->err, "%s.%s: must be %s, got %s", path, key, want, rd_type_name(sc));
}

status_t rd_str(struct scanner *sc, const char *path, const char *key, jg_opt_str *out) {
    out->set = false;
    out->s = (jg_str){"", 0};
    if (is_null(sc)) return JG_DECODE_OK;
    if (*sc->p != '"') return rd_wrong_type(sc, path, key, "a string");
    out->set = true;
    return scan_string(sc, &out->s);
}

status_t rd_i32(struct scanner *sc, const char *path, const char *key, jg_opt_i32 *out) {
    out->set = false;
    out->v = 0;
    if (is_null(sc)) return JG_DECODE_OK;
    char c = *sc->p;
    if (c != '-' && (c < '0' || c > '9')) return rd_wrong_type(sc, path, key, "an integer (int32)");
    const char *s = sc->p;
    enum num_kind k = NUM_INT;
    int64_t v = 0;
    TRY(scan_number(sc, &k, &v));
    if (k == NUM_REAL) {
        sc->p = s;
        return rd_wrong_type(sc, path, key, "an integer (int32)");
    }
    if (k == NUM_BIG_INT || v < INT32_MIN || v > INT32_MAX)
        return scan_fail(sc->err, "%s.%s: %.*s is outside the int32 range", path, key,
                         (int)(sc->p - s > 40 ? 40 : sc->p - s), s);
    out->set = true;
    out->v = (int32_t)v;
    return JG_DECODE_OK;
}

status_t rd_bool(struct scanner *sc, const char *path, const char *key, bool *out) {
    *out = false;
    if (is_null(sc)) return JG_DECODE_OK;
    if (literal(sc, "true", JG_LIT_LEN("true"))) {
        *out = true;
        return JG_DECODE_OK;
    }
    if (literal(sc, "false", JG_LIT_LEN("false"))) return JG_DECODE_OK;
    return rd_wrong_type(sc, path, key, "a boolean");
}

status_t rd_time(struct scanner *sc, const char *path, const char *key, jg_time *out) {
    *out = (jg_time){0};
    if (is_null(sc)) return JG_DECODE_OK;
    if (*sc->p != '"') return rd_wrong_type(sc, path, key, "an RFC 3339 time string");
    jg_str s;
    TRY(scan_string(sc, &s));
    if (!jg_parse_rfc3339(s.p, s.n, &out->sec, &out->nsec))
        return scan_fail(sc->err,
                         "%s.%s: %.*s%s is not an RFC 3339 time (2006-01-02T15:04:05Z07:00)", path,
                         key, (int)(s.n > 64 ? 64 : s.n), s.p, s.n > 64 ? "..." : "");
    out->set = true;
    return JG_DECODE_OK;
}

/* Opens an object member: *present=false for null. */
status_t rd_object(struct scanner *sc, const char *path, const char *key, struct agg *a,
                   bool *present) {
    *present = false;
    if (is_null(sc)) return JG_DECODE_OK;
    if (*sc->p != '{') return rd_wrong_type(sc, path, key, "an object");
    *present = true;
    return scan_enter(sc, a);
}

/* Index of `key` in `names`, or -1. A repeat of a key the decoder reads is refused: a
 * parser-differential guard (Go keeps the last, other tools the first). */
/* Whether key is the name nm: compared byte by byte up to nm's end, so that most names are told
 * apart by their first byte without measuring them (a key may hold a NUL from \u0000: it never
 * matches, since no name has one). */
static inline bool key_is(jg_str key, const char *nm) {
    if (key.n == 0) return nm[0] == '\0';
    if (nm[0] != key.p[0]) return false; /* most names */
    size_t j = 0;
    while (j < key.n && nm[j] != '\0' && nm[j] == key.p[j])
        j++;
    return j == key.n && nm[j] == '\0';
}

static int known(struct scanner *sc, jg_str key, const char *const *names, int n, uint32_t *seen,
                 status_t *st) {
    for (int i = 0; i < n; i++) {
        if (!key_is(key, names[i])) continue;
        if (*seen & (1u << i)) {
            *st = scan_syntax(sc, "duplicate object key");
            return -1;
        }
        *seen |= 1u << i;
        return i;
    }
    return -1;
}

/* Walks the members of the object just opened, calling `member(ctx, index)` for known keys and
 * skipping the rest. */
status_t rd_members(struct scanner *sc, struct agg *a, const char *const *names, int n,
                    member_fn fn, void *ctx) {
    uint32_t seen = 0;
    for (;;) {
        jg_str key;
        char kb[KEY_MAX];
        int more = 0;
        TRY(scan_obj_next(sc, a, &key, kb, &more));
        if (!more) return JG_DECODE_OK;
        status_t st = JG_DECODE_OK;
        int which = known(sc, key, names, n, &seen, &st);
        TRY(st);
        if (which < 0) {
            TRY(scan_skip(sc));
        } else {
            if (sc->p >= sc->end) return scan_syntax(sc, "value expected");
            TRY(fn(sc, ctx, which));
        }
    }
}
static status_t rd_str_list_items(struct scanner *sc, const char *path, const char *key,
                                  jg_str_list *out, size_t *cap) {
    struct agg a;
    TRY(scan_enter(sc, &a));
    for (;;) {
        int more = 0;
        TRY(scan_arr_next(sc, &a, &more));
        if (!more) return JG_DECODE_OK;
        if (sc->p >= sc->end) return scan_syntax(sc, "value expected");
        jg_str v = {"", 0};
        if (!is_null(sc)) { /* Go decodes null into a string element as "" */
            if (*sc->p != '"')
                return scan_fail(sc->err, "%s.%s[%zu]: must be a string, got %s", path, key, out->n,
                                 rd_type_name(sc));
            TRY(scan_string(sc, &v));
        }
        if (out->n == *cap) {
            *cap = *cap ? *cap * 2 : 4;
            jg_str *items = jg_realloc(out->items, *cap * sizeof *items);
            if (!items) return scan_oom(sc->err);
            out->items = items;
        }
        out->items[out->n++] = v;
    }
}

status_t rd_str_list(struct scanner *sc, const char *path, const char *key, jg_str_list *out) {
    *out = (jg_str_list){0};
    if (is_null(sc)) return JG_DECODE_OK;
    if (*sc->p != '[') return rd_wrong_type(sc, path, key, "an array of strings");
    out->set = true;
    size_t cap = 0;
    status_t st = rd_str_list_items(sc, path, key, out, &cap);
    if (st == JG_DECODE_OK && out->items && !scan_own(sc->d, out->items)) st = scan_oom(sc->err);
    if (st != JG_DECODE_OK) {
        jg_free(out->items);
        out->items = NULL;
        out->n = 0;
    }
    return st;
}
