/* decode/crd: a CRD target read by its policy row's paths (docs/targets.md): metadata.name, the
 * managedBy path and the nested copies, walked together in one pass. */
#include "fields.h"

#include "jobguard/alloc.h"
#include "jobguard/buf.h"

#include <stdio.h>
#include <string.h>

/* ---- CRD targets: the row's paths (docs/targets.md) ---- */

/* Paths are walked together, one cursor each: cursor 0 is metadata.name, 1 the row's
 * managedByPath, 2.. its nested paths. At every level only the members some cursor names are read;
 * the rest is validated and skipped. policy.c refuses rows whose paths disagree on whether a field
 * is a string, an object or a list, so the cursors matching one key always agree. */
#define CRD_CURSORS (2 + 16)
#define CRD_FIELD_MAX 1024 /* 256-byte paths plus element indexes */

struct cursor {
    const char *seg; /* the rest of the path, from this level's field name */
    int id;
    unsigned lists; /* "[*]" passed so far: the index into the nested path's list_keys */
};

struct crd_walk {
    const struct jg_policy_target *row;
    struct jg_job *job;
    const char *what;          /* "request.object" */
    char field[CRD_FIELD_MAX]; /* the path of the current level, with element indexes */
    size_t field_len;
    /* Rows whose nested paths key a list (by_key): the match of the current level (view.h: one
     * part per list element on the way) and how many of those elements have no key. */
    bool by_key;
    jg_buf match;
    unsigned no_key;
    /* nested copies: offsets into `text` until the walk ends (text may move); a match offset
     * is stored plus one, 0 for none */
    struct jg_nested_value *nested;
    size_t n_nested, cap_nested;
    jg_buf text;
};

/* Length of the field name at the start of seg, and what follows it: 0 the string itself (end
 * of path), '.' an object, '[' a list ("[*]."). */
static size_t seg_name(const char *seg, char *next) {
    size_t n = strcspn(seg, ".[");
    *next = seg[n] == '\0' ? 0 : seg[n];
    return n;
}

/* One list element of the current level's match (view.h): "=<key length>:<key>" for an element
 * of a keyed list, "[<index>]" for any other. Written by hand: this runs for every element. */
static void match_push(struct crd_walk *w, long index, const char *key_name, jg_str key) {
    char num[24];
    size_t n = sizeof num;
    uint64_t v = key_name ? key.n : (uint64_t)index;
    do
        num[--n] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    jg_buf_putc(&w->match, key_name ? '=' : '[');
    jg_buf_put(&w->match, num + n, sizeof num - n);
    jg_buf_putc(&w->match, key_name ? ':' : ']');
    if (key_name) jg_buf_put(&w->match, key.p, key.n);
}

static bool field_push(struct crd_walk *w, const char *name, size_t n, long index) {
    char idx[24] = "";
    if (index >= 0) snprintf(idx, sizeof idx, "[%ld]", index);
    size_t need = (w->field_len ? 1 : 0) + n + strlen(idx);
    if (w->field_len + need >= sizeof w->field) return false;
    if (w->field_len) w->field[w->field_len++] = '.';
    memcpy(w->field + w->field_len, name, n);
    w->field_len += n;
    memcpy(w->field + w->field_len, idx, strlen(idx) + 1);
    w->field_len += strlen(idx);
    return true;
}

/* "request.object.<field>" for messages. */
static void crd_path(const struct crd_walk *w, char out[PATH_MAX_LEN + CRD_FIELD_MAX]) {
    snprintf(out, PATH_MAX_LEN + CRD_FIELD_MAX, "%s%s%.*s", w->what, w->field_len ? "." : "",
             (int)w->field_len, w->field);
}

/* Refusals naming member `key` of the current level ("request.object.spec.x: must be ..."): the
 * path is only built when a request is refused, not for every member the walk reads. */
static status_t crd_wrong_type(struct scanner *sc, const struct crd_walk *w, jg_str key,
                               const char *want) {
    char path[PATH_MAX_LEN + CRD_FIELD_MAX];
    crd_path(w, path);
    char k[CRD_FIELD_MAX]; /* a row's field name can be longer than any key of Job's */
    snprintf(k, sizeof k, "%.*s", (int)key.n, key.p);
    return rd_wrong_type(sc, path, k, want);
}

static status_t crd_too_long(struct scanner *sc, const struct crd_walk *w, jg_str key) {
    char path[PATH_MAX_LEN + CRD_FIELD_MAX];
    crd_path(w, path);
    return scan_fail(sc->err, "%s.%.*s: path too long", path, (int)key.n, key.p);
}

static status_t crd_leaf(struct scanner *sc, struct crd_walk *w, const struct cursor *c, size_t n,
                         jg_str key) {
    jg_opt_str v = {false, {"", 0}}; /* null: absent, as rd_str reads it */
    if (!is_null(sc)) {
        if (*sc->p != '"') return crd_wrong_type(sc, w, key, "a string");
        v.set = true;
        TRY(scan_string(sc, &v.s));
    }
    for (size_t i = 0; i < n; i++) {
        if (c[i].id == 0) {
            w->job->name = v.s;
        } else if (c[i].id == 1) {
            w->job->spec.managed_by = v;
        } else if (v.set) {
            if (w->n_nested == w->cap_nested) {
                size_t cap = w->cap_nested ? w->cap_nested * 2 : 4;
                struct jg_nested_value *nv = jg_realloc(w->nested, cap * sizeof *nv);
                if (!nv) return scan_oom(sc->err);
                w->nested = nv;
                w->cap_nested = cap;
            }
            /* the field is kept as an offset into w->text until the walk ends */
            size_t off = w->text.len;
            jg_buf_put(&w->text, w->field, w->field_len);
            if (w->field_len) jg_buf_putc(&w->text, '.');
            jg_buf_put(&w->text, key.p, key.n);
            size_t flen = w->text.len - off;
            jg_buf_putc(&w->text, '\0'); /* a C string: the rules pass it as a field path */
            /* the match: the field itself, unless the row keys a list */
            size_t moff = off, mn = flen;
            if (w->by_key && !w->no_key) {
                moff = w->text.len;
                jg_buf_put(&w->text, w->match.data, w->match.len);
                mn = w->match.len;
            }
            if (w->text.oom || w->match.oom) return scan_oom(sc->err);
            w->nested[w->n_nested++] = (struct jg_nested_value){
                .which = (unsigned)(c[i].id - 2),
                .field = {(const char *)(uintptr_t)off, flen},
                .value = v.s,
                .match = {(const char *)(uintptr_t)(w->no_key ? 0 : moff + 1), mn}};
        }
    }
    return JG_DECODE_OK;
}

static status_t crd_object(struct scanner *sc, struct crd_walk *w, const struct cursor *cur,
                           size_t ncur, bool top, const char *list_key);

/* The key of the list the cursors `c` enter (at "name[*]"): the list key their nested paths give
 * it (policy.c makes the paths sharing a list agree), NULL when its elements go by index. */
static const char *crd_list_key(const struct crd_walk *w, const struct cursor *c, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (c[i].id < 2) continue;
        const struct jg_strv *k = &w->row->nested[c[i].id - 2].list_keys;
        if (c[i].lists < k->n && k->v[c[i].lists][0]) return k->v[c[i].lists];
    }
    return NULL;
}

/* The string member `name` of the object at the cursor, read ahead without moving the cursor:
 * JSON objects from the API server have their keys sorted, so a list key such as "name" is met
 * early. key->p stays NULL when the member is absent, null or not a string, or when the object
 * is malformed (the walk that follows reports that, as without a key). */
static status_t peek_key(struct scanner *sc, const char *name, jg_str *out) {
    const char *p = sc->p;
    int depth = sc->depth;
    struct agg a;
    status_t st = scan_enter(sc, &a);
    while (st == JG_DECODE_OK) {
        jg_str key;
        char kb[KEY_MAX];
        int more = 0;
        st = scan_obj_next(sc, &a, &key, kb, &more);
        if (st != JG_DECODE_OK || !more || sc->p >= sc->end) break;
        if (jg_str_eq_lit(key, name)) {
            if (*sc->p == '"') st = scan_string(sc, out);
            break;
        }
        st = scan_skip(sc);
    }
    sc->p = p;
    sc->depth = depth;
    if (st == JG_DECODE_NO_MEMORY) return st;
    if (st != JG_DECODE_OK) {
        *out = (jg_str){NULL, 0};
        sc->err->status = JG_DECODE_OK;
        sc->err->message[0] = '\0';
    }
    return JG_DECODE_OK;
}

/* The member `key` (at the cursor), named by the cursors `c` (all agreeing on its shape). */
static status_t crd_member(struct scanner *sc, struct crd_walk *w, struct cursor *c, size_t n,
                           jg_str key) {
    char next;
    size_t len = seg_name(c[0].seg, &next);
    if (next == 0) return crd_leaf(sc, w, c, n, key);
    size_t saved = w->field_len, msaved = w->match.len; /* only elements change the match */
    const char *list_key = next == '[' ? crd_list_key(w, c, n) : NULL;
    for (size_t i = 0; i < n; i++) { /* past "name." or "name[*]." */
        c[i].seg += len + (next == '.' ? 1 : 4);
        c[i].lists += next == '[';
    }
    if (is_null(sc)) return JG_DECODE_OK;
    if (next == '.') {
        if (*sc->p != '{') return crd_wrong_type(sc, w, key, "an object");
        if (!field_push(w, key.p, key.n, -1)) return crd_too_long(sc, w, key);
        TRY(crd_object(sc, w, c, n, false, NULL));
        w->field_len = saved;
        return JG_DECODE_OK;
    }
    if (*sc->p != '[') return crd_wrong_type(sc, w, key, "an array");
    struct agg a;
    TRY(scan_enter(sc, &a));
    for (long i = 0;; i++) {
        int more = 0;
        TRY(scan_arr_next(sc, &a, &more));
        if (!more) return JG_DECODE_OK;
        if (sc->p >= sc->end) return scan_syntax(sc, "value expected");
        if (is_null(sc)) continue;
        if (!field_push(w, key.p, key.n, i)) return crd_too_long(sc, w, key);
        if (*sc->p != '{') {
            char ep[PATH_MAX_LEN + CRD_FIELD_MAX];
            crd_path(w, ep);
            return scan_fail(sc->err, "%s: must be an object, got %s", ep, rd_type_name(sc));
        }
        jg_str kv = {NULL, 0};
        if (list_key) TRY(peek_key(sc, list_key, &kv));
        bool missing = list_key && !kv.p;
        if (w->by_key) match_push(w, i, list_key, kv);
        w->no_key += missing;
        TRY(crd_object(sc, w, c, n, false, list_key));
        w->no_key -= missing;
        w->field_len = saved;
        w->field[saved] = '\0';
        w->match.len = msaved;
    }
}

/* An object (the cursor is at '{') whose members the cursors `cur` name. At the top, a `kind`
 * member no cursor names must be the row's kind. In an element of a keyed list, the key member
 * (read ahead by peek_key) may not repeat either. */
static status_t crd_object(struct scanner *sc, struct crd_walk *w, const struct cursor *cur,
                           size_t ncur, bool top, const char *list_key) {
    struct agg a;
    TRY(scan_enter(sc, &a));
    uint32_t consumed = 0;
    bool key_seen = false;
    for (;;) {
        jg_str key;
        char kb[KEY_MAX];
        int more = 0;
        TRY(scan_obj_next(sc, &a, &key, kb, &more));
        if (!more) return JG_DECODE_OK;
        if (sc->p >= sc->end) return scan_syntax(sc, "value expected");
        struct cursor c[CRD_CURSORS];
        size_t n = 0;
        uint32_t mine = 0;
        for (size_t i = 0; i < ncur; i++) {
            char next;
            size_t len = seg_name(cur[i].seg, &next);
            if (key.n == len && memcmp(key.p, cur[i].seg, len) == 0) {
                c[n++] = cur[i];
                mine |= 1u << i;
            }
        }
        if (n && (consumed & mine)) return scan_syntax(sc, "duplicate object key");
        consumed |= mine;
        if (list_key && jg_str_eq_lit(key, list_key)) {
            if (key_seen) return scan_syntax(sc, "duplicate object key");
            key_seen = true;
        }
        if (n) {
            TRY(crd_member(sc, w, c, n, key));
        } else if (top && jg_str_eq_lit(key, "status")) {
            if (w->job->status_json.set) return scan_syntax(sc, "duplicate object key");
            const char *start = sc->p; /* at the value: obj_next skipped the blanks before it */
            TRY(scan_skip(sc));
            w->job->status_json = (jg_opt_str){true, {start, (size_t)(sc->p - start)}};
        } else if (top && jg_str_eq_lit(key, "kind")) {
            jg_opt_str kind;
            TRY(rd_str(sc, w->what, "kind", &kind));
            if (kind.set && !jg_str_eq_lit(kind.s, w->row->kind))
                return scan_fail(sc->err, "%s.kind: expected \"%s\", got \"%.*s\"", w->what,
                                 w->row->kind, (int)(kind.s.n > 64 ? 64 : kind.s.n), kind.s.p);
        } else {
            TRY(scan_skip(sc));
        }
    }
}

/* One object of a CRD target at the cursor (an object, checked by the caller). */
status_t rd_crd(struct scanner *sc, const char *what, const struct jg_policy_target *row,
                struct jg_job *job) {
    struct crd_walk *w = jg_malloc(sizeof *w);
    if (!w) return scan_oom(sc->err);
    memset(w, 0, sizeof *w);
    w->row = row;
    w->job = job;
    w->what = what;
    w->text = (jg_buf)JG_BUF_INIT;
    w->match = (jg_buf)JG_BUF_INIT;
    struct cursor cur[CRD_CURSORS] = {{"metadata.name", 0, 0}, {row->managed_by_path, 1, 0}};
    size_t ncur = 2;
    for (size_t i = 0; i < row->n_nested && ncur < CRD_CURSORS; i++) {
        cur[ncur++] = (struct cursor){row->nested[i].path, (int)(2 + i), 0};
        for (size_t k = 0; k < row->nested[i].list_keys.n; k++)
            w->by_key |= row->nested[i].list_keys.v[k][0] != '\0';
    }
    job->present = true;
    status_t st = crd_object(sc, w, cur, ncur, true, NULL);
    if (st == JG_DECODE_OK && w->n_nested) {
        /* the review owns both; then the offsets become pointers */
        if (!scan_own(sc->d, w->text.data)) {
            st = scan_oom(sc->err);
        } else {
            const char *text = w->text.data;
            w->text = (jg_buf)JG_BUF_INIT;
            if (!scan_own(sc->d, w->nested)) {
                st = scan_oom(sc->err);
            } else {
                for (size_t i = 0; i < w->n_nested; i++) {
                    struct jg_nested_value *v = &w->nested[i];
                    uintptr_t m = (uintptr_t)v->match.p;
                    v->field.p = text + (uintptr_t)v->field.p;
                    v->match.p = m ? text + (m - 1) : NULL;
                }
                job->nested = w->nested;
                job->n_nested = w->n_nested;
                w->nested = NULL;
            }
        }
    }
    jg_free(w->nested);
    jg_buf_free(&w->text);
    jg_buf_free(&w->match);
    jg_free(w);
    return st;
}
