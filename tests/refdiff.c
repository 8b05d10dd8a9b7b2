/* The differential check (refdiff.h). The scanner reads the original bytes; jansson reads a
 * copy in which only what jansson cannot represent is rewritten, one token at a time, at the
 * position jansson reports:
 *  - a repeated key gets a marker byte in front (\u00XX, a control character the input never
 *    escapes): the reference refuses it where the decoder reads that key, as the scanner does,
 *    and ignores it elsewhere, as the scanner does;
 *  - \u0000 in a key becomes \u001f: either way the key matches no key the decoder reads;
 *  - a number beyond int64 (or beyond double) becomes an in-range stand-in of the same kind;
 *    the reference quotes the original text where it reports it out of the int32 range.
 * Nesting: jansson counts scalars toward its 2048 levels, the scanner only objects and arrays;
 * a document exactly 2048 containers deep is accepted by one and refused by the other.
 * A raw NUL byte right after a number or literal is invalid JSON that jansson 2.14 skips: such
 * input is not given to jansson, and the scanner must refuse it. */
#include "refdiff.h"

#include "jobguard/admit.h"
#include "jobguard/encode.h"
#include "jobguard/policy.h"
#include "refdecode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum scan_class { S_OK, S_BAD, S_SYNTAX, S_DUP, S_OOM };

static enum scan_class classify(enum jg_decode_status st, const char *msg) {
    static const char syn[] = "AdmissionReview: invalid JSON", dup[] = ": duplicate object key";
    if (st == JG_DECODE_OK) return S_OK;
    if (st == JG_DECODE_NO_MEMORY) return S_OOM;
    if (strcmp(msg, "AdmissionReview: empty input") == 0) return S_SYNTAX;
    if (strncmp(msg, syn, sizeof syn - 1) != 0) return S_BAD;
    size_t n = strlen(msg);
    return n > sizeof dup && strcmp(msg + n - (sizeof dup - 1), dup) == 0 ? S_DUP : S_SYNTAX;
}

__attribute__((format(printf, 2, 3))) static void differ(struct refdiff *out, const char *fmt,
                                                         ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->detail, sizeof out->detail, fmt, ap);
    va_end(ap);
    out->kind = RD_DIFFER;
}

/* ---- rewrites of the jansson copy ---- */

struct doc {
    char *p;
    size_t n;
};

static void splice(struct doc *d, size_t at, size_t cut, const char *ins, size_t n_ins) {
    char *q = malloc(d->n - cut + n_ins + 1);
    if (!q) abort();
    memcpy(q, d->p, at);
    memcpy(q + at, ins, n_ins);
    memcpy(q + at + n_ins, d->p + at + cut, d->n - at - cut);
    d->n = d->n - cut + n_ins;
    q[d->n] = '\0';
    free(d->p);
    d->p = q;
}

/* The opening quote of the string token that ends (closing quote) just before `end`. */
static bool token_start(const struct doc *d, size_t end, size_t *start) {
    if (end < 2 || end > d->n || d->p[end - 1] != '"') return false;
    for (size_t j = end - 1; j-- > 0;) {
        if (d->p[j] != '"') continue;
        size_t bs = 0;
        while (bs < j && d->p[j - 1 - bs] == '\\')
            bs++;
        if (bs % 2 == 0) {
            *start = j;
            return true;
        }
    }
    return false;
}

static bool contains(const char *body, size_t len, const char *s) {
    return memmem(body, len, s, strlen(s)) != NULL;
}

/* A control character no \u escape of the input names (so no input key starts with it). */
static char choose_marker(const char *body, size_t len) {
    for (int c = 1; c < 0x1f; c++) {
        char lo[8], up[8];
        snprintf(lo, sizeof lo, "\\u00%02x", c);
        snprintf(up, sizeof up, "\\u00%02X", c);
        if (!contains(body, len, lo) && !contains(body, len, up)) return (char)c;
    }
    return 0;
}

/* A repeat gets as many markers as there are strings before it with the same text (markers
 * aside): more than any earlier occurrence of the key got, so one round per repeat (one marker
 * per round took the k-th occurrence of a key k rounds). Strings that are not keys only add
 * markers. */
static bool mark_repeat(struct doc *d, size_t end, char marker) {
    size_t start;
    if (!marker || !token_start(d, end, &start)) return false;
    char esc[16];
    snprintf(esc, sizeof esc, "\\u%04x", (unsigned)(unsigned char)marker);
    const char *key = d->p + start + 1;
    size_t klen = end - 1 - (start + 1), n = 0;
    for (size_t i = 0; i < start; i++) {
        if (d->p[i] != '"') continue;
        size_t j = i + 1;
        while (j + 6 <= start && memcmp(d->p + j, esc, 6) == 0)
            j += 6;
        if (j + klen < start && memcmp(d->p + j, key, klen) == 0 && d->p[j + klen] == '"') n++;
    }
    if (n == 0) n = 1;
    char *ins = malloc(6 * n);
    if (!ins) abort();
    for (size_t i = 0; i < n; i++)
        memcpy(ins + 6 * i, esc, 6);
    splice(d, start + 1, 0, ins, 6 * n);
    free(ins);
    return true;
}

static bool rewrite_nul_key(struct doc *d, size_t end) {
    size_t start;
    if (!token_start(d, end, &start)) return false;
    bool any = false;
    for (size_t i = start + 1; i + 1 < end; i++) {
        if (d->p[i] != '\\') continue;
        if (d->p[i + 1] == 'u' && i + 6 <= end && memcmp(d->p + i + 2, "0000", 4) == 0) {
            memcpy(d->p + i + 2, "001f", 4);
            any = true;
        }
        i += d->p[i + 1] == 'u' ? 5 : 1;
    }
    return any;
}

/* Whether p[0..n) is exactly one JSON number. */
static bool json_number(const char *p, size_t n) {
    size_t i = 0;
    if (i < n && p[i] == '-') i++;
    if (i < n && p[i] == '0')
        i++;
    else if (i < n && p[i] >= '1' && p[i] <= '9')
        while (i < n && p[i] >= '0' && p[i] <= '9')
            i++;
    else
        return false;
    if (i < n && p[i] == '.') {
        size_t d = ++i;
        while (i < n && p[i] >= '0' && p[i] <= '9')
            i++;
        if (i == d) return false;
    }
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-')) i++;
        size_t d = i;
        while (i < n && p[i] >= '0' && p[i] <= '9')
            i++;
        if (i == d) return false;
    }
    return i == n;
}

static bool rewrite_number(struct doc *d, size_t end, const char *body, size_t len,
                           struct ref_bignum *bigs, size_t *n_bigs, size_t cap) {
    size_t start = end;
    bool real = false;
    while (start > 0 && strchr("0123456789+-.eE", d->p[start - 1]) && d->p[start - 1]) {
        start--;
        real |= strchr(".eE", d->p[start]) != NULL;
    }
    /* Only a whole number token is replaced: when number characters are glued to it on either
     * side the input is invalid JSON anyway, and a stand-in must not make it valid. */
    if (!json_number(d->p + start, end - start) ||
        (end < d->n && strchr("0123456789+-.eE", d->p[end]) && d->p[end]))
        return false;
    if (real) {
        splice(d, start, end - start, "0.5", 3);
        return true;
    }
    if (*n_bigs == cap) return false;
    struct ref_bignum *b = &bigs[*n_bigs];
    size_t n = end - start > 40 ? 40 : end - start;
    memcpy(b->text, d->p + start, n);
    b->text[n] = '\0';
    char num[32];
    for (long long v = 5000000000LL + (long long)*n_bigs;; v += 1000) {
        snprintf(num, sizeof num, "%lld", v);
        if (!contains(body, len, num) && !contains(d->p, d->n, num)) {
            b->stand_in = v;
            break;
        }
    }
    (*n_bigs)++;
    splice(d, start, end - start, num, strlen(num));
    return true;
}

/* Objects and arrays nested at the deepest point (strings skipped). */
static size_t container_depth(const char *p, size_t n) {
    size_t depth = 0, max = 0;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            if (++depth > max) max = depth;
        } else if ((c == '}' || c == ']') && depth) {
            depth--;
        }
    }
    return max;
}

/* A raw NUL byte outside strings right after a number or literal: invalid JSON, but jansson
 * 2.14 drops it (its one-byte pushback treats NUL as "empty" once the byte is pushed back). */
static bool nul_after_token(const char *p, size_t n) {
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        if (in_str) {
            if (p[i] == '\\')
                i++;
            else if (p[i] == '"')
                in_str = false;
        } else if (p[i] == '"') {
            in_str = true;
        } else if (p[i] == '\0' && i > 0 && p[i - 1] &&
                   strchr("0123456789.eE+-aelnrstu", p[i - 1])) {
            return true;
        }
    }
    return false;
}

/* ---- view comparison ---- */

#define SAME_STR(field)                                                                            \
    do {                                                                                           \
        if (!jg_str_eq(a->field, b->field)) {                                                      \
            snprintf(why, cap, "%s%s: \"%.*s\" vs \"%.*s\"", where, #field,                        \
                     (int)(a->field.n > 80 ? 80 : a->field.n), a->field.p ? a->field.p : "",       \
                     (int)(b->field.n > 80 ? 80 : b->field.n), b->field.p ? b->field.p : "");      \
            return false;                                                                          \
        }                                                                                          \
    } while (0)
#define SAME_NUM(field)                                                                            \
    do {                                                                                           \
        if ((long long)(a->field) != (long long)(b->field)) {                                      \
            snprintf(why, cap, "%s%s: %lld vs %lld", where, #field, (long long)(a->field),         \
                     (long long)(b->field));                                                       \
            return false;                                                                          \
        }                                                                                          \
    } while (0)

static bool same_list(const jg_str_list *a, const jg_str_list *b, const char *where, char *why,
                      size_t cap) {
    SAME_NUM(set);
    SAME_NUM(n);
    for (size_t i = 0; i < a->n; i++)
        if (!jg_str_eq(a->items[i], b->items[i])) {
            snprintf(why, cap, "%s[%zu] differs", where, i);
            return false;
        }
    return true;
}

static bool same_job(const struct jg_job *a, const struct jg_job *b, const char *where, char *why,
                     size_t cap) {
    SAME_NUM(present);
    SAME_STR(name);
    SAME_NUM(spec.managed_by.set);
    SAME_STR(spec.managed_by.s);
    SAME_NUM(spec.completions.set);
    SAME_NUM(spec.completions.v);
    SAME_NUM(spec.parallelism.set);
    SAME_NUM(spec.parallelism.v);
    SAME_NUM(spec.backoff_limit_per_index.set);
    SAME_NUM(spec.backoff_limit_per_index.v);
    SAME_NUM(spec.indexed);
    SAME_NUM(spec.suspend);
    SAME_NUM(spec.has_success_policy);
    SAME_NUM(status.cond_true);
    SAME_NUM(status.cond_false);
    SAME_NUM(status.start_time.set);
    SAME_NUM(status.start_time.sec);
    SAME_NUM(status.start_time.nsec);
    SAME_NUM(status.completion_time.set);
    SAME_NUM(status.completion_time.sec);
    SAME_NUM(status.completion_time.nsec);
    SAME_NUM(status.active);
    SAME_NUM(status.succeeded);
    SAME_NUM(status.failed);
    SAME_NUM(status.ready.set);
    SAME_NUM(status.ready.v);
    SAME_NUM(status.terminating.set);
    SAME_NUM(status.terminating.v);
    SAME_STR(status.completed_indexes);
    SAME_NUM(status.failed_indexes.set);
    SAME_STR(status.failed_indexes.s);
    SAME_NUM(status.uncounted_set);
    char w[96];
    snprintf(w, sizeof w, "%suncounted_succeeded", where);
    if (!same_list(&a->status.uncounted_succeeded, &b->status.uncounted_succeeded, w, why, cap))
        return false;
    snprintf(w, sizeof w, "%suncounted_failed", where);
    if (!same_list(&a->status.uncounted_failed, &b->status.uncounted_failed, w, why, cap))
        return false;
    SAME_NUM(n_nested);
    for (size_t i = 0; i < a->n_nested; i++) {
        const struct jg_nested_value *x = &a->nested[i], *y = &b->nested[i];
        /* the field is a C string too: the rules pass it on as a field path */
        bool terminated = x->field.p && x->field.p[x->field.n] == '\0' && y->field.p &&
                          y->field.p[y->field.n] == '\0';
        if (x->which != y->which || !jg_str_eq(x->field, y->field) ||
            !jg_str_eq(x->value, y->value) || !terminated) {
            snprintf(why, cap, "%snested[%zu]: %u %.*s=\"%.*s\"%s vs %u %.*s=\"%.*s\"%s", where, i,
                     x->which, (int)(x->field.n > 120 ? 120 : x->field.n),
                     x->field.p ? x->field.p : "", (int)(x->value.n > 80 ? 80 : x->value.n),
                     x->value.p ? x->value.p : "",
                     x->field.p && x->field.p[x->field.n] ? " (not NUL-terminated)" : "", y->which,
                     (int)(y->field.n > 120 ? 120 : y->field.n), y->field.p ? y->field.p : "",
                     (int)(y->value.n > 80 ? 80 : y->value.n), y->value.p ? y->value.p : "",
                     y->field.p && y->field.p[y->field.n] ? " (not NUL-terminated)" : "");
            return false;
        }
        /* what an UPDATE matches it by: NULL (no key) on both sides, or the same bytes */
        if (!x->match.p != !y->match.p || (x->match.p && !jg_str_eq(x->match, y->match))) {
            snprintf(why, cap, "%snested[%zu].match: %.*s%s vs %.*s%s", where, i,
                     (int)(x->match.n > 120 ? 120 : x->match.n), x->match.p ? x->match.p : "",
                     x->match.p ? "" : "(none)", (int)(y->match.n > 120 ? 120 : y->match.n),
                     y->match.p ? y->match.p : "", y->match.p ? "" : "(none)");
            return false;
        }
    }
    return true;
}

static const char *row_name(const struct jg_policy_target *t, char *buf, size_t cap) {
    if (!t) return "(none)";
    snprintf(buf, cap, "%s/%s %s (%p)", t->group, t->versions.n ? t->versions.v[0] : "", t->kind,
             (const void *)t);
    return buf;
}

static bool status_changed(const struct jg_request *q) {
    const jg_opt_str *a = &q->object.status_json, *b = &q->old_object.status_json;
    return a->set != b->set || (a->set && !jg_str_eq(a->s, b->s));
}

static bool same_request(const struct jg_request *a, const struct jg_request *b, char *why,
                         size_t cap) {
    const char *where = "request.";
    SAME_NUM(api_version);
    SAME_STR(uid);
    SAME_NUM(operation);
    SAME_STR(group);
    SAME_STR(version);
    SAME_STR(resource);
    SAME_STR(sub_resource);
    SAME_NUM(target);
    if (a->row != b->row) { /* the same table entry: a built-in row or the policy's own */
        char x[200], y[200];
        snprintf(why, cap, "%srow: %s vs %s", where, row_name(a->row, x, sizeof x),
                 row_name(b->row, y, sizeof y));
        return false;
    }
    SAME_STR(name);
    SAME_STR(namespace_);
    SAME_STR(username);
    SAME_NUM(dry_run);
    if (!same_list(&a->groups, &b->groups, "request.groups", why, cap)) return false;
    /* RD_EX_STATUS_BYTES: equal bytes are equal values, not always the other way round */
    if (status_changed(b) && !status_changed(a)) {
        snprintf(why, cap, "the reference sees status change, the scanner does not");
        return false;
    }
    return same_job(&a->object, &b->object, "object.", why, cap) &&
           same_job(&a->old_object, &b->old_object, "oldObject.", why, cap);
}

/* ---- the check ---- */

/* The bytes jg_admit sends for a decoded review or a 400, built from one side's result. */
static void respond(const jg_review *r, enum jg_decode_status st, const char *msg,
                    const struct jg_config *cfg, jg_buf *out) {
    if (st == JG_DECODE_OK)
        jg_admit_review(r, cfg, out, NULL);
    else
        jg_encode_error(out, r->req.api_version, r->req.uid, 400, "BadRequest", msg);
}

static const char *ref_name(enum ref_status s) {
    static const char *const n[] = {"decoded", "400", "duplicate key", "not JSON"};
    return n[s];
}

static void compare(const char *body, size_t len, const struct jg_config *cfg, const jg_review *sr,
                    enum jg_decode_status sst, const jg_decode_error *se, struct refdiff *out) {
    enum scan_class sc = classify(sst, se->message);
    if (sc == S_OOM) {
        differ(out, "scanner: out of memory");
        return;
    }
    jg_buf s_resp = JG_BUF_INIT, direct = JG_BUF_INIT, r_resp = JG_BUF_INIT;
    respond(sr, sst, se->message, cfg, &s_resp);
    jg_admit(body, len, cfg, &direct, NULL); /* the split path is jg_admit's own */
    if (direct.len != s_resp.len || memcmp(direct.data, s_resp.data, direct.len) != 0) {
        differ(out, "jg_admit and decode+jg_admit_review answer differently");
        goto done_s;
    }
    if (nul_after_token(body, len)) { /* jansson is not asked: the scanner must refuse */
        out->exceptions |= RD_EX_NUL_BYTE;
        if (sc == S_SYNTAX)
            out->kind = RD_BOTH_INVALID;
        else
            differ(out, "a raw NUL byte outside strings, yet the scanner did not refuse it");
        goto done_s;
    }

    struct doc d = {malloc(len + 1), len};
    if (!d.p) abort();
    memcpy(d.p, body, len);
    d.p[len] = '\0';
    struct ref_bignum bigs[32];
    struct ref_options opt = {choose_marker(body, len), bigs, 0, cfg->policy};
    struct ref_review rr;
    struct ref_result res;
    enum ref_status rst;
    for (int round = 0;; round++) {
        rst = ref_decode_review(d.p, d.n, &opt, &rr, &res);
        if (rst != REF_NOT_JSON || round == 100000) break;
        size_t pos = (size_t)res.json_error.position;
        bool fixed = false;
        switch (json_error_code(&res.json_error)) {
        case json_error_duplicate_key:
            fixed = mark_repeat(&d, pos, opt.marker);
            out->exceptions |= fixed ? RD_EX_DUPLICATE : 0;
            break;
        case json_error_null_byte_in_key:
            fixed = rewrite_nul_key(&d, pos);
            out->exceptions |= fixed ? RD_EX_NUL_KEY : 0;
            break;
        case json_error_numeric_overflow:
            fixed = rewrite_number(&d, pos, body, len, bigs, &opt.n_bignums, 32);
            out->exceptions |= fixed ? RD_EX_BIGNUM : 0;
            break;
        default:
            break;
        }
        if (!fixed) break;
        ref_review_free(&rr);
    }

    if (rst == REF_NOT_JSON) {
        bool deep = json_error_code(&res.json_error) == json_error_stack_overflow;
        if (sc == S_SYNTAX) {
            out->kind = RD_BOTH_INVALID;
            out->exceptions |= deep ? RD_EX_DEPTH : 0;
        } else if (deep && container_depth(body, len) == JG_MAX_JSON_DEPTH) {
            out->kind = RD_DEPTH_2048;
            out->exceptions |= RD_EX_DEPTH;
        } else {
            differ(out, "jansson refused it (%s, byte %d) but the scanner did not: %s",
                   res.json_error.text, res.json_error.position,
                   sst == JG_DECODE_OK ? "decoded" : se->message);
        }
        goto done;
    }
    if (sc == S_SYNTAX) {
        differ(out, "the scanner refused it as JSON (%s) but jansson did not (reference: %s %s)",
               se->message, ref_name(rst), res.message);
        goto done;
    }
    const struct jg_request *a = &sr->req, *b = &rr.review.req;
    bool same_echo = a->api_version == b->api_version && jg_str_eq(a->uid, b->uid);
    if (sc == S_DUP && rst == REF_DUPLICATE) {
        if (same_echo)
            out->kind = RD_SAME_DUPLICATE;
        else
            differ(out, "repeated key: uid or apiVersion echoed differently");
        goto done;
    }
    if (sc == S_BAD && rst == REF_BAD_REQUEST) {
        if (strcmp(se->message, res.message) != 0) {
            differ(out, "different 400s:\n  scanner:   %s\n  reference: %s", se->message,
                   res.message);
            goto done;
        }
        respond(&rr.review, JG_DECODE_BAD_REQUEST, res.message, cfg, &r_resp);
    } else if (sc == S_OK && rst == REF_OK) {
        char why[600];
        if (!same_request(a, b, why, sizeof why)) {
            differ(out, "different views: %s", why);
            goto done;
        }
        if (status_changed(a) != status_changed(b)) { /* the same status spelled two ways */
            out->exceptions |= RD_EX_STATUS_BYTES;
            rr.review.req.object.status_json = a->object.status_json;
            rr.review.req.old_object.status_json = a->old_object.status_json;
        }
        respond(&rr.review, JG_DECODE_OK, NULL, cfg, &r_resp);
    } else {
        differ(out, "scanner: %s; reference: %s %s", sst == JG_DECODE_OK ? "decoded" : se->message,
               ref_name(rst), res.message);
        goto done;
    }
    if (r_resp.len != s_resp.len || memcmp(r_resp.data, s_resp.data, s_resp.len) != 0) {
        differ(out, "different responses:\n  scanner:   %.400s\n  reference: %.400s", s_resp.data,
               r_resp.data);
        goto done;
    }
    out->kind = sc == S_OK ? RD_SAME_VIEW : RD_SAME_REFUSAL;
done:
    ref_review_free(&rr);
    free(d.p);
done_s:
    jg_buf_free(&s_resp);
    jg_buf_free(&direct);
    jg_buf_free(&r_resp);
}

void refdiff_run(const char *body, size_t len, const struct jg_config *cfg, struct refdiff *out) {
    memset(out, 0, sizeof *out);
    jg_review sr;
    jg_decode_error se;
    enum jg_decode_status sst = jg_decode_review_policy(body, len, cfg->policy, &sr, &se);
    compare(body, len, cfg, &sr, sst, &se, out);
    jg_review_free(&sr);
}

const struct jg_policy *refdiff_test_policy(void) {
    static const char json[] =
        "{\"targets\":["
        "{\"group\":\"jobset.x-k8s.io\",\"versions\":[\"v1alpha2\"],\"kind\":\"JobSet\","
        "\"resource\":\"jobsets\",\"managedByPath\":\"spec.managedBy\","
        "\"reservedValue\":\"jobset.sigs.k8s.io/jobset-controller\",\"nestedPaths\":["
        "{\"path\":\"spec.replicatedJobs[*].template.spec.managedBy\",\"reservedValue\":\"\","
        "\"listKeys\":[\"name\"]},"
        "{\"path\":\"spec.replicatedJobs[*].template.metadata.name\",\"reservedValue\":\"\","
        "\"listKeys\":[\"name\"]},"
        "{\"path\":\"spec.groups[*].members[*].managedBy\",\"reservedValue\":\"\","
        "\"listKeys\":[\"id\",\"\"]},"
        "{\"path\":\"managedBy\",\"reservedValue\":\"\"}]},"
        "{\"group\":\"example.com\",\"versions\":[\"v1\"],\"kind\":\"Widget\","
        "\"resource\":\"widgets\",\"managedByPath\":\"metadata.name\","
        "\"reservedValue\":\"example.com/widget\"},"
        "{\"group\":\"ray.io\",\"versions\":[\"v2\"],\"kind\":\"RayJobX\","
        "\"resource\":\"rayjobs\",\"managedByPath\":\"spec.x[*].y\","
        "\"reservedValue\":\"ray.io/kuberay-operator\"},"
        "{\"group\":\"example.com\",\"versions\":[\"v1\"],\"kind\":\"Gadget\","
        "\"resource\":\"gadgets\",\"managedByPath\":\"kind\","
        "\"reservedValue\":\"example.com/gadget\","
        "\"nestedPaths\":[{\"path\":\"metadata.name\",\"reservedValue\":\"\"}]},"
        "{\"group\":\"kubeflow.org\",\"versions\":[\"v3\"],\"kind\":\"MPIJob\","
        "\"resource\":\"mpijobs\",\"managedByPath\":\"spec.runPolicy.managedBy\","
        "\"reservedValue\":\"kubeflow.org/mpi-operator\"}]}";
    static struct jg_policy *p;
    if (!p) {
        char err[512];
        p = jg_policy_load_buffer("refdiff-test-policy", json, sizeof json - 1, err, sizeof err);
        if (!p) {
            fprintf(stderr, "refdiff_test_policy: %s\n", err);
            abort();
        }
    }
    return p;
}

const char *refdiff_kind_name(enum refdiff_kind k) {
    static const char *const n[] = {"DIFFER",         "same view",     "same 400",
                                    "same duplicate", "both not JSON", "2048 deep"};
    return n[k];
}
