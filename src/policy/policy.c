/* policy: reads the policy file (docs/policy.md) with jansson into an immutable snapshot. Every
 * key and type is checked; the first problem found is reported as
 *   <file>:<line>:<column>: <jansson's text>        (the bytes are not valid JSON)
 *   <file>: <JSON path>: <what is wrong>            (valid JSON, invalid policy)
 * jansson keeps no positions for parsed values, so semantic errors are located by JSON path. */
#include "jobguard/policy.h"
#include "jobguard/reader.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobguard/names.h"
#include "jobguard/readfile.h"
#include "jobguard/targets.h"
#include "jobguard/verdict.h"

/* Limits (docs/policy.md "Limits"): far above any real policy, low enough that a mistaken or
 * hostile file cannot make a reload slow or large. */
#define MAX_FILE_BYTES (1u << 20) /* the file: a ConfigMap holds at most 1 MiB */
#define MAX_TARGETS 64            /* rows in "targets" */
#define MAX_VERSIONS 16           /* "versions" of one row */
#define MAX_NESTED 16             /* "nestedPaths" of one row */
#define MAX_CONTROLLERS 1024      /* rows in "controllers" */
#define MAX_LIST 1024             /* namespaces, users, groups, statusWriterExemptGroups */
#define MAX_NAME 253              /* group, namespace glob, reservedValue, controller name */
#define MAX_LABEL 63              /* kind, resource, version: DNS label length */
#define MAX_IDENTITY 512          /* a user or group name ("system:serviceaccount:NS:NAME") */
#define MAX_PATH 256              /* a managedByPath or nested path */
#define MAX_PATH_SEGMENTS 16      /* fields in one path */
/* Tokens (a character, '?', a bracket expression, a run of '*') of all namespace globs that are
 * not a name, "abc*", "*abc" or "*": a refused request runs each of them against its namespace,
 * at most 64 steps per token (docs/policy.md "Limits"). */
#define MAX_GLOB_TOKENS 16384

struct ctx {
    const char *name; /* the file, as the user named it */
    char *err;
    size_t cap;
    size_t glob_tokens; /* of the general globs read so far (MAX_GLOB_TOKENS) */
};

/* Sets the one-line error: control bytes (a "\n" in a value or a key) are written as \n, \t or
 * \xNN, so the message stays one line in a terminal and in a text log. */
static void set_err(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t cap, const char *fmt, ...) {
    char raw[2048];
    va_list ap;
    va_start(ap, fmt);
    jg_vformat_cut(raw, sizeof raw, fmt, ap);
    va_end(ap);
    char line[4 * sizeof raw]; /* a byte is at most 4 escaped; err's cap cuts it, marked */
    size_t o = 0;
    for (const unsigned char *r = (const unsigned char *)raw; *r; r++) {
        if (*r == '\n' || *r == '\t') {
            line[o++] = '\\';
            line[o++] = *r == '\n' ? 'n' : 't';
        } else if (*r < 0x20 || *r == 0x7f) {
            o += (size_t)snprintf(line + o, sizeof line - o, "\\x%02x", *r);
        } else {
            line[o++] = (char)*r;
        }
    }
    jg_copy_cut(err, cap, line, o);
}

static bool fail(struct ctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail(struct ctx *c, const char *path, const char *fmt, ...) {
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    set_err(c->err, c->cap, "%s: %s: %s", c->name, path, what);
    return false;
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
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

/* `parent.key` or `parent[i]` into out; a path longer than out (only an unknown key can make
 * one) is cut, which only shortens the message. */
static void child_key(char *out, size_t n, const char *parent, const char *key) {
    if (snprintf(out, n, "%s%s%s", parent, parent[0] ? "." : "", key) >= (int)n) out[n - 1] = 0;
}
static void child_index(char *out, size_t n, const char *parent, size_t i) {
    if (snprintf(out, n, "%s[%zu]", parent, i) >= (int)n) out[n - 1] = 0;
}

/* The object's keys are all in `allowed` (NULL-terminated). */
static bool check_keys(struct ctx *c, const json_t *obj, const char *path,
                       const char *const allowed[]) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        bool known = false;
        for (size_t i = 0; allowed[i] && !known; i++)
            known = strcmp(key, allowed[i]) == 0;
        if (!known) {
            char list[256] = "";
            for (size_t i = 0; allowed[i]; i++) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, "%s\"%s\"", i ? ", " : "", allowed[i]);
            }
            char p[MAX_PATH * 2];
            child_key(p, sizeof p, path, key);
            return fail(c, p, "unknown key (allowed here: %s)", list);
        }
    }
    return true;
}

static bool want_type(struct ctx *c, const json_t *v, json_type t, const char *what,
                      const char *path) {
    if (json_typeof(v) == t || (t == JSON_TRUE && json_is_boolean(v))) return true;
    return fail(c, path, "must be %s, not %s", what, type_name(v));
}

static char *dup_str(struct ctx *c, const char *s, const char *path) {
    char *d = strdup(s);
    if (!d) fail(c, path, "out of memory");
    return d;
}

/* A string member: required or optional (absent: *out untouched, true). Checks non-empty and
 * at most max bytes. */
static bool get_string(struct ctx *c, const json_t *obj, const char *key, const char *path,
                       bool required, bool allow_empty, size_t max, const json_t **out) {
    char p[MAX_PATH * 2];
    child_key(p, sizeof p, path, key);
    const json_t *v = json_object_get(obj, key);
    if (!v) return required ? fail(c, p, "required key is missing") : true;
    if (!want_type(c, v, JSON_STRING, "a string", p)) return false;
    size_t n = json_string_length(v);
    if (n == 0 && !allow_empty) return fail(c, p, "must not be empty");
    if (n > max) return fail(c, p, "is %zu bytes long, more than the limit of %zu", n, max);
    *out = v;
    return true;
}

static bool get_bool(struct ctx *c, const json_t *obj, const char *key, const char *path,
                     bool *out) {
    char p[MAX_PATH * 2];
    child_key(p, sizeof p, path, key);
    const json_t *v = json_object_get(obj, key);
    if (!v) return true;
    if (!want_type(c, v, JSON_TRUE, "true or false", p)) return false;
    *out = json_is_true(v);
    return true;
}

/* An array member (absent: *out = NULL), at most max elements. */
static bool get_array(struct ctx *c, const json_t *obj, const char *key, const char *path,
                      size_t max, const json_t **out) {
    char p[MAX_PATH * 2];
    child_key(p, sizeof p, path, key);
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v) return true;
    if (!want_type(c, v, JSON_ARRAY, "an array", p)) return false;
    if (json_array_size(v) > max)
        return fail(c, p, "has %zu elements, more than the limit of %zu", json_array_size(v), max);
    *out = v;
    return true;
}

typedef bool (*str_check)(struct ctx *c, const char *s, const char *path);

/* An array of unique strings into v, each checked by `check` (NULL: any non-empty string). */
static bool get_strv(struct ctx *c, const json_t *arr, const char *path, size_t max_len,
                     str_check check, struct jg_strv *v) {
    size_t n = json_array_size(arr);
    v->v = calloc(n ? n : 1, sizeof *v->v);
    if (!v->v) return fail(c, path, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char p[MAX_PATH * 2];
        child_index(p, sizeof p, path, i);
        const json_t *e = json_array_get(arr, i);
        if (!want_type(c, e, JSON_STRING, "a string", p)) return false;
        const char *s = json_string_value(e);
        size_t len = json_string_length(e);
        if (len == 0) return fail(c, p, "must not be empty");
        if (len > max_len)
            return fail(c, p, "is %zu bytes long, more than the limit of %zu", len, max_len);
        if (check && !check(c, s, p)) return false;
        for (size_t j = 0; j < v->n; j++)
            if (strcmp(v->v[j], s) == 0)
                return fail(c, p, "duplicate value \"%s\" (also at index %zu)", s, j);
        if (!(v->v[v->n] = dup_str(c, s, p))) return false;
        v->n++;
    }
    return true;
}

/* --- value syntaxes --- */

static bool is_dns_label(const char *s) {
    size_t n = strlen(s);
    return n <= MAX_LABEL && strchr(s, '.') == NULL && jg_is_dns1123_subdomain((jg_str){s, n});
}

static bool check_version(struct ctx *c, const char *s, const char *path) {
    if (is_dns_label(s)) return true;
    return fail(c, path,
                "\"%s\" is not an API version (a lowercase RFC 1123 label such as \"v1\" or "
                "\"v2beta1\")",
                s);
}

/* What is wrong with a managedBy value, in Kubernetes' own messages joined by "; ", into `what`
 * ("" when nothing is). false: out of memory. */
static bool managed_by_problems(const char *s, const char *path, char *what, size_t cap) {
    struct jg_errors e;
    jg_errors_init(&e);
    jg_check_managed_by((jg_str){s, strlen(s)}, path, &e);
    what[0] = '\0';
    for (size_t i = 0; i < e.n; i++) {
        jg_str b = jg_err_body(&e, i);
        size_t l = strlen(what);
        snprintf(what + l, cap - l, "%s%.*s", i ? "; " : "", (int)b.n, b.p);
    }
    bool ok = !e.oom;
    jg_errors_free(&e);
    return ok;
}

/* A managedBy value, with Kubernetes' own message for what is wrong with it. */
static bool check_managed_by_value(struct ctx *c, const char *s, const char *path) {
    char what[600];
    if (!managed_by_problems(s, path, what, sizeof what)) return fail(c, path, "out of memory");
    return what[0] ? fail(c, path, "%s", what) : true;
}

/* Whether some row in effect (the file's rows read so far, the built-in rows they do not replace)
 * leaves managedBy's format unchecked: only there can a value that fails the format be set. */
static bool some_row_free_form(const struct jg_policy *pol) {
    for (size_t i = 0; i < pol->n_targets; i++)
        if (!pol->targets[i].check_format) return true;
    for (size_t i = 0; i < jg_builtin_target_count; i++)
        if (!jg_builtin_targets[i].check_format && !jg_target_builtin_replaced(pol, i)) return true;
    return false;
}

/* How many kinds a refusal of a status binding names (read_controller): the built-in table has at
 * most 6 rows per reserved value (the Kubeflow kinds). */
#define MAX_KINDS_NAMED 8

/* "Kind.group" ("Kind" for the core group) of row t after a ", " unless it is the first. */
static void put_row_kind(char *out, size_t cap, size_t *len, const struct jg_policy_target *t) {
    int n = snprintf(out + *len, cap - *len, "%s%s%s%s", *len ? ", " : "", t->kind,
                     t->group[0] ? "." : "", t->group);
    *len = n < 0 || (size_t)n >= cap - *len ? cap - 1 : *len + (size_t)n;
}

/* The rows in effect (the file's rows read so far, the built-in rows they do not replace) whose
 * reservedValue is `name`, listed into `out` (at most MAX_KINDS_NAMED, then "and N more").
 * Returns how many there are. */
static size_t rows_reserving(const struct jg_policy *pol, const char *name, char *out, size_t cap) {
    size_t n = 0, len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < jg_builtin_target_count + pol->n_targets; i++) {
        bool builtin = i < jg_builtin_target_count;
        const struct jg_policy_target *t =
            builtin ? &jg_builtin_targets[i] : &pol->targets[i - jg_builtin_target_count];
        if ((builtin && jg_target_builtin_replaced(pol, i)) || strcmp(t->reserved_value, name))
            continue;
        if (n++ < MAX_KINDS_NAMED) put_row_kind(out, cap, &len, t);
    }
    if (n > MAX_KINDS_NAMED) snprintf(out + len, cap - len, " and %zu more", n - MAX_KINDS_NAMED);
    return n;
}

/* fnmatch(3) glob over namespace names: [a-z0-9-] plus * and ?, and bracket expressions
 * [...] / [!...] of those characters. */
static bool check_namespace_glob(struct ctx *c, const char *s, const char *path) {
    static const char hint[] = "(namespace characters a-z, 0-9 and '-', with the glob operators "
                               "*, ? and [...] / [!...])";
    for (size_t i = 0; s[i]; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '[') {
            size_t j = i + 1;
            if (s[j] == '!') j++;
            size_t first = j;
            for (; s[j] && s[j] != ']'; j++) {
                unsigned char b = (unsigned char)s[j];
                if (!((b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '-'))
                    return fail(c, path,
                                "\"%s\": character '%c' at byte %zu is not allowed in "
                                "a bracket expression %s",
                                s, b, j, hint);
            }
            if (!s[j]) return fail(c, path, "\"%s\": '[' at byte %zu is not closed %s", s, i, hint);
            if (j == first)
                return fail(c, path, "\"%s\": empty bracket expression at byte %zu %s", s, i, hint);
            i = j;
        } else if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
                     ch == '*' || ch == '?')) {
            if (ch >= 0x20 && ch < 0x7f)
                return fail(c, path, "\"%s\": character '%c' at byte %zu is not allowed %s", s, ch,
                            i, hint);
            return fail(c, path, "byte 0x%02x at byte %zu is not allowed %s", ch, i, hint);
        }
    }
    struct jg_glob g;
    size_t min_len, tokens;
    bool ok = jg_glob_compile(&g, s, &min_len, &tokens);
    jg_glob_free(&g);
    if (!ok) return fail(c, path, "out of memory");
    if (min_len > MAX_LABEL)
        return fail(c, path,
                    "\"%s\" matches no namespace: it needs at least %zu characters and a "
                    "namespace has at most %d",
                    s, min_len, MAX_LABEL);
    c->glob_tokens += tokens;
    if (c->glob_tokens > MAX_GLOB_TOKENS)
        return fail(c, path,
                    "\"%s\": the namespace globs that are not a name, \"abc*\", \"*abc\" or "
                    "\"*\" have %zu tokens up to here, more than the limit of %d (a character, "
                    "'?', a bracket expression or a run of '*' is one token)",
                    s, c->glob_tokens, MAX_GLOB_TOKENS);
    return true;
}

/* Field paths (docs/policy.md "Field paths"):
 *   path    = segment *( "." segment )
 *   segment = name [ "[*]" ]          ; [*]: every element of a list
 *   name    = ( ALPHA / "_" ) *( ALPHA / DIGIT / "_" / "-" )
 * The last segment names the string field, so it has no [*]. */
static bool check_field_path(struct ctx *c, const char *s, const char *path) {
    static const char grammar[] = "(field names [A-Za-z_][A-Za-z0-9_-]* joined by '.', each "
                                  "optionally followed by [*] for every list element, e.g. "
                                  "spec.replicatedJobs[*].template.spec.managedBy)";
    size_t segments = 0, i = 0;
    for (;;) {
        size_t start = i;
        char ch = s[i];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_'))
            return fail(c, path,
                        "\"%s\" is not a field path: a field name must start at byte %zu %s", s,
                        start, grammar);
        while ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
               (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-')
            i++;
        if (++segments > MAX_PATH_SEGMENTS)
            return fail(c, path, "\"%s\" has more than %d fields", s, MAX_PATH_SEGMENTS);
        bool list = JG_STARTS_WITH(s + i, "[*]");
        if (list) i += JG_LIT_LEN("[*]");
        if (s[i] == '\0') {
            if (list)
                return fail(c, path,
                            "\"%s\" is not a field path: it must end with the string field, not "
                            "[*] %s",
                            s, grammar);
            return true;
        }
        if (s[i] != '.')
            return fail(c, path, "\"%s\" is not a field path: unexpected '%c' at byte %zu %s", s,
                        s[i], i, grammar);
        i++;
    }
}

/* "[*]" in a field path: its lists, outermost first. */
static size_t path_lists(const char *s) {
    size_t n = 0;
    for (const char *q = s; (q = strstr(q, "[*]")) != NULL; q += 3)
        n++;
    return n;
}

/* A nested path's "listKeys": one entry per "[*]" of the path, outermost first, each the field
 * keying that list's elements (its listMapKey) or "" for a list matched by index. */
static bool read_list_keys(struct ctx *c, const json_t *arr, const char *path, const char *ps,
                           struct jg_policy_nested *nd) {
    size_t n = json_array_size(arr), lists = path_lists(ps);
    if (n != lists)
        return fail(c, path,
                    "has %zu entries, but \"%s\" has %zu list%s ([*]): give one key per list, "
                    "\"\" for a list matched by index",
                    n, ps, lists, lists == 1 ? "" : "s");
    nd->list_keys.v = calloc(n ? n : 1, sizeof *nd->list_keys.v);
    if (!nd->list_keys.v) return fail(c, path, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char p[MAX_PATH * 2];
        child_index(p, sizeof p, path, i);
        const json_t *e = json_array_get(arr, i);
        if (!want_type(c, e, JSON_STRING, "a string", p)) return false;
        const char *k = json_string_value(e);
        size_t len = json_string_length(e);
        if (len > MAX_LABEL)
            return fail(c, p, "is %zu bytes long, more than the limit of %d", len, MAX_LABEL);
        bool name =
            len == 0 || (k[0] >= 'A' && k[0] <= 'Z') || (k[0] >= 'a' && k[0] <= 'z') || k[0] == '_';
        for (size_t j = 1; name && j < len; j++)
            name = (k[j] >= 'A' && k[j] <= 'Z') || (k[j] >= 'a' && k[j] <= 'z') ||
                   (k[j] >= '0' && k[j] <= '9') || k[j] == '_' || k[j] == '-';
        if (!name || strlen(k) != len)
            return fail(c, p,
                        "\"%s\" is not a field name ([A-Za-z_][A-Za-z0-9_-]*, or \"\" for a "
                        "list matched by index)",
                        k);
        if (!(nd->list_keys.v[i] = dup_str(c, k, p))) return false;
        nd->list_keys.n++;
    }
    return true;
}

/* --- sections --- */

static bool read_nested(struct ctx *c, const json_t *arr, const char *path, bool check_format,
                        const char *main_path, struct jg_policy_target *t) {
    static const char *const keys[] = {"path", "reservedValue", "listKeys", NULL};
    size_t n = json_array_size(arr);
    t->nested = calloc(n ? n : 1, sizeof *t->nested);
    if (!t->nested) return fail(c, path, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char p[MAX_PATH * 2];
        child_index(p, sizeof p, path, i);
        const json_t *o = json_array_get(arr, i), *jp = NULL, *jr = NULL, *jk = NULL;
        if (!want_type(c, o, JSON_OBJECT, "an object", p) || !check_keys(c, o, p, keys) ||
            !get_string(c, o, "path", p, true, false, MAX_PATH, &jp) ||
            !get_string(c, o, "reservedValue", p, true, true, MAX_NAME, &jr) ||
            !get_array(c, o, "listKeys", p, MAX_PATH_SEGMENTS, &jk))
            return false;
        char pp[MAX_PATH * 2];
        child_key(pp, sizeof pp, p, "path");
        const char *ps = json_string_value(jp), *rs = json_string_value(jr);
        if (!check_field_path(c, ps, pp)) return false;
        if (strcmp(ps, main_path) == 0) return fail(c, pp, "\"%s\" is the row's managedByPath", ps);
        for (size_t j = 0; j < t->n_nested; j++)
            if (strcmp(t->nested[j].path, ps) == 0)
                return fail(c, pp, "duplicate path \"%s\" (also at index %zu)", ps, j);
        char rp[MAX_PATH * 2];
        child_key(rp, sizeof rp, p, "reservedValue");
        if (rs[0] && check_format && !check_managed_by_value(c, rs, rp)) return false;
        struct jg_policy_nested *nd = &t->nested[t->n_nested];
        t->n_nested++; /* freed with the row from here on */
        if (!(nd->path = dup_str(c, ps, pp)) || !(nd->reserved_value = dup_str(c, rs, rp)))
            return false;
        char kp[MAX_PATH * 2];
        child_key(kp, sizeof kp, p, "listKeys");
        if (jk && !read_list_keys(c, jk, kp, ps, nd)) return false;
    }
    return true;
}

/* One segment of a field path: its name's length and what follows (0: end, '.': an object,
 * '[': a list). */
static size_t path_seg(const char *s, char *next) {
    size_t n = strcspn(s, ".[");
    *next = s[n];
    return n;
}

/* Whether paths a and b disagree on the shape of a field they share (a string in one, an object
 * or a list in the other): the decoder reads all of a row's paths in one walk. */
static bool paths_conflict(const char *a, const char *b, size_t *at) {
    const char *a0 = a;
    for (;;) {
        char na, nb;
        size_t la = path_seg(a, &na), lb = path_seg(b, &nb);
        if (la != lb || memcmp(a, b, la) != 0) return false;
        if (na != nb) {
            *at = (size_t)(a - a0) + la;
            return true;
        }
        if (na == '\0') return false;
        a += la + (na == '.' ? 1 : 4);
        b += lb + (nb == '.' ? 1 : 4);
    }
}

/* The key nested path i gives its list number k ("" = by index, also when it names none). */
static const char *list_key_of(const struct jg_policy_target *t, size_t i, size_t k) {
    const struct jg_strv *v = &t->nested[i].list_keys;
    return k < v->n ? v->v[k] : "";
}

/* The list keys of the row's nested paths: the paths through one list must give it the same key
 * (the decoder reads each element once for all of them), and no path may read the key field
 * itself inside the element (the key is a string the decoder reads on its own). */
static bool check_list_keys(struct ctx *c, const struct jg_policy_target *t,
                            const char *const *paths, size_t n, const char *p) {
    for (size_t i = 0; i < t->n_nested; i++) {
        const char *ps = t->nested[i].path, *q = ps;
        for (size_t k = 0; (q = strstr(q, "[*]")) != NULL; k++) {
            q += 3;
            size_t plen = (size_t)(q - ps); /* "spec.a[*]" */
            const char *key = list_key_of(t, i, k);
            for (size_t j = 0; j < n; j++) {
                if (strncmp(paths[j], ps, plen) != 0 || paths[j][plen] != '.') continue;
                const char *next = paths[j] + plen + 1;
                size_t nl = strcspn(next, ".[");
                if (key[0] && strlen(key) == nl && strncmp(next, key, nl) == 0)
                    return fail(c, p,
                                "list key \"%s\" of \"%.*s\" is a field the path \"%s\" reads "
                                "in the element; a list key is a string of its own",
                                key, (int)plen, ps, paths[j]);
                size_t nj = j - 2; /* paths[2 + i] is nestedPaths[i] */
                if (j >= 2 && strcmp(list_key_of(t, nj, k), key) != 0)
                    return fail(c, p,
                                "nested paths \"%s\" and \"%s\" give the list \"%.*s\" "
                                "different keys (\"%s\" and \"%s\")",
                                ps, paths[j], (int)plen, ps, key, list_key_of(t, nj, k));
            }
        }
    }
    return true;
}

/* The row's paths (metadata.name, which the decoder reads too, managedByPath, nestedPaths) must
 * agree on every field they share, and on the keys of the lists they share. */
static bool check_row_paths(struct ctx *c, const struct jg_policy_target *t, const char *p) {
    const char *paths[2 + MAX_NESTED];
    size_t n = 0;
    paths[n++] = "metadata.name";
    paths[n++] = t->managed_by_path;
    for (size_t i = 0; i < t->n_nested; i++)
        paths[n++] = t->nested[i].path;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            size_t at;
            if (paths_conflict(paths[i], paths[j], &at))
                return fail(c, p,
                            "paths \"%s\" and \"%s\" disagree on what \"%.*s\" is (a string, "
                            "an object or a list)",
                            paths[i], paths[j], (int)at, paths[i]);
        }
    return check_list_keys(c, t, paths, n, p);
}

static bool read_target(struct ctx *c, const json_t *o, const char *p, struct jg_policy *pol,
                        struct jg_policy_target *t) {
    static const char *const keys[] = {"group",       "versions",      "kind",
                                       "resource",    "managedByPath", "reservedValue",
                                       "nestedPaths", "checkFormat",   "delegationSupported",
                                       NULL};
    const json_t *group = NULL, *kind = NULL, *res = NULL, *mbp = NULL, *rv = NULL, *vers = NULL,
                 *nested = NULL;
    char sub[MAX_PATH * 2];
    t->check_format = true;
    t->delegation_supported = true;
    if (!want_type(c, o, JSON_OBJECT, "an object", p) || !check_keys(c, o, p, keys) ||
        !get_string(c, o, "group", p, true, true, MAX_NAME, &group) ||
        !get_string(c, o, "kind", p, true, false, MAX_LABEL, &kind) ||
        !get_string(c, o, "resource", p, true, false, MAX_LABEL, &res) ||
        !get_string(c, o, "managedByPath", p, true, false, MAX_PATH, &mbp) ||
        !get_string(c, o, "reservedValue", p, true, false, MAX_NAME, &rv) ||
        !get_bool(c, o, "checkFormat", p, &t->check_format) ||
        !get_bool(c, o, "delegationSupported", p, &t->delegation_supported) ||
        !get_array(c, o, "versions", p, MAX_VERSIONS, &vers) ||
        !get_array(c, o, "nestedPaths", p, MAX_NESTED, &nested))
        return false;
    const char *gs = json_string_value(group), *ks = json_string_value(kind),
               *rs = json_string_value(res), *ms = json_string_value(mbp),
               *vs = json_string_value(rv);
    child_key(sub, sizeof sub, p, "group");
    if (gs[0] && !jg_is_dns1123_subdomain((jg_str){gs, strlen(gs)}))
        return fail(c, sub,
                    "\"%s\" is not an API group (\"\" for the core group, or a lowercase RFC "
                    "1123 subdomain such as \"jobset.x-k8s.io\")",
                    gs);
    child_key(sub, sizeof sub, p, "kind");
    bool camel = ks[0] >= 'A' && ks[0] <= 'Z';
    for (size_t i = 1; camel && ks[i]; i++)
        camel = (ks[i] >= 'A' && ks[i] <= 'Z') || (ks[i] >= 'a' && ks[i] <= 'z') ||
                (ks[i] >= '0' && ks[i] <= '9');
    if (!camel)
        return fail(c, sub,
                    "\"%s\" is not a kind (an upper-case letter, then letters and digits, such "
                    "as \"JobSet\")",
                    ks);
    if (strcmp(gs, "batch") == 0 && (strcmp(ks, "Job") == 0 || strcmp(ks, "CronJob") == 0))
        return fail(c, sub,
                    "batch %s is the API server's own kind: its rules are Kubernetes' and its "
                    "row cannot be replaced",
                    ks);
    child_key(sub, sizeof sub, p, "resource");
    if (!is_dns_label(rs))
        return fail(c, sub,
                    "\"%s\" is not a resource (the plural, a lowercase RFC 1123 label such as "
                    "\"jobsets\")",
                    rs);
    child_key(sub, sizeof sub, p, "versions");
    if (!vers) return fail(c, sub, "required key is missing");
    if (json_array_size(vers) == 0) return fail(c, sub, "must list at least one version");
    if (!get_strv(c, vers, sub, MAX_LABEL, check_version, &t->versions)) return false;
    child_key(sub, sizeof sub, p, "managedByPath");
    if (!check_field_path(c, ms, sub)) return false;
    child_key(sub, sizeof sub, p, "reservedValue");
    if (t->check_format && !check_managed_by_value(c, vs, sub)) return false;
    for (size_t j = 0; j < (size_t)(t - pol->targets); j++) { /* the rows before this one */
        const struct jg_policy_target *u = &pol->targets[j];
        if (strcmp(u->group, gs) == 0 && strcmp(u->kind, ks) == 0)
            return fail(c, p,
                        "a second row for kind %s of group \"%s\" (the first is targets[%zu])", ks,
                        gs, j);
        if (strcmp(u->group, gs) == 0 && strcmp(u->resource, rs) == 0)
            return fail(c, p,
                        "a second row for resource %s of group \"%s\" (the first is targets[%zu])",
                        rs, gs, j);
    }
    if (!(t->group = dup_str(c, gs, p)) || !(t->kind = dup_str(c, ks, p)) ||
        !(t->resource = dup_str(c, rs, p)) || !(t->managed_by_path = dup_str(c, ms, p)) ||
        !(t->reserved_value = dup_str(c, vs, p)))
        return false;
    child_key(sub, sizeof sub, p, "nestedPaths");
    if (nested && !read_nested(c, nested, sub, t->check_format, ms, t)) return false;
    return check_row_paths(c, t, p);
}

static bool read_controller(struct ctx *c, const json_t *o, const char *p, struct jg_policy *pol,
                            struct jg_policy_controller *k) {
    static const char *const keys[] = {"name", "namespaces", "statusWriters", NULL};
    static const char *const sw_keys[] = {"users", "groups", NULL};
    const json_t *name = NULL, *ns = NULL;
    char sub[MAX_PATH * 2];
    if (!want_type(c, o, JSON_OBJECT, "an object", p) || !check_keys(c, o, p, keys) ||
        !get_string(c, o, "name", p, true, false, MAX_NAME, &name) ||
        !get_array(c, o, "namespaces", p, MAX_LIST, &ns))
        return false;
    const char *s = json_string_value(name);
    child_key(sub, sizeof sub, p, "name");
    /* a name that fails the format is for the rows that do not check it (Tekton's free-form
     * values); `policy check` says which kinds can never carry it */
    char what[600];
    if (!managed_by_problems(s, sub, what, sizeof what)) return fail(c, sub, "out of memory");
    if (what[0] && !some_row_free_form(pol))
        return fail(c, sub,
                    "%s (every target row checks the format, so no object can carry this name)",
                    what);
    for (size_t j = 0; j < (size_t)(k - pol->controllers); j++)
        if (strcmp(pol->controllers[j].name, s) == 0)
            return fail(c, sub, "duplicate controller \"%s\" (also controllers[%zu])", s, j);
    if (!(k->name = dup_str(c, s, sub))) return false;
    k->name_len = strlen(k->name);
    child_key(sub, sizeof sub, p, "namespaces");
    if (ns && !get_strv(c, ns, sub, MAX_NAME, check_namespace_glob, &k->namespaces)) return false;
    child_key(sub, sizeof sub, p, "statusWriters");
    const json_t *sw = json_object_get(o, "statusWriters"), *users = NULL, *groups = NULL;
    if (!sw) return true;
    if (!want_type(c, sw, JSON_OBJECT, "an object", sub) || !check_keys(c, sw, sub, sw_keys) ||
        !get_array(c, sw, "users", sub, MAX_LIST, &users) ||
        !get_array(c, sw, "groups", sub, MAX_LIST, &groups))
        return false;
    /* The status of an object naming its own kind's controller is that controller's to write: such
     * a write is not delegated, and the chart's status webhooks are not sent it, so a binding for
     * the value would be enforced by `jobguard check` and never on a cluster (docs/policy.md). */
    char kinds[512];
    if (rows_reserving(pol, k->name, kinds, sizeof kinds))
        return fail(c, sub,
                    "\"%s\" is the reserved value of %s: an object naming its own kind's "
                    "controller is not delegated, and the status webhooks do not send its "
                    "status writes to jobguard, so this binding would never be enforced (bind "
                    "the value of the controller the objects are delegated to)",
                    k->name, kinds);
    k->has_status_writers = true;
    char lp[MAX_PATH * 2];
    child_key(lp, sizeof lp, sub, "users");
    if (users && !get_strv(c, users, lp, MAX_IDENTITY, NULL, &k->writer_users)) return false;
    child_key(lp, sizeof lp, sub, "groups");
    return !groups || get_strv(c, groups, lp, MAX_IDENTITY, NULL, &k->writer_groups);
}

typedef bool (*row_reader)(struct ctx *c, const json_t *o, const char *path, struct jg_policy *pol,
                           size_t i);

static bool target_row(struct ctx *c, const json_t *o, const char *p, struct jg_policy *pol,
                       size_t i) {
    return read_target(c, o, p, pol, &pol->targets[i]);
}

static bool controller_row(struct ctx *c, const json_t *o, const char *p, struct jg_policy *pol,
                           size_t i) {
    return read_controller(c, o, p, pol, &pol->controllers[i]);
}

/* Each element of arr (NULL: none) through `row`; *n counts the rows begun, so that a half-read
 * row is freed with the rest. */
static bool read_rows(struct ctx *c, const json_t *arr, const char *name, row_reader row,
                      struct jg_policy *pol, size_t *n) {
    for (size_t i = 0; i < json_array_size(arr); i++) {
        char p[64];
        child_index(p, sizeof p, name, i);
        *n = i + 1;
        if (!row(c, json_array_get(arr, i), p, pol, i)) return false;
    }
    return true;
}

static bool read_modes(struct ctx *c, const json_t *modes, struct jg_policy *pol) {
    if (!want_type(c, modes, JSON_OBJECT, "an object", "modes")) return false;
    const json_t *star = json_object_get(modes, "*");
    enum jg_mode def = JG_MODE_DENY;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)modes, key, v) {
        char p[MAX_PATH * 2];
        child_key(p, sizeof p, "modes", key);
        const struct jg_rule *r = strcmp(key, "*") == 0 ? NULL : jg_rule_find(key);
        if (!r && strcmp(key, "*") != 0)
            return fail(c, p, "unknown rule ID (see 'jobguard rules'; \"*\" sets the default)");
        if (!want_type(c, v, JSON_STRING, "a string", p)) return false;
        enum jg_mode m;
        if (!jg_mode_parse(json_string_value(v), &m))
            return fail(c, p, "mode \"%s\" is not one of \"deny\", \"warn\", \"audit\", \"off\"",
                        json_string_value(v));
        if (v == star) def = m;
    }
    for (size_t i = 0; i < sizeof pol->mode; i++)
        pol->mode[i] = (unsigned char)def;
    json_object_foreach((json_t *)modes, key, v) {
        const struct jg_rule *r = jg_rule_find(key);
        enum jg_mode m;
        if (r && jg_mode_parse(json_string_value(v), &m)) pol->mode[r->id] = (unsigned char)m;
    }
    return true;
}

static bool read_policy(struct ctx *c, const json_t *root, struct jg_policy *pol) {
    static const char *const keys[] = {
        "targets", "controllers", "allowUnlistedControllers", "statusWriterExemptGroups",
        "modes",   NULL};
    if (!json_is_object(root))
        return fail(c, "top level", "must be an object, not %s", type_name(root));
    const json_t *targets = NULL, *controllers = NULL, *exempt = NULL;
    pol->allow_unlisted_controllers = true;
    if (!check_keys(c, root, "", keys) ||
        !get_array(c, root, "targets", "", MAX_TARGETS, &targets) ||
        !get_array(c, root, "controllers", "", MAX_CONTROLLERS, &controllers) ||
        !get_array(c, root, "statusWriterExemptGroups", "", MAX_LIST, &exempt) ||
        !get_bool(c, root, "allowUnlistedControllers", "", &pol->allow_unlisted_controllers))
        return false;
    size_t nt = json_array_size(targets), nc = json_array_size(controllers); /* 0 if absent */
    if ((nt && !(pol->targets = calloc(nt, sizeof *pol->targets))) ||
        (nc && !(pol->controllers = calloc(nc, sizeof *pol->controllers))))
        return fail(c, "top level", "out of memory");
    if (!read_rows(c, targets, "targets", target_row, pol, &pol->n_targets) ||
        !read_rows(c, controllers, "controllers", controller_row, pol, &pol->n_controllers))
        return false;
    if (exempt) {
        if (!get_strv(c, exempt, "statusWriterExemptGroups", MAX_IDENTITY, NULL,
                      &pol->status_writer_exempt))
            return false;
    } else { /* the default: cluster admins may always write status (break glass) */
        struct jg_strv *v = &pol->status_writer_exempt;
        if (!(v->v = calloc(1, sizeof *v->v)) ||
            !(v->v[0] = dup_str(c, "system:masters", "statusWriterExemptGroups")))
            return fail(c, "statusWriterExemptGroups", "out of memory");
        v->n = 1;
    }
    const json_t *modes = json_object_get(root, "modes");
    return !modes || read_modes(c, modes, pol);
}

static struct jg_policy *load_json(const char *name, const char *json, size_t len, char *err,
                                   size_t errcap, bool yaml);

void jg_sha256_hex(const char *data, size_t len, char out[65]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    out[0] = '\0';
    if (EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) != 1 || n != 32) return;
    for (unsigned i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

struct jg_policy *jg_policy_load_buffer(const char *name, const char *json, size_t len, char *err,
                                        size_t errcap) {
    return load_json(name, json, len, err, errcap, true);
}

static struct jg_policy *load_json(const char *name, const char *json, size_t len, char *err,
                                   size_t errcap, bool yaml) {
    struct ctx c = {name, err, errcap, 0};
    if (len > MAX_FILE_BYTES) {
        set_err(err, errcap, "%s: %zu bytes, more than the limit of %u", name, len, MAX_FILE_BYTES);
        return NULL;
    }
    size_t at = 0;
    while (at < len &&
           (json[at] == ' ' || json[at] == '\n' || json[at] == '\t' || json[at] == '\r'))
        at++;
    if (yaml && at < len && json[at] != '{' && json[at] != '[') {
        /* YAML (the form the chart's values hold): converted as kubectl converts it, then read as
         * the same JSON; the sha256 stays the file's. */
        size_t jl;
        char *conv = jg_yaml_to_json(json, len, name, MAX_FILE_BYTES, &jl, err, errcap);
        if (!conv) return NULL;
        if (jl == 0 || conv[0] != '{') {
            set_err(err, errcap, "%s: the policy must be a mapping (an object), not %s", name,
                    jl && conv[0] == '[' ? "a sequence" : "a scalar");
            free(conv);
            return NULL;
        }
        struct jg_policy *p = load_json(name, conv, jl, err, errcap, false);
        free(conv);
        if (p) {
            jg_sha256_hex(json, len, p->sha256);
            p->yaml = true;
        }
        return p;
    }
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        /* jansson names its own flag when it meets \u0000; the user needs only the fact */
        static const char nul_flag[] = " without JSON_ALLOW_NUL";
        char *flag = strstr(je.text, nul_flag);
        if (flag) memmove(flag, flag + sizeof nul_flag - 1, strlen(flag + sizeof nul_flag - 1) + 1);
        set_err(err, errcap, "%s:%d:%d: %s", name, je.line, je.column, je.text);
        return NULL;
    }
    struct jg_policy *p = calloc(1, sizeof *p);
    bool ok = p ? read_policy(&c, root, p) : fail(&c, "top level", "out of memory");
    json_decref(root);
    if (ok && !jg_policy_build_lookups(p)) ok = fail(&c, "top level", "out of memory");
    if (!ok) {
        jg_policy_free(p);
        return NULL;
    }
    jg_sha256_hex(json, len, p->sha256);
    return p;
}

struct jg_policy *jg_policy_load_file(const char *path, char *err, size_t errcap) {
    jg_buf b = JG_BUF_INIT;
    char why[512];
    if (!jg_read_regular_file(path, MAX_FILE_BYTES, &b, why, sizeof why)) {
        set_err(err, errcap, "%s", why);
        jg_buf_free(&b);
        return NULL;
    }
    struct jg_policy *p = jg_policy_load_buffer(path, b.data, b.len, err, errcap);
    jg_buf_free(&b);
    return p;
}

static void strv_free(struct jg_strv *v) {
    for (size_t i = 0; i < v->n; i++)
        free((char *)v->v[i]); /* const for the built-in rows' literals */
    free(v->v);
}

void jg_policy_free(struct jg_policy *p) {
    if (!p) return;
    jg_policy_free_lookups(p);
    for (size_t i = 0; i < p->n_targets; i++) {
        struct jg_policy_target *t = &p->targets[i];
        free((char *)t->group);
        strv_free(&t->versions);
        free((char *)t->kind);
        free((char *)t->resource);
        free((char *)t->managed_by_path);
        free((char *)t->reserved_value);
        for (size_t j = 0; j < t->n_nested; j++) {
            free((char *)t->nested[j].path);
            free((char *)t->nested[j].reserved_value);
            strv_free(&t->nested[j].list_keys);
        }
        free(t->nested);
    }
    free(p->targets);
    for (size_t i = 0; i < p->n_controllers; i++) {
        struct jg_policy_controller *k = &p->controllers[i];
        free((char *)k->name);
        strv_free(&k->namespaces);
        strv_free(&k->writer_users);
        strv_free(&k->writer_groups);
    }
    free(p->controllers);
    strv_free(&p->status_writer_exempt);
    free(p);
}

void jg_policy_apply(const struct jg_policy *p, struct jg_config *cfg) {
    for (size_t i = 0; i < sizeof cfg->mode; i++)
        if (cfg->mode[i] == JG_MODE_UNSET) cfg->mode[i] = p ? p->mode[i] : JG_MODE_DENY;
    cfg->policy = p;
}
