/* The reference decoder (refdecode.h): jansson parses the whole document, then a walk over the
 * tree applies the field map, types, defaults and messages of the request path, written from
 * the documented semantics rather than from the scanner's code:
 *  - members are read in document order (jansson keeps insertion order) and the first problem
 *    stops the walk; objects met before the request is routed are read after the other members;
 *  - JSON null is Go's nil and counts as absent; absent apiVersion/kind default to v1
 *    AdmissionReview; a repeated key the decoder reads is refused;
 *  - an apiVersion/kind problem (the first string-valued occurrence) wins over field problems;
 *  - a CRD target (a row of the policy's or the built-in target table) is read at the row's
 *    paths only (the "CRD targets" section below); batch Job and CronJob as before.
 * The RFC 3339 parser is the engine's (it reads no JSON and has its own unit tests). */
#include "refdecode.h"

#include "jobguard/policy.h"
#include "jobguard/targets.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct walk {
    const struct ref_options *opt;
    struct ref_review *out;
    struct ref_result *res;
};

enum { OK = 0, STOP = 1 };

__attribute__((format(printf, 2, 3))) static int bad(struct walk *w, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->res->message, sizeof w->res->message, fmt, ap);
    va_end(ap);
    w->res->status = REF_BAD_REQUEST;
    return STOP;
}

/* Field paths ("request.object.spec"): short by construction; test code aborts otherwise. */
#define PATHF(dst, ...)                                                                            \
    do {                                                                                           \
        if (snprintf(dst, sizeof dst, __VA_ARGS__) >= (int)sizeof dst) abort();                    \
    } while (0)

static jg_str sv(const json_t *s) {
    return (jg_str){json_string_value(s), json_string_length(s)};
}

static const char *type_name(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a non-integer number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

static int must(struct walk *w, const char *path, const char *key, const char *want,
                const json_t *v) {
    return bad(w, "%s.%s: must be %s, got %s", path, key, want, type_name(v));
}

/* Keys: a comparator marker byte in front means "this key again" (a repeat). */
static const char *unmark(struct walk *w, const char *key, bool *repeat) {
    *repeat = false;
    if (!w->opt || !w->opt->marker) return key;
    while (*key == w->opt->marker) {
        key++;
        *repeat = true;
    }
    return key;
}

/* Calls fn(w, ctx, index, value) for every member whose key is in names, in document order. */
typedef int (*member_fn)(struct walk *w, void *ctx, int which, json_t *v);

static int members(struct walk *w, json_t *obj, const char *const *names, int n, member_fn fn,
                   void *ctx) {
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        bool repeat;
        const char *key = unmark(w, k, &repeat);
        size_t klen = json_object_iter_key_len(json_object_key_to_iter(k)) - (size_t)(key - k);
        for (int i = 0; i < n; i++) {
            if (klen != strlen(names[i]) || memcmp(key, names[i], klen) != 0) continue;
            if (repeat) {
                snprintf(w->res->message, sizeof w->res->message, "duplicate object key");
                w->res->status = REF_DUPLICATE;
                return STOP;
            }
            if (fn(w, ctx, i, v)) return STOP;
            break;
        }
    }
    return OK;
}

static int rd_str(struct walk *w, const char *path, const char *key, json_t *v, jg_opt_str *out) {
    *out = (jg_opt_str){false, {"", 0}};
    if (json_is_null(v)) return OK;
    if (!json_is_string(v)) return must(w, path, key, "a string", v);
    *out = (jg_opt_str){true, sv(v)};
    return OK;
}

static int rd_i32(struct walk *w, const char *path, const char *key, json_t *v, jg_opt_i32 *out) {
    *out = (jg_opt_i32){false, 0};
    if (json_is_null(v)) return OK;
    if (!json_is_integer(v)) return must(w, path, key, "an integer (int32)", v);
    long long x = json_integer_value(v);
    if (w->opt)
        for (size_t i = 0; i < w->opt->n_bignums; i++)
            if (w->opt->bignums[i].stand_in == x)
                return bad(w, "%s.%s: %s is outside the int32 range", path, key,
                           w->opt->bignums[i].text);
    if (x < INT32_MIN || x > INT32_MAX)
        return bad(w, "%s.%s: %lld is outside the int32 range", path, key, x);
    *out = (jg_opt_i32){true, (int32_t)x};
    return OK;
}

static int rd_bool(struct walk *w, const char *path, const char *key, json_t *v, bool *out) {
    *out = json_is_true(v);
    if (json_is_null(v) || json_is_boolean(v)) return OK;
    return must(w, path, key, "a boolean", v);
}

static int rd_time(struct walk *w, const char *path, const char *key, json_t *v, jg_time *out) {
    *out = (jg_time){0};
    if (json_is_null(v)) return OK;
    if (!json_is_string(v)) return must(w, path, key, "an RFC 3339 time string", v);
    jg_str s = sv(v);
    if (!jg_parse_rfc3339(s.p, s.n, &out->sec, &out->nsec))
        return bad(w, "%s.%s: %.*s%s is not an RFC 3339 time (2006-01-02T15:04:05Z07:00)", path,
                   key, (int)(s.n > 64 ? 64 : s.n), s.p, s.n > 64 ? "..." : "");
    out->set = true;
    return OK;
}

/* An object member: *obj = NULL for null. */
static int rd_obj(struct walk *w, const char *path, const char *key, json_t *v, json_t **obj) {
    *obj = NULL;
    if (json_is_null(v)) return OK;
    if (!json_is_object(v)) return must(w, path, key, "an object", v);
    *obj = v;
    return OK;
}

/* ---- Job / CronJob ---- */

struct job_ctx {
    char path[160];
    enum jg_target target;
    struct jg_job *job;
    jg_opt_str type, status; /* the condition being read */
    int level;               /* CronJob: 0 spec, 1 jobTemplate, 2 jobTemplate.spec */
};

static int cond_member(struct walk *w, void *ctx, int which, json_t *v) {
    struct job_ctx *c = ctx;
    return rd_str(w, c->path, which ? "status" : "type", v, which ? &c->status : &c->type);
}

static int rd_conditions(struct walk *w, const char *path, json_t *v, struct jg_job_status *st) {
    static const char *const types[JG_COND_COUNT] = {"Complete", "Failed", "FailureTarget",
                                                     "SuccessCriteriaMet", "Suspended"};
    static const char *const names[] = {"type", "status"};
    if (json_is_null(v)) return OK;
    if (!json_is_array(v)) return must(w, path, "conditions", "an array", v);
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        if (json_is_null(e)) continue;
        struct job_ctx c = {.path = ""};
        PATHF(c.path, "%s.conditions[%zu]", path, i);
        if (!json_is_object(e))
            return bad(w, "%s: must be an object, got %s", c.path, type_name(e));
        if (members(w, e, names, 2, cond_member, &c)) return STOP;
        for (int t = 0; t < JG_COND_COUNT; t++) {
            if (!c.type.set || strlen(types[t]) != c.type.s.n ||
                memcmp(types[t], c.type.s.p, c.type.s.n) != 0)
                continue;
            if (jg_str_eq_lit(c.status.s, "True")) st->cond_true |= JG_COND_BIT(t);
            if (jg_str_eq_lit(c.status.s, "False")) st->cond_false |= JG_COND_BIT(t);
        }
    }
    return OK;
}

static int rd_list(struct walk *w, const char *path, const char *key, json_t *v, jg_str_list *out) {
    *out = (jg_str_list){0};
    if (json_is_null(v)) return OK;
    if (!json_is_array(v)) return must(w, path, key, "an array of strings", v);
    out->set = true;
    size_t n = json_array_size(v);
    if (n) {
        out->items = calloc(n, sizeof *out->items);
        if (!out->items) abort();          /* test code: no allocation failure handling */
        if (w->out->n_lists == 5) abort(); /* two per object and groups: repeats are refused */
        w->out->lists[w->out->n_lists++] = out->items;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(v, i);
        out->items[i] = (jg_str){"", 0};
        if (json_is_string(e))
            out->items[i] = sv(e);
        else if (!json_is_null(e))
            return bad(w, "%s.%s[%zu]: must be a string, got %s", path, key, i, type_name(e));
        out->n = i + 1;
    }
    return OK;
}

static int uncounted_member(struct walk *w, void *ctx, int which, json_t *v) {
    struct job_ctx *c = ctx;
    struct jg_job_status *st = &c->job->status;
    return which ? rd_list(w, c->path, "failed", v, &st->uncounted_failed)
                 : rd_list(w, c->path, "succeeded", v, &st->uncounted_succeeded);
}

static const char *const status_names[] = {
    "conditions",
    "startTime",
    "completionTime",
    "active",
    "succeeded",
    "failed",
    "ready",
    "terminating",
    "completedIndexes",
    "failedIndexes",
    "uncountedTerminatedPods",
};

static int status_member(struct walk *w, void *ctx, int which, json_t *v) {
    struct job_ctx *c = ctx;
    struct jg_job_status *st = &c->job->status;
    const char *key = status_names[which];
    jg_opt_i32 i;
    jg_opt_str s;
    json_t *o;
    int r;
    switch (which) {
    case 0:
        return rd_conditions(w, c->path, v, st);
    case 1:
        return rd_time(w, c->path, key, v, &st->start_time);
    case 2:
        return rd_time(w, c->path, key, v, &st->completion_time);
    case 3:
    case 4:
    case 5:
        r = rd_i32(w, c->path, key, v, &i);
        *(which == 3 ? &st->active : which == 4 ? &st->succeeded : &st->failed) = i.v;
        return r;
    case 6:
        return rd_i32(w, c->path, key, v, &st->ready);
    case 7:
        return rd_i32(w, c->path, key, v, &st->terminating);
    case 8:
        r = rd_str(w, c->path, key, v, &s);
        st->completed_indexes = s.s;
        return r;
    case 9:
        return rd_str(w, c->path, key, v, &st->failed_indexes);
    default: {
        if (rd_obj(w, c->path, key, v, &o)) return STOP;
        if (!o) return OK;
        st->uncounted_set = true;
        struct job_ctx u = {.job = c->job};
        PATHF(u.path, "%s.%s", c->path, key);
        static const char *const names[] = {"succeeded", "failed"};
        return members(w, o, names, 2, uncounted_member, &u);
    }
    }
}

static const char *const spec_names[] = {
    "managedBy",      "completions", "parallelism",  "backoffLimitPerIndex",
    "completionMode", "suspend",     "successPolicy"};

static int spec_member(struct walk *w, void *ctx, int which, json_t *v) {
    struct job_ctx *c = ctx;
    struct jg_job_spec *sp = &c->job->spec;
    const char *key = spec_names[which];
    jg_opt_str mode;
    switch (which) {
    case 0:
        return rd_str(w, c->path, key, v, &sp->managed_by);
    case 1:
        return rd_i32(w, c->path, key, v, &sp->completions);
    case 2:
        return rd_i32(w, c->path, key, v, &sp->parallelism);
    case 3:
        return rd_i32(w, c->path, key, v, &sp->backoff_limit_per_index);
    case 4:
        if (rd_str(w, c->path, key, v, &mode)) return STOP;
        sp->indexed = jg_str_eq_lit(mode.s, "Indexed");
        return OK;
    case 5:
        return rd_bool(w, c->path, key, v, &sp->suspend);
    default:
        if (json_is_null(v)) return OK;
        if (!json_is_object(v)) return must(w, c->path, key, "an object", v);
        sp->has_success_policy = true;
        return OK;
    }
}

/* CronJob: spec.jobTemplate.spec.managedBy, one level per call (c->level). */
static int cron_member(struct walk *w, void *ctx, int which, json_t *v) {
    (void)which;
    struct job_ctx *c = ctx;
    static const char *const levels[] = {"jobTemplate", "spec", "managedBy"};
    int level = c->level;
    if (level == 2) return rd_str(w, c->path, "managedBy", v, &c->job->spec.managed_by);
    json_t *o;
    if (rd_obj(w, c->path, levels[level], v, &o)) return STOP;
    if (!o) return OK;
    struct job_ctx next = {.job = c->job, .target = c->target, .level = level + 1};
    PATHF(next.path, "%s.%s", c->path, levels[level]);
    return members(w, o, &levels[level + 1], 1, cron_member, &next);
}

static int name_member(struct walk *w, void *ctx, int which, json_t *v) {
    (void)which;
    struct job_ctx *c = ctx;
    jg_opt_str name;
    int r = rd_str(w, c->path, "name", v, &name);
    c->job->name = name.s;
    return r;
}

static int object_member(struct walk *w, void *ctx, int which, json_t *v) {
    static const char *const names[] = {"kind", "metadata", "spec", "status"};
    struct job_ctx *c = ctx;
    bool cron = c->target == JG_TARGET_CRONJOB;
    if (which == 0) {
        jg_opt_str kind;
        if (rd_str(w, c->path, "kind", v, &kind)) return STOP;
        const char *want = cron ? "CronJob" : "Job";
        if (kind.set && !jg_str_eq_lit(kind.s, want))
            return bad(w, "%s.kind: expected \"%s\", got \"%.*s\"", c->path, want,
                       (int)(kind.s.n > 64 ? 64 : kind.s.n), kind.s.p);
        return OK;
    }
    if (which == 3 && cron) return OK; /* a CronJob's status is not read */
    json_t *o;
    if (rd_obj(w, c->path, names[which], v, &o)) return STOP;
    if (!o) return OK;
    struct job_ctx sub = {.job = c->job, .target = c->target};
    PATHF(sub.path, "%s.%s", c->path, names[which]);
    if (which == 1) {
        static const char *const name[] = {"name"};
        return members(w, o, name, 1, name_member, &sub);
    }
    if (which == 2 && cron) {
        static const char *const jt[] = {"jobTemplate"};
        return members(w, o, jt, 1, cron_member, &sub);
    }
    if (which == 2) return members(w, o, spec_names, 7, spec_member, &sub);
    return members(w, o, status_names, 11, status_member, &sub);
}

/* ---- CRD targets (docs/targets.md) ----
 * The row names the fields read: metadata.name, its managedByPath and its nested paths. Each path
 * is split into fields up front; then each object met is read member by member (document order),
 * a member being read when some path names it at that depth: a null there ends those paths, a
 * value of the wrong shape is a 400, a repeat is refused. At the top a `kind` no path names must
 * be the row's kind. The paths of a row agree on the shape of every field they share (policy.c
 * refuses rows whose paths do not), so the first path naming a member says what it must be. */

#define REF_CRD_FIELDS 32
#define REF_CRD_PATHS 32

struct crd_field {
    const char *name;
    size_t len;
    bool each;       /* "name[*]": a list, every element an object */
    const char *key; /* each: the field keying its elements (the row's list key), NULL: none */
};

struct crd_path {
    unsigned id; /* 0 metadata.name, 1 managedByPath, 2 + i nested[i] */
    struct crd_field f[REF_CRD_FIELDS];
    size_t n;
};

struct crd_ctx {
    struct walk *w;
    const struct jg_policy_target *row;
    struct jg_job *job;
    const char *what; /* "request.object" */
    struct crd_path paths[REF_CRD_PATHS];
    size_t n_paths, cap_nested;
    bool by_key; /* some path keys a list: copies get a match of their own */
};

/* A copy's match on a row that keys a list (view.h): one part per list element on the way.
 * Bytes, not a C string: a key may hold "\u0000". */
struct match {
    char *p;
    size_t n;
    bool none; /* an element on the way has no string key: matches nothing */
};

static void split_path(const char *s, unsigned id, const struct jg_strv *keys,
                       struct crd_path *out) {
    out->id = id;
    out->n = 0;
    size_t lists = 0;
    while (*s) {
        if (out->n == REF_CRD_FIELDS) abort(); /* policy.c allows 16 */
        struct crd_field *f = &out->f[out->n++];
        const char *end = s;
        while (*end && *end != '.' && *end != '[')
            end++;
        f->name = s;
        f->len = (size_t)(end - s);
        f->each = strncmp(end, "[*]", 3) == 0;
        f->key = NULL;
        if (f->each && keys && lists < keys->n && keys->v[lists][0]) f->key = keys->v[lists];
        lists += f->each;
        s = end + (f->each ? 3 : 0);
        if (*s == '.') s++;
    }
}

static void *own_block(struct ref_review *r, size_t size) {
    void *p = calloc(1, size ? size : 1);
    void **o = realloc(r->owned, (r->n_owned + 1) * sizeof *o);
    if (!p || !o) abort(); /* test code */
    r->owned = o;
    r->owned[r->n_owned++] = p;
    return p;
}

/* "a.b" from "a" and "b" ("b" alone when a is empty), with "[index]" when index >= 0. */
static char *join_field(const char *a, const char *b, size_t blen, long index) {
    size_t n = strlen(a) + blen + 32;
    char *s = malloc(n);
    if (!s) abort();
    int k = snprintf(s, n, "%s%s%.*s", a, *a ? "." : "", (int)blen, b);
    if (index >= 0) snprintf(s + k, n - (size_t)k, "[%ld]", index);
    return s;
}

/* m and one list element: "=<length>:<key>" in a keyed list (key_name set; key: the element's
 * member, NULL or not a string = none), "[<index>]" in any other. */
static struct match match_elem(const struct match *m, long index, const char *key_name,
                               const json_t *key) {
    struct match r = {NULL, 0, m->none};
    size_t kn = key && json_is_string(key) ? json_string_length(key) : 0;
    size_t cap = m->n + kn + 48;
    r.p = malloc(cap);
    if (!r.p) abort();
    if (m->n) memcpy(r.p, m->p, m->n);
    r.n = m->n;
    if (!key_name) {
        r.n += (size_t)snprintf(r.p + r.n, cap - r.n, "[%ld]", index);
    } else if (!key || !json_is_string(key)) {
        r.none = true;
    } else {
        r.n += (size_t)snprintf(r.p + r.n, cap - r.n, "=%zu:", kn);
        memcpy(r.p + r.n, json_string_value(key), kn);
        r.n += kn;
    }
    return r;
}

static void add_nested(struct crd_ctx *c, unsigned which, const char *field, const struct match *m,
                       jg_str value) {
    struct jg_job *job = c->job;
    if (job->n_nested == c->cap_nested) { /* grown by copying into a new owned block */
        size_t cap = c->cap_nested ? 2 * c->cap_nested : 4;
        struct jg_nested_value *nv = own_block(c->w->out, cap * sizeof *nv);
        if (job->n_nested) memcpy(nv, job->nested, job->n_nested * sizeof *nv);
        job->nested = nv;
        c->cap_nested = cap;
    }
    size_t n = strlen(field);
    char *f = own_block(c->w->out, n + 1);
    memcpy(f, field, n + 1);
    jg_str match = {f, n}; /* by index: the field itself */
    if (c->by_key && m->none) {
        match = (jg_str){NULL, 0};
    } else if (c->by_key) {
        char *mp = own_block(c->w->out, m->n);
        if (m->n) memcpy(mp, m->p, m->n);
        match = (jg_str){mp, m->n};
    }
    job->nested[job->n_nested++] = (struct jg_nested_value){which, {f, n}, value, match};
}

static int crd_object(struct crd_ctx *c, json_t *obj, const char *field, const struct match *m,
                      size_t depth, const size_t *active, size_t n_active, const char *list_key);

/* The member `key` of the object at `field` (its match m), named by the paths `on` at `depth`. */
static int crd_member(struct crd_ctx *c, json_t *v, const char *field, const struct match *m,
                      size_t depth, const size_t *on, size_t n_on) {
    struct walk *w = c->w;
    const struct crd_field *f = &c->paths[on[0]].f[depth];
    char key[512];
    PATHF(key, "%.*s", (int)f->len, f->name);
    char *at = field[0] ? join_field(c->what, field, strlen(field), -1) : NULL;
    const char *where = at ? at : c->what; /* what the messages name */
    int r = OK;
    if (depth + 1 == c->paths[on[0]].n) { /* the string itself */
        jg_opt_str s;
        r = rd_str(w, where, key, v, &s);
        for (size_t i = 0; !r && i < n_on; i++) {
            const struct crd_path *p = &c->paths[on[i]];
            if (p->id == 0) {
                c->job->name = s.s;
            } else if (p->id == 1) {
                c->job->spec.managed_by = s;
            } else if (s.set) {
                char *nf = join_field(field, f->name, f->len, -1);
                add_nested(c, p->id - 2, nf, m, s.s);
                free(nf);
            }
        }
    } else if (json_is_null(v)) {
        r = OK;
    } else if (!f->each) {
        if (!json_is_object(v)) {
            r = must(w, where, key, "an object", v);
        } else {
            char *nf = join_field(field, f->name, f->len, -1);
            r = crd_object(c, v, nf, m, depth + 1, on, n_on, NULL);
            free(nf);
        }
    } else if (!json_is_array(v)) {
        r = must(w, where, key, "an array", v);
    } else {
        /* the list's key: any path naming one (policy.c makes the paths sharing it agree) */
        const char *lk = NULL;
        for (size_t k = 0; k < n_on && !lk; k++)
            lk = c->paths[on[k]].f[depth].key;
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            if (json_is_null(e)) continue;
            char *ef = join_field(field, f->name, f->len, (long)i);
            if (!json_is_object(e)) {
                r = bad(w, "%s.%s: must be an object, got %s", c->what, ef, type_name(e));
            } else {
                struct match nm = match_elem(m, (long)i, lk, lk ? json_object_get(e, lk) : NULL);
                r = crd_object(c, e, ef, &nm, depth + 1, on, n_on, lk);
                free(nm.p);
            }
            free(ef);
            if (r) break;
        }
    }
    free(at);
    return r;
}

/* In an element of a keyed list (list_key), the key member may not repeat either. */
static int crd_object(struct crd_ctx *c, json_t *obj, const char *field, const struct match *m,
                      size_t depth, const size_t *active, size_t n_active, const char *list_key) {
    struct walk *w = c->w;
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        bool repeat;
        const char *key = unmark(w, k, &repeat);
        size_t klen = json_object_iter_key_len(json_object_key_to_iter(k)) - (size_t)(key - k);
        size_t on[REF_CRD_PATHS], n_on = 0;
        for (size_t i = 0; i < n_active; i++) {
            const struct crd_field *f = &c->paths[active[i]].f[depth];
            if (f->len == klen && memcmp(f->name, key, klen) == 0) on[n_on++] = active[i];
        }
        bool is_key = list_key && klen == strlen(list_key) && memcmp(key, list_key, klen) == 0;
        if ((n_on || is_key) && repeat) {
            snprintf(w->res->message, sizeof w->res->message, "duplicate object key");
            w->res->status = REF_DUPLICATE;
            return STOP;
        }
        if (n_on) {
            if (crd_member(c, v, field, m, depth, on, n_on)) return STOP;
        } else if (depth == 0 && klen == 6 && memcmp(key, "status", 6) == 0) {
            if (repeat) {
                snprintf(w->res->message, sizeof w->res->message, "duplicate object key");
                w->res->status = REF_DUPLICATE;
                return STOP;
            }
            /* the value, not the scanner's bytes: refdiff compares whether it changed */
            char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
            if (!s) abort();
            char *kept = own_block(w->out, strlen(s) + 1);
            memcpy(kept, s, strlen(s) + 1);
            free(s);
            c->job->status_json = (jg_opt_str){true, {kept, strlen(kept)}};
        } else if (depth == 0 && klen == 4 && memcmp(key, "kind", 4) == 0) {
            jg_opt_str kind;
            if (rd_str(w, c->what, "kind", v, &kind)) return STOP;
            const char *want = c->row->kind;
            if (kind.set && !jg_str_eq_lit(kind.s, want))
                return bad(w, "%s.kind: expected \"%s\", got \"%.*s\"", c->what, want,
                           (int)(kind.s.n > 64 ? 64 : kind.s.n), kind.s.p);
        }
    }
    return OK;
}

static int rd_crd(struct walk *w, const char *path, json_t *v, const struct jg_policy_target *row,
                  struct jg_job *job) {
    struct crd_ctx *c = calloc(1, sizeof *c);
    if (!c) abort();
    c->w = w;
    c->row = row;
    c->job = job;
    c->what = path;
    split_path("metadata.name", 0, NULL, &c->paths[c->n_paths++]);
    split_path(row->managed_by_path, 1, NULL, &c->paths[c->n_paths++]);
    for (size_t i = 0; i < row->n_nested; i++) {
        if (c->n_paths == REF_CRD_PATHS) abort();
        split_path(row->nested[i].path, (unsigned)(2 + i), &row->nested[i].list_keys,
                   &c->paths[c->n_paths++]);
        for (size_t k = 0; k < row->nested[i].list_keys.n; k++)
            c->by_key |= row->nested[i].list_keys.v[k][0] != '\0';
    }
    size_t all[REF_CRD_PATHS];
    for (size_t i = 0; i < c->n_paths; i++)
        all[i] = i;
    job->present = true;
    struct match top = {NULL, 0, false};
    int r = crd_object(c, v, "", &top, 0, all, c->n_paths, NULL);
    free(c);
    return r;
}

static int rd_job(struct walk *w, const char *path, json_t *v, enum jg_target target,
                  const struct jg_policy_target *row, struct jg_job *job) {
    if (!json_is_object(v)) return bad(w, "%s: must be an object, got %s", path, type_name(v));
    if (target == JG_TARGET_CRD) return rd_crd(w, path, v, row, job);
    static const char *const names[] = {"kind", "metadata", "spec", "status"};
    struct job_ctx c = {.target = target, .job = job};
    PATHF(c.path, "%s", path);
    job->present = true;
    return members(w, v, names, 4, object_member, &c);
}

/* ---- the request ---- */

struct req_ctx {
    struct jg_request *q;
    const struct jg_policy *policy;
    jg_opt_str uid, op, group, version, resource, kgroup, kversion, kkind;
    bool has_resource, has_kind, routed;
    json_t *object[2]; /* non-null object/oldObject */
    bool decoded[2];
};

static bool decodes_object(const struct jg_request *q, int idx) {
    if (q->target == JG_TARGET_OTHER) return false;
    return q->operation == JG_OP_UPDATE || (idx == 0 && q->operation == JG_OP_CREATE);
}

static bool rules_read_objects(const struct jg_request *q) {
    if (q->operation != JG_OP_CREATE && q->operation != JG_OP_UPDATE) return false;
    if (q->target == JG_TARGET_JOB || q->target == JG_TARGET_CRD)
        return q->sub_resource.n == 0 || jg_str_eq_lit(q->sub_resource, "status");
    return q->target == JG_TARGET_CRONJOB && q->sub_resource.n == 0;
}

static bool row_names(const struct jg_policy_target *t, jg_str group, jg_str name, bool by_kind) {
    return jg_str_eq_lit(group, t->group) && jg_str_eq_lit(name, by_kind ? t->kind : t->resource);
}

static bool row_serves(const struct jg_policy_target *t, jg_str version) {
    for (size_t i = 0; i < t->versions.n; i++)
        if (jg_str_eq_lit(version, t->versions.v[i])) return true;
    return false;
}

/* The target table under p, in the order rows are looked at: the policy's rows, then each
 * built-in row no policy row replaces (same group and kind). Row i, or NULL past the end. */
static const struct jg_policy_target *table_row(const struct jg_policy *p, size_t i) {
    size_t np = p ? p->n_targets : 0;
    if (i < np) return &p->targets[i];
    size_t k = i - np;
    for (size_t b = 0; b < jg_builtin_target_count; b++) {
        const struct jg_policy_target *t = &jg_builtin_targets[b];
        bool replaced = false;
        for (size_t j = 0; j < np; j++)
            replaced |= strcmp(p->targets[j].group, t->group) == 0 &&
                        strcmp(p->targets[j].kind, t->kind) == 0;
        if (replaced) continue;
        if (k-- == 0) return t;
    }
    return NULL;
}

/* batch Job and CronJob are the API server's kinds: their built-in rows, whatever the version.
 * Any other group/name: the first row of the table naming it that serves `version`, else the
 * first naming it at all. */
static enum jg_target route_to(const struct jg_policy *p, jg_str group, jg_str version, jg_str name,
                               bool by_kind, const struct jg_policy_target **row) {
    *row = NULL;
    static const char *const batch[][2] = {{"Job", "jobs"}, {"CronJob", "cronjobs"}};
    for (int i = 0; i < 2; i++) {
        if (!jg_str_eq_lit(group, "batch") || !jg_str_eq_lit(name, batch[i][by_kind ? 0 : 1]))
            continue;
        for (size_t b = 0; b < jg_builtin_target_count; b++)
            if (strcmp(jg_builtin_targets[b].group, "batch") == 0 &&
                strcmp(jg_builtin_targets[b].kind, batch[i][0]) == 0)
                *row = &jg_builtin_targets[b];
        return i == 0 ? JG_TARGET_JOB : JG_TARGET_CRONJOB;
    }
    const struct jg_policy_target *t;
    for (size_t i = 0; (t = table_row(p, i)); i++) {
        if (!row_names(t, group, name, by_kind)) continue;
        if (row_serves(t, version)) {
            *row = t;
            break;
        }
        if (!*row) *row = t;
    }
    return *row ? JG_TARGET_CRD : JG_TARGET_OTHER;
}

/* Routing: by request.resource when it names a resource, else by request.kind. Decided as soon
 * as operation and a non-empty resource are known, else once the request is read (final). */
static void route(struct req_ctx *c, bool final) {
    if (c->routed || !c->op.set || !(c->has_resource || c->has_kind)) return;
    bool by_resource = c->has_resource && c->resource.s.n;
    if (!by_resource && !final) return;
    if (by_resource)
        c->q->target =
            route_to(c->policy, c->group.s, c->version.s, c->resource.s, false, &c->q->row);
    else
        c->q->target =
            route_to(c->policy, c->kgroup.s, c->kversion.s, c->kkind.s, true, &c->q->row);
    c->routed = true;
}

static int decode_object(struct walk *w, struct req_ctx *c, int idx) {
    static const char *const paths[] = {"request.object", "request.oldObject"};
    c->decoded[idx] = true;
    if (!decodes_object(c->q, idx)) return OK;
    return rd_job(w, paths[idx], c->object[idx], c->q->target, c->q->row,
                  idx ? &c->q->old_object : &c->q->object);
}

struct gvr_ctx {
    const char *path;
    const char *const *names;
    jg_opt_str *v[3];
};

static int gvr_member(struct walk *w, void *ctx, int which, json_t *v) {
    struct gvr_ctx *g = ctx;
    return rd_str(w, g->path, g->names[which], v, g->v[which]);
}

static int user_member(struct walk *w, void *ctx, int which, json_t *v) {
    if (which == 1)
        return rd_list(w, "request.userInfo", "groups", v, &((struct jg_request *)ctx)->groups);
    jg_opt_str s;
    int r = rd_str(w, "request.userInfo", "username", v, &s);
    ((struct jg_request *)ctx)->username = s.s;
    return r;
}

static const char *const request_names[] = {
    "uid",       "operation", "resource", "kind",   "subResource", "name",
    "namespace", "userInfo",  "dryRun",   "object", "oldObject",
};

static int request_member(struct walk *w, void *ctx, int which, json_t *v) {
    struct req_ctx *c = ctx;
    struct jg_request *q = c->q;
    jg_opt_str s;
    json_t *o;
    switch (which) {
    case 0:
        if (rd_str(w, "request", "uid", v, &c->uid)) return STOP;
        q->uid = c->uid.s;
        return OK;
    case 1: {
        static const char *const ops[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};
        static const enum jg_operation codes[] = {JG_OP_CREATE, JG_OP_UPDATE, JG_OP_DELETE,
                                                  JG_OP_CONNECT};
        if (rd_str(w, "request", "operation", v, &c->op)) return STOP;
        if (!c->op.set) return OK;
        int found = -1;
        for (int i = 0; i < 4; i++)
            if (jg_str_eq_lit(c->op.s, ops[i])) found = i;
        if (found < 0)
            return bad(w, "request.operation: unknown \"%.*s\" (CREATE, UPDATE, DELETE or CONNECT)",
                       (int)(c->op.s.n > 32 ? 32 : c->op.s.n), c->op.s.p);
        q->operation = codes[found];
        route(c, false);
        return OK;
    }
    case 2:
    case 3: {
        bool res = which == 2;
        static const char *const rnames[] = {"group", "version", "resource"};
        static const char *const knames[] = {"group", "version", "kind"};
        if (rd_obj(w, "request", res ? "resource" : "kind", v, &o)) return STOP;
        if (!o) return OK;
        struct gvr_ctx g = {res ? "request.resource" : "request.kind",
                            res ? rnames : knames,
                            {res ? &c->group : &c->kgroup, res ? &c->version : &c->kversion,
                             res ? &c->resource : &c->kkind}};
        if (members(w, o, g.names, 3, gvr_member, &g)) return STOP;
        if (res) {
            c->has_resource = true;
            q->group = c->group.s;
            q->version = c->version.s;
            q->resource = c->resource.s;
        } else {
            c->has_kind = true;
        }
        route(c, false);
        return OK;
    }
    case 4:
    case 5:
    case 6: {
        static const char *const keys[] = {"subResource", "name", "namespace"};
        jg_str *dst = which == 4 ? &q->sub_resource : which == 5 ? &q->name : &q->namespace_;
        if (rd_str(w, "request", keys[which - 4], v, &s)) return STOP;
        if (which == 6 && s.s.n > JG_MAX_NAMESPACE_BYTES)
            return bad(w, JG_NAMESPACE_TOO_LONG_FMT, "request.namespace", JG_MAX_NAMESPACE_BYTES,
                       s.s.n);
        *dst = s.s;
        return OK;
    }
    case 7: {
        if (rd_obj(w, "request", "userInfo", v, &o)) return STOP;
        if (!o) return OK;
        static const char *const names[] = {"username", "groups"};
        return members(w, o, names, 2, user_member, q);
    }
    case 8:
        return rd_bool(w, "request", "dryRun", v, &q->dry_run);
    default: {
        int idx = which - 9;
        if (json_is_null(v)) return OK;
        c->object[idx] = v;
        return c->routed ? decode_object(w, c, idx) : OK; /* else read after the request */
    }
    }
}

/* What the request must hold, once all of it is read. */
static int check_request(struct walk *w, bool has_request, struct req_ctx *c) {
    struct jg_request *q = c->q;
    if (!has_request) return bad(w, "request: required");
    if (!c->uid.set || c->uid.s.n == 0) return bad(w, "request.uid: required");
    if (!c->op.set) return bad(w, "request.operation: required");
    if (!c->has_resource && !c->has_kind) return bad(w, "request.resource: required");
    route(c, true);
    if (!q->resource.n && c->kkind.set) { /* routed by kind: the row's resource, the kind's GV */
        if (q->row) q->resource = (jg_str){q->row->resource, strlen(q->row->resource)};
        q->group = c->kgroup.s;
        q->version = c->kversion.s;
    }
    for (int i = 0; i < 2; i++) {
        if (!decodes_object(q, i)) continue;
        if (!c->object[i] && rules_read_objects(q))
            return i ? bad(w, "request.oldObject: required for UPDATE")
                     : bad(w, "request.object: required for %s", jg_operation_name(q->operation));
        if (c->object[i] && !c->decoded[i] && decode_object(w, c, i)) return STOP;
    }
    return OK;
}

/* ---- the envelope ---- */

static int check_envelope(struct walk *w, jg_str api, bool api_set, jg_str kind, bool kind_set) {
    if (api_set && !jg_str_eq_lit(api, "admission.k8s.io/v1") &&
        !jg_str_eq_lit(api, "admission.k8s.io/v1beta1"))
        return bad(w,
                   "apiVersion: unsupported \"%.*s\" (expected admission.k8s.io/v1 or "
                   "admission.k8s.io/v1beta1)",
                   (int)(api.n > 64 ? 64 : api.n), api.p);
    if (kind_set && !jg_str_eq_lit(kind, "AdmissionReview"))
        return bad(w, "kind: expected \"AdmissionReview\", got \"%.*s\"",
                   (int)(kind.n > 64 ? 64 : kind.n), kind.p);
    return OK;
}

/* The first string-valued top-level member named `name`, repeats included. */
static const json_t *envelope_member(struct walk *w, json_t *root, const char *name) {
    const char *k;
    json_t *v;
    json_object_foreach(root, k, v) {
        bool repeat;
        const char *key = unmark(w, k, &repeat);
        size_t klen = json_object_iter_key_len(json_object_key_to_iter(k)) - (size_t)(key - k);
        if (klen == strlen(name) && memcmp(key, name, klen) == 0 && json_is_string(v)) return v;
    }
    return NULL;
}

struct review_ctx {
    bool has_request;
    struct req_ctx req;
};

static int review_member(struct walk *w, void *ctx, int which, json_t *v) {
    struct review_ctx *r = ctx;
    jg_opt_str s;
    if (which == 0) return rd_str(w, "AdmissionReview", "apiVersion", v, &s);
    if (which == 1) return rd_str(w, "AdmissionReview", "kind", v, &s);
    if (json_is_null(v)) return OK;
    if (!json_is_object(v)) return bad(w, "request: must be an object, got %s", type_name(v));
    r->has_request = true;
    return members(w, v, request_names, 11, request_member, &r->req);
}

enum ref_status ref_decode_review(const char *body, size_t len, const struct ref_options *opt,
                                  struct ref_review *out, struct ref_result *res) {
    memset(out, 0, sizeof *out);
    memset(res, 0, sizeof *res);
    struct walk w = {opt, out, res};
    if (len > JG_MAX_BODY_BYTES) {
        bad(&w, "request body is %zu bytes, over the %u-byte limit", len, JG_MAX_BODY_BYTES);
        return res->status;
    }
    out->root = json_loadb(body, len, REF_JSON_FLAGS, &res->json_error);
    if (!out->root) return res->status = REF_NOT_JSON;
    json_t *root = out->root;
    if (!json_is_object(root)) {
        bad(&w, "AdmissionReview: must be a JSON object, got %s", type_name(root));
        return res->status;
    }
    struct review_ctx r = {0};
    r.req.q = &out->review.req;
    r.req.policy = opt ? opt->policy : NULL;
    static const char *const names[] = {"apiVersion", "kind", "request"};
    const json_t *api = envelope_member(&w, root, "apiVersion");
    const json_t *kind = envelope_member(&w, root, "kind");
    jg_str api_s = api ? sv(api) : (jg_str){"", 0}, kind_s = kind ? sv(kind) : (jg_str){"", 0};
    int st = members(&w, root, names, 3, review_member, &r);
    if (!st) st = check_envelope(&w, api_s, api != NULL, kind_s, kind != NULL);
    if (!st) st = check_request(&w, r.has_request, &r.req);
    if (st) { /* apiVersion/kind outrank whatever else was found */
        struct ref_result env = {0};
        struct walk we = {opt, out, &env};
        if (check_envelope(&we, api_s, api != NULL, kind_s, kind != NULL)) *res = env;
    } else {
        res->status = REF_OK;
    }
    if (jg_str_eq_lit(api_s, "admission.k8s.io/v1beta1"))
        out->review.req.api_version = JG_API_V1BETA1;
    return res->status;
}

void ref_review_free(struct ref_review *r) {
    for (size_t i = 0; i < r->n_lists; i++)
        free(r->lists[i]);
    for (size_t i = 0; i < r->n_owned; i++)
        free(r->owned[i]);
    free(r->owned);
    json_decref(r->root);
    memset(r, 0, sizeof *r);
}
