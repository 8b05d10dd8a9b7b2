/* The audit.k8s.io/v1 Event as kube-apiserver writes it (one per line with --audit-log-path, an
 * EventList per batch from the webhook backend): the members replay reads, read in one validating
 * pass over the event's JSON. The objects are only walked (their kind and metadata noted) and
 * handed on as the slices they are; the engine's decoder reads them. */
#include "replay.h"

#include "jobguard/buf.h"

#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 512 /* nesting of an event; the objects in it are the decoder's to bound */

struct jw {
    const char *start, *p, *end;
    const char *err; /* the first problem, static text */
    struct jg_audit_event *ev;
};

static bool fail(struct jw *w, const char *msg) {
    if (!w->err) w->err = msg;
    return false;
}

static void ws(struct jw *w) {
    while (w->p < w->end && (*w->p == ' ' || *w->p == '\n' || *w->p == '\r' || *w->p == '\t'))
        w->p++;
}

/* Next '"', '\\' or control byte in [p, end), or end. */
static const char *string_stop(const char *p, const char *end) {
    while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
        p++;
    return p;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* A string at w->p ('"'): its raw bytes between the quotes into *out (escapes not decoded),
 * *escaped when it holds any. */
static bool jw_string(struct jw *w, jg_str *out, bool *escaped) {
    const char *s = ++w->p;
    bool esc = false;
    for (;;) {
        w->p = string_stop(w->p, w->end);
        if (w->p >= w->end) return fail(w, "unterminated string");
        char c = *w->p;
        if (c == '"') break;
        if (c != '\\') return fail(w, "control character in a string");
        esc = true;
        if (w->end - w->p < 2) return fail(w, "unterminated string");
        char e = w->p[1];
        if (e == 'u') {
            if (w->end - w->p < 6 || hexval(w->p[2]) < 0 || hexval(w->p[3]) < 0 ||
                hexval(w->p[4]) < 0 || hexval(w->p[5]) < 0)
                return fail(w, "invalid \\u escape in a string");
            w->p += 6;
        } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
                   e == 'r' || e == 't') {
            w->p += 2;
        } else {
            return fail(w, "invalid escape in a string");
        }
    }
    *out = (jg_str){s, (size_t)(w->p - s)};
    if (escaped) *escaped = esc;
    w->p++;
    return true;
}

static void put_utf8(char *o, size_t *k, unsigned cp) {
    if (cp < 0x80) {
        o[(*k)++] = (char)cp;
    } else if (cp < 0x800) {
        o[(*k)++] = (char)(0xc0 | cp >> 6);
        o[(*k)++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        o[(*k)++] = (char)(0xe0 | cp >> 12);
        o[(*k)++] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[(*k)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        o[(*k)++] = (char)(0xf0 | cp >> 18);
        o[(*k)++] = (char)(0x80 | (cp >> 12 & 0x3f));
        o[(*k)++] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[(*k)++] = (char)(0x80 | (cp & 0x3f));
    }
}

static unsigned hex4(const char *p) {
    return (unsigned)(hexval(p[0]) << 12 | hexval(p[1]) << 8 | hexval(p[2]) << 4 | hexval(p[3]));
}

/* The decoded text of a raw string that holds escapes, in the event's arena (as Go decodes it:
 * a lone surrogate is U+FFFD). */
static bool unescape(struct jw *w, jg_str raw, jg_str *out) {
    struct jg_audit_event *ev = w->ev;
    if (raw.n > sizeof ev->arena - ev->arena_used)
        return fail(w, "strings with escapes longer than 16 KiB in all");
    char *o = ev->arena + ev->arena_used;
    size_t k = 0;
    for (size_t i = 0; i < raw.n;) {
        char c = raw.p[i];
        if (c != '\\') {
            o[k++] = c;
            i++;
            continue;
        }
        char e = raw.p[i + 1];
        i += 2;
        if (e != 'u') {
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            o[k++] = to[strchr(from, e) - from];
            continue;
        }
        unsigned cp = hex4(raw.p + i);
        i += 4;
        if (cp >= 0xd800 && cp < 0xdc00 && i + 6 <= raw.n && raw.p[i] == '\\' &&
            raw.p[i + 1] == 'u') {
            unsigned lo = hex4(raw.p + i + 2);
            if (lo >= 0xdc00 && lo < 0xe000) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                i += 6;
            } else {
                cp = 0xfffd;
            }
        } else if (cp >= 0xd800 && cp < 0xe000) {
            cp = 0xfffd;
        }
        put_utf8(o, &k, cp); /* at most 3 bytes per 6-byte escape, 4 per 12 */
    }
    ev->arena_used += k;
    *out = (jg_str){o, k};
    return true;
}

static bool jw_literal(struct jw *w, const char *lit) {
    size_t n = strlen(lit);
    if ((size_t)(w->end - w->p) < n || memcmp(w->p, lit, n) != 0) return fail(w, "invalid literal");
    w->p += n;
    return true;
}

static bool digits(struct jw *w) {
    const char *s = w->p;
    while (w->p < w->end && *w->p >= '0' && *w->p <= '9')
        w->p++;
    return w->p > s;
}

static bool jw_number(struct jw *w) {
    if (w->p < w->end && *w->p == '-') w->p++;
    if (w->p < w->end && *w->p == '0')
        w->p++;
    else if (!digits(w))
        return fail(w, "invalid number");
    if (w->p < w->end && *w->p == '.') {
        w->p++;
        if (!digits(w)) return fail(w, "invalid number");
    }
    if (w->p < w->end && (*w->p == 'e' || *w->p == 'E')) {
        w->p++;
        if (w->p < w->end && (*w->p == '+' || *w->p == '-')) w->p++;
        if (!digits(w)) return fail(w, "invalid number");
    }
    return true;
}

/* The next member of an object (key != NULL) or element of an array whose opening bracket is
 * consumed: 1 with w at the value (and *key read), 0 at the closing bracket (consumed), -1 on
 * error. *first is true before the first one. */
static int jw_next(struct jw *w, bool *first, jg_str *key) {
    char close = key ? '}' : ']';
    ws(w);
    if (w->p < w->end && *w->p == close) {
        w->p++;
        return 0;
    }
    if (w->p < w->end && !*first) {
        if (*w->p != ',')
            return fail(w, key ? "expected ',' or '}' after an object member"
                               : "expected ',' or ']' after an array element"),
                   -1;
        w->p++;
        ws(w);
    }
    *first = false;
    if (key) {
        if (w->p >= w->end || *w->p != '"') return fail(w, "expected a member name (a string)"), -1;
        if (!jw_string(w, key, NULL)) return -1;
        ws(w);
        if (w->p >= w->end || *w->p != ':') return fail(w, "expected ':' after a member name"), -1;
        w->p++;
        ws(w);
    }
    if (w->p >= w->end) return fail(w, "unexpected end of the event"), -1;
    return 1;
}

static bool jw_skip(struct jw *w, int depth) {
    ws(w);
    if (w->p >= w->end) return fail(w, "unexpected end of the event");
    char c = *w->p;
    if (c == '{' || c == '[') {
        if (depth >= MAX_DEPTH)
            return fail(w, "nested deeper than " JG_STRINGIFY(MAX_DEPTH) " levels");
        w->p++;
        bool first = true;
        int st;
        jg_str key;
        while ((st = jw_next(w, &first, c == '{' ? &key : NULL)) == 1)
            if (!jw_skip(w, depth + 1)) return false;
        return st == 0;
    }
    if (c == '"') {
        jg_str s;
        return jw_string(w, &s, NULL);
    }
    if (c == 't') return jw_literal(w, "true");
    if (c == 'f') return jw_literal(w, "false");
    if (c == 'n') return jw_literal(w, "null");
    if (c == '-' || (c >= '0' && c <= '9')) return jw_number(w);
    return fail(w, "unexpected character");
}

static bool is_null(struct jw *w) {
    if (JG_LIT_PREFIX(w->p, (size_t)(w->end - w->p), "null")) {
        w->p += JG_LIT_LEN("null");
        return true;
    }
    return false;
}

/* A string member (null = absent), decoded. */
static bool get_str(struct jw *w, jg_str *out, const char *what) {
    if (is_null(w)) return true;
    if (*w->p != '"') return fail(w, what);
    bool esc;
    jg_str raw;
    if (!jw_string(w, &raw, &esc)) return false;
    if (!esc) {
        *out = raw;
        return true;
    }
    return unescape(w, raw, out);
}

static bool key_is(jg_str k, const char *lit) {
    return jg_str_eq_lit(k, lit);
}

/* Which string member a key names: the destination, or NULL. */
struct slot {
    const char *name;
    jg_str *dst;
};

static jg_str *slot_for(jg_str key, const struct slot *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (key_is(key, s[i].name)) return s[i].dst;
    return NULL;
}

#define SLOT_FOR(key, slots) slot_for(key, slots, sizeof slots / sizeof slots[0])

/* An array of strings (null = absent) into v. */
static bool get_strings(struct jw *w, struct jg_str_vec *v, bool *set, const char *what) {
    v->n = 0;
    if (is_null(w)) return true;
    if (*w->p != '[') return fail(w, what);
    *set = true;
    w->p++;
    bool first = true;
    int st;
    while ((st = jw_next(w, &first, NULL)) == 1) {
        jg_str s = {"", 0};
        if (!get_str(w, &s, what)) return false;
        if (v->n == v->cap) {
            size_t cap = v->cap ? v->cap * 2 : 16;
            jg_str *nv = realloc(v->v, cap * sizeof *nv);
            if (!nv) return fail(w, "out of memory");
            v->v = nv;
            v->cap = cap;
        }
        v->v[v->n++] = s;
    }
    return st == 0;
}

static bool get_user(struct jw *w, struct jg_audit_user *u, const char *what) {
    if (is_null(w)) return true;
    if (*w->p != '{') return fail(w, what);
    u->set = true;
    w->p++;
    bool first = true;
    int st;
    jg_str key;
    while ((st = jw_next(w, &first, &key)) == 1) {
        bool ok = key_is(key, "username")
                      ? get_str(w, &u->username, "user.username: expected a string")
                  : key_is(key, "groups") ? get_strings(w, &u->groups, &u->groups_set,
                                                        "user.groups: expected an array of strings")
                                          : jw_skip(w, 2);
        if (!ok) return false;
    }
    return st == 0;
}

static bool get_ref(struct jw *w, struct jg_audit_ref *r) {
    static const char bad[] = "objectRef: expected an object of strings";
    if (is_null(w)) return true;
    if (*w->p != '{') return fail(w, bad);
    r->set = true;
    w->p++;
    bool first = true;
    int st;
    jg_str key;
    const struct slot slots[] = {{"resource", &r->resource},
                                 {"namespace", &r->namespace_},
                                 {"name", &r->name},
                                 {"uid", &r->uid},
                                 {"apiGroup", &r->group},
                                 {"apiVersion", &r->version},
                                 {"resourceVersion", &r->resource_version},
                                 {"subresource", &r->subresource}};
    while ((st = jw_next(w, &first, &key)) == 1) {
        jg_str *dst = SLOT_FOR(key, slots);
        if (!(dst ? get_str(w, dst, bad) : jw_skip(w, 2))) return false;
    }
    return st == 0;
}

static bool get_code(struct jw *w, long *code) {
    const char *s = w->p;
    if (!jw_number(w)) return false;
    long v = 0;
    const char *p = s;
    bool neg = *p == '-';
    if (neg) p++;
    for (; p < w->p && *p >= '0' && *p <= '9'; p++)
        if (v < 100000) v = v * 10 + (*p - '0');
    if (p != w->p) return fail(w, "responseStatus.code: expected an integer");
    *code = neg ? -v : v;
    return true;
}

static bool get_status(struct jw *w, struct jg_audit_event *ev) {
    static const char bad[] = "responseStatus: expected a Status object";
    if (is_null(w)) return true;
    if (*w->p != '{') return fail(w, bad);
    w->p++;
    bool first = true;
    int st;
    jg_str key;
    while ((st = jw_next(w, &first, &key)) == 1) {
        bool ok;
        if (key_is(key, "code")) {
            ok = (*w->p == '-' || (*w->p >= '0' && *w->p <= '9'))
                     ? get_code(w, &ev->code)
                     : fail(w, "responseStatus.code: expected an integer");
            ev->has_code = ok;
        } else if (key_is(key, "message")) {
            ok = get_str(w, &ev->status_message, "responseStatus.message: expected a string");
        } else if (key_is(key, "reason")) {
            ok = get_str(w, &ev->status_reason, "responseStatus.reason: expected a string");
        } else {
            ok = jw_skip(w, 2);
        }
        if (!ok) return false;
    }
    return st == 0;
}

/* requestObject / responseObject: the slice, and the object's kind and metadata when it is one. */
static bool get_object(struct jw *w, struct jg_audit_object *o) {
    if (is_null(w)) return true;
    const char *s = w->p;
    o->present = true;
    if (*w->p != '{') {
        if (!jw_skip(w, 1)) return false;
        o->json = (jg_str){s, (size_t)(w->p - s)};
        return true;
    }
    o->is_object = true;
    w->p++;
    bool first = true;
    int st;
    jg_str key;
    while ((st = jw_next(w, &first, &key)) == 1) {
        bool ok;
        if (key_is(key, "kind") && *w->p == '"') {
            ok = get_str(w, &o->kind, "");
        } else if (key_is(key, "apiVersion") && *w->p == '"') {
            ok = get_str(w, &o->api_version, "");
        } else if (key_is(key, "metadata") && *w->p == '{') {
            w->p++;
            bool mfirst = true;
            int mst;
            const struct slot slots[] = {{"name", &o->name},
                                         {"namespace", &o->namespace_},
                                         {"uid", &o->uid},
                                         {"resourceVersion", &o->resource_version}};
            while ((mst = jw_next(w, &mfirst, &key)) == 1) {
                jg_str *dst = SLOT_FOR(key, slots);
                bool mok;
                if (dst && *w->p == '"') {
                    mok = get_str(w, dst, "");
                } else {
                    if (key_is(key, "deletionTimestamp") && *w->p != 'n') o->deleting = true;
                    mok = jw_skip(w, 3);
                }
                if (!mok) return false;
            }
            ok = mst == 0;
        } else {
            ok = jw_skip(w, 2);
        }
        if (!ok) return false;
    }
    if (st != 0) return false;
    o->json = (jg_str){s, (size_t)(w->p - s)};
    return true;
}

bool jg_audit_event_parse(const char *json, size_t len, struct jg_audit_event *ev, char *err,
                          size_t errlen) {
    struct jg_str_vec g = ev->user.groups, ig = ev->impersonated.groups;
    memset(ev, 0, offsetof(struct jg_audit_event, arena));
    ev->arena_used = 0;
    ev->user.groups = g;
    ev->impersonated.groups = ig;
    ev->user.groups.n = ev->impersonated.groups.n = 0;
    struct jw w = {json, json, json + len, NULL, ev};
    ws(&w);
    if (w.p >= w.end || *w.p != '{') {
        snprintf(err, errlen, "not an audit event: expected a JSON object");
        return false;
    }
    w.p++;
    bool first = true, ok = true;
    int st;
    jg_str key;
    static const char str[] = "expected a string";
    const struct slot slots[] = {{"kind", &ev->kind},
                                 {"apiVersion", &ev->api_version},
                                 {"level", &ev->level},
                                 {"auditID", &ev->audit_id},
                                 {"stage", &ev->stage},
                                 {"requestURI", &ev->request_uri},
                                 {"verb", &ev->verb},
                                 {"requestReceivedTimestamp", &ev->received},
                                 {"stageTimestamp", &ev->stage_time}};
    while (ok && (st = jw_next(&w, &first, &key)) == 1) {
        jg_str *dst = SLOT_FOR(key, slots);
        if (dst)
            ok = get_str(&w, dst, str);
        else if (key_is(key, "user"))
            ok = get_user(&w, &ev->user, "user: expected a UserInfo object");
        else if (key_is(key, "impersonatedUser"))
            ok = get_user(&w, &ev->impersonated, "impersonatedUser: expected a UserInfo object");
        else if (key_is(key, "objectRef"))
            ok = get_ref(&w, &ev->ref);
        else if (key_is(key, "responseStatus"))
            ok = get_status(&w, ev);
        else if (key_is(key, "requestObject"))
            ok = get_object(&w, &ev->request);
        else if (key_is(key, "responseObject"))
            ok = get_object(&w, &ev->response);
        else
            ok = jw_skip(&w, 1);
        if (ok && dst == &ev->level && !ev->level.n) ok = fail(&w, "level: empty");
    }
    if (ok && st == 0) {
        ws(&w);
        if (w.p < w.end) fail(&w, "unexpected data after the event");
    }
    if (w.err) {
        snprintf(err, errlen, "invalid audit event: %s (at byte %zu)", w.err,
                 (size_t)(w.p - w.start) + 1);
        return false;
    }
    if (ev->kind.n && !jg_str_eq_lit(ev->kind, "Event")) {
        snprintf(err, errlen,
                 "not an audit event: kind %.*s (replay reads audit.k8s.io/v1 Event, "
                 "one per line, or EventList)",
                 (int)(ev->kind.n > 64 ? 64 : ev->kind.n), ev->kind.p);
        return false;
    }
    if (ev->api_version.n && !jg_str_eq_lit(ev->api_version, "audit.k8s.io/v1")) {
        snprintf(err, errlen, "not an audit event: apiVersion %.*s (replay reads audit.k8s.io/v1)",
                 (int)(ev->api_version.n > 64 ? 64 : ev->api_version.n), ev->api_version.p);
        return false;
    }
    const char *missing = !ev->audit_id.n ? "auditID"
                          : !ev->stage.n  ? "stage"
                          : !ev->verb.n   ? "verb"
                                          : NULL;
    if (missing) {
        snprintf(err, errlen, "not an audit event: no %s (replay reads audit.k8s.io/v1 Event)",
                 missing);
        return false;
    }
    return true;
}

void jg_audit_event_free(struct jg_audit_event *ev) {
    free(ev->user.groups.v);
    free(ev->impersonated.groups.v);
}
