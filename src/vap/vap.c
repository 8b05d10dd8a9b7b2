/* vap: compiles the target rows and the policy into ValidatingAdmissionPolicy objects
 * (docs/vap.md). One policy (and binding) per row and mode in use, one more for the row's
 * <resource>/status when the policy binds status writers. Only standard CEL, RE2 `matches` and
 * the Kubernetes strings library (indexOf, substring, replace, join: every version since 1.27). */
#include "vap.h"

#include "jobguard/alloc.h"
#include "jobguard/buf.h"
#include "jobguard/targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The patterns of managedby.c's checks (docs/rules.md §2.2) as RE2 */
#define SUBDOMAIN_RE "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
#define PATH_RE "^[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+$"
struct gen {
    const struct jg_config *cfg;
    const struct jg_vap_options *o;
    json_t *out;
    char *err;
    size_t errcap;
    jg_buf b; /* scratch for one expression */
    /* jg_vap_explain: what each rule becomes for the current row (NULL when building) */
    json_t *explain;
    const struct jg_policy_target *t;
    bool by_version;
};

static const char *const actions[JG_MODE_OFF] = {"Deny", "Warn", "Audit"};

/* Records, for --explain, how the current row's `rule` is enforced: `vap` NULL = by the
 * validations added next to this call, in the rule's mode (its validationActions). */
static void explain(struct gen *g, int rule, const char *vap, const char *how) {
    if (!g->explain) return;
    unsigned m = g->cfg->mode[rule];
    if (m >= JG_MODE_COUNT) m = JG_MODE_DENY;
    if (!vap)
        vap = (g->cfg->disabled >> rule & 1) || m == JG_MODE_OFF ? "no (mode off)" : actions[m];
    char target[300];
    snprintf(target, sizeof target, "%s%s%s", g->t->kind, g->by_version ? " " : "",
             g->by_version ? g->t->versions.v[0] : "");
    json_array_append_new(g->explain, json_pack("{s:s, s:s, s:s, s:s}", "rule", jg_rules[rule].name,
                                                "target", target, "vap", vap, "how", how));
}

/* A CEL single-quoted string literal. */
static void lit(jg_buf *b, const char *s) {
    jg_buf_putc(b, '\'');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\\' || c == '\'')
            jg_buf_printf(b, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            jg_buf_printf(b, "\\x%02x", c);
        else
            jg_buf_putc(b, (char)c);
    }
    jg_buf_putc(b, '\'');
}

/* Go's %q of the string expression e, exact for printable text (docs/vap.md "Messages"). */
static void goq(jg_buf *b, const char *e) {
    jg_buf_printf(b,
                  "('\"' + (%s).replace('\\\\', '\\\\\\\\').replace('\"', '\\\\\"')"
                  ".replace('\\n', '\\\\n').replace('\\t', '\\\\t').replace('\\r', '\\\\r') + "
                  "'\"')",
                  e);
}

/* encoding/json of the string expression e (HTML-safe, as Go marshals). */
static void jsonq(jg_buf *b, const char *e) {
    jg_buf_printf(b,
                  "('\"' + (%s).replace('\\\\', '\\\\\\\\').replace('\"', '\\\\\"')"
                  ".replace('\\n', '\\\\n').replace('\\t', '\\\\t').replace('\\r', '\\\\r')"
                  ".replace('<', '\\\\u003c').replace('>', '\\\\u003e').replace('&', '\\\\u0026')"
                  " + '\"')",
                  e);
}

static bool fail(struct gen *g, const char *what, const char *path) {
    snprintf(g->err, g->errcap, "%s: \"%s\"", what, path);
    return false;
}

static const char *const cel_reserved[] = {
    "true",     "false",   "null",      "in",       "as",  "break",  "const",
    "continue", "else",    "for",       "function", "if",  "import", "let",
    "loop",     "package", "namespace", "return",   "var", "void",   "while"};

/* A dotted path's fields must be CEL identifiers that need no escaping. */
static bool path_ok(const char *path) {
    char seg[256];
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ".[");
        if (n == 0 || n >= sizeof seg) return false;
        memcpy(seg, p, n);
        seg[n] = '\0';
        for (size_t i = 0; i < n; i++) {
            char c = seg[i];
            bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                      (i > 0 && c >= '0' && c <= '9');
            if (!ok) return false;
        }
        for (size_t i = 0; i < sizeof cel_reserved / sizeof *cel_reserved; i++)
            if (strcmp(seg, cel_reserved[i]) == 0) return false;
        p += n;
        if (JG_STARTS_WITH(p, "[*]")) p += JG_LIT_LEN("[*]");
        if (*p == '.') p++;
    }
    return true;
}

/* `has(r.a) && type(r.a) == map && has(r.a.b) && ...` for a path without "[*]" below root
 * expression r: the field is set, a null being absent as the webhook reads it; with `string` the
 * last value must be a string, else not null. Never an error, whatever the types on the path. */
static void present(jg_buf *b, const char *root, const char *path, size_t len, bool string) {
    for (size_t i = 0, first = 1; i <= len; i++) {
        if (i < len && path[i] != '.') continue;
        if (!first) jg_buf_puts(b, " && ");
        first = 0;
        if (i < len)
            jg_buf_printf(b, "has(%s.%.*s) && type(%s.%.*s) == map", root, (int)i, path, root,
                          (int)i, path);
        else if (string)
            jg_buf_printf(b, "has(%s.%.*s) && type(%s.%.*s) == string", root, (int)i, path, root,
                          (int)i, path);
        else
            jg_buf_printf(b, "has(%s.%.*s) && %s.%.*s != null", root, (int)i, path, root, (int)i,
                          path);
    }
}

/* "every value on `path` below `root` is absent, null or of the type the webhook reads": an object
 * for every field but the last, a list before each "[*]" (its elements null or objects), a string
 * at the end. The webhook refuses anything else before any rule ("must be a string"). */
static void typed_path(jg_buf *b, const char *root, const char *path, int *level) {
    jg_buf cur = JG_BUF_INIT, r = JG_BUF_INIT;
    jg_buf_puts(&cur, root);
    size_t opens = 0;
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ".[");
        bool list = JG_STARTS_WITH(p + n, "[*]");
        jg_buf_reset(&r);
        jg_buf_printf(&r, "%s.%.*s", cur.data, (int)n, p);
        p += n + (list ? JG_LIT_LEN("[*]") : 0);
        if (*p == '.') p++;
        jg_buf_printf(b, "(!has(%s) || %s == null || (type(%s) == %s", r.data, r.data, r.data,
                      list ? "list"
                      : *p ? "map"
                           : "string");
        opens += 2;
        jg_buf_reset(&cur);
        if (list) {
            char e[16];
            snprintf(e, sizeof e, "t%d", (*level)++);
            jg_buf_printf(b, " && %s.all(%s, %s == null || (type(%s) == map", r.data, e, e, e);
            opens += 2;
            jg_buf_puts(&cur, e);
        } else {
            jg_buf_puts(&cur, r.data);
        }
        if (*p) jg_buf_puts(b, " && ");
    }
    while (opens--)
        jg_buf_putc(b, ')');
    jg_buf_free(&cur);
    jg_buf_free(&r);
}

/* The `typed` variable of a row: its managedBy path and nested paths, in the new and the stored
 * object. */
static char *typed_expr(const struct jg_policy_target *t) {
    jg_buf b = JG_BUF_INIT;
    int level = 0;
    for (int k = 0; k < 2; k++) {
        const char *root = k ? "oldObject" : "object";
        jg_buf_puts(&b, k ? " && (oldObject == null || (" : "(");
        typed_path(&b, root, t->managed_by_path, &level);
        for (size_t i = 0; i < t->n_nested; i++) {
            jg_buf_puts(&b, " && ");
            typed_path(&b, root, t->nested[i].path, &level);
        }
        jg_buf_puts(&b, k ? "))" : ")");
    }
    return b.data;
}

static json_t *variable(const char *name, const char *expr) {
    return json_pack("{s:s, s:s}", "name", name, "expression", expr);
}

/* Variables of a row's policies: typed, ns, hasMb, mb, hasOld, oldMb, changed, host, path. */
static json_t *main_variables(struct gen *g, const struct jg_policy_target *t) {
    const char *field = t->managed_by_path;
    json_t *v = json_array();
    jg_buf *b = &g->b;
    char *typed = typed_expr(t);
    json_array_append_new(v, variable("typed", typed));
    jg_free(typed);
    /* a cluster-scoped request has no namespace (the policies match namespaced kinds only) */
    json_array_append_new(v, variable("ns", "has(request.namespace) ? request.namespace : ''"));
    static const char *const names[2][3] = {{"hasMb", "mb", "object"},
                                            {"hasOld", "oldMb", "oldObject"}};
    for (int k = 0; k < 2; k++) { /* the new object's value, then the stored one's */
        jg_buf_reset(b);
        jg_buf_puts(b, k ? "(oldObject != null && " : "(");
        present(b, names[k][2], field, strlen(field), true);
        jg_buf_putc(b, ')');
        json_array_append_new(v, variable(names[k][0], b->data));
        jg_buf_reset(b);
        jg_buf_printf(b, "variables.%s ? %s.", names[k][0], names[k][2]);
        jg_buf_puts(b, field);
        jg_buf_puts(b, " : ''");
        json_array_append_new(v, variable(names[k][1], b->data));
    }
    json_array_append_new(v, variable("changed", "request.operation == 'CREATE' || "
                                                 "variables.hasMb != variables.hasOld || "
                                                 "variables.mb != variables.oldMb"));
    json_array_append_new(v, variable("host", "variables.mb.indexOf('/') > 0 ? "
                                              "variables.mb.substring(0, "
                                              "variables.mb.indexOf('/')) : ''"));
    json_array_append_new(v, variable("path", "variables.mb.indexOf('/') > 0 ? "
                                              "variables.mb.substring("
                                              "variables.mb.indexOf('/') + 1) : ''"));
    return v;
}

struct vals {
    json_t *v[JG_MODE_OFF]; /* validations per mode */
};

/* The API server shows a messageExpression's result only up to 5 KiB (else the static message):
 * the result is cut at MSG_CUT characters (4 bytes each at most), as jobguard cuts a long value. */
#define MSG_CUT 1200

/* Adds a validation of `rule` in the rule's mode: `expr` runs only when `typed` holds (a value of
 * another type is refused by the row's type validation alone), `msg` is the static message the
 * API server falls back to, `msg_expr` (or NULL) jobguard's text. */
static void add(struct gen *g, struct vals *vs, int rule, const char *expr, const char *msg,
                const char *msg_expr, const char *reason) {
    unsigned m = g->cfg->mode[rule];
    if (m >= JG_MODE_COUNT) m = JG_MODE_DENY;
    if ((g->cfg->disabled >> rule & 1) || m == JG_MODE_OFF) return;
    jg_buf e = JG_BUF_INIT;
    jg_buf_printf(&e, "!variables.typed || (%s)", expr);
    json_t *o =
        json_pack("{s:s, s:s, s:s}", "expression", e.data, "message", msg, "reason", reason);
    if (msg_expr) {
        jg_buf_reset(&e);
        jg_buf_printf(&e,
                      "[%s].map(text, size(text) <= %d ? text : text.substring(0, %d) + "
                      "'... [truncated ' + string(size(text) - %d) + ' characters]')[0]",
                      msg_expr, MSG_CUT, MSG_CUT, MSG_CUT);
        json_object_set_new(o, "messageExpression", json_string(e.data));
    }
    jg_buf_free(&e);
    json_array_append_new(vs->v[m], o);
}

/* A message expression `'<field>: <kind>: ' + <quoted value> + <tail>`. */
static char *msg_value(const char *field, const char *type, const char *value_expr, bool json,
                       const char *tail) {
    jg_buf b;
    b = (jg_buf)JG_BUF_INIT;
    char head[512];
    snprintf(head, sizeof head, "%s: %s: ", field, type);
    lit(&b, head);
    jg_buf_puts(&b, " + ");
    if (json)
        jsonq(&b, value_expr);
    else
        goq(&b, value_expr);
    if (tail && *tail) {
        jg_buf_puts(&b, " + ");
        lit(&b, tail);
    }
    return b.data; /* owned by the caller */
}

/* A validation whose message is `<field>: <type>: <quoted value><tail>`; its static message, the
 * same without the value. */
static void add_value(struct gen *g, struct vals *vs, int rule, const char *expr, const char *field,
                      const char *type, const char *value_expr, const char *tail) {
    char *m = msg_value(field, type, value_expr, false, tail);
    jg_buf st = JG_BUF_INIT;
    jg_buf_printf(&st, "%s: %s%s", field, type, tail);
    add(g, vs, rule, expr, st.data, m, "Invalid");
    jg_buf_free(&st);
    jg_free(m);
}

/* fnmatch(3) glob of namespace characters as an RE2 alternative: every bracket written out as the
 * namespace characters it matches (a name has no others). Empty result: matches nothing. */
static bool glob_re(jg_buf *b, const char *gl) {
    static const char ns_chars[] = "-0123456789abcdefghijklmnopqrstuvwxyz";
    for (size_t i = 0; gl[i]; i++) {
        char c = gl[i];
        if (c == '*') {
            jg_buf_puts(b, ".*");
        } else if (c == '?') {
            jg_buf_putc(b, '.');
        } else if (c == '[') {
            size_t j = i + 1;
            bool neg = gl[j] == '!';
            if (neg) j++;
            size_t first = j;
            while (gl[j] && gl[j] != ']')
                j++;
            char set[64];
            size_t n = 0;
            for (const char *k = ns_chars; *k; k++) {
                bool in = false;
                for (size_t q = first; q < j; q++) {
                    if (q + 2 < j && gl[q + 1] == '-') {
                        in |= *k >= gl[q] && *k <= gl[q + 2];
                        q += 2;
                    } else {
                        in |= *k == gl[q];
                    }
                }
                if (in != neg) set[n++] = *k;
            }
            if (n == 0) return false;
            jg_buf_putc(b, '[');
            for (size_t q = 0; q < n; q++) {
                if (set[q] == '-') jg_buf_putc(b, '\\');
                jg_buf_putc(b, set[q]);
            }
            jg_buf_putc(b, ']');
            i = j;
        } else {
            if (c == '-') jg_buf_putc(b, '\\');
            jg_buf_putc(b, c);
        }
    }
    return true;
}

/* Format and length (docs/rules.md §2.2, §2.3) at `field` when `gate` holds and a value is set. */
static void format_rules(struct gen *g, struct vals *vs, const char *field, const char *gate) {
    bool always = strcmp(gate, "true") == 0;
    explain(g, JG_R_MANAGED_BY_FORMAT, NULL,
            always
                ? "every CREATE and UPDATE: not empty; RE2 `matches` on the whole value, its host "
                  "and its path (split at the first `/`); host `size(bytes(…)) <= 253`"
                : "CREATE, and UPDATE when the value changed (absent ≠ any value): not empty; RE2 "
                  "`matches` on the whole value, its host and its path (split at the first `/`); "
                  "host `size(bytes(…)) <= 253`");
    explain(g, JG_R_MANAGED_BY_LENGTH, NULL,
            always ? "every CREATE and UPDATE: `size(bytes(…)) <= 63`"
                   : "CREATE, and UPDATE when the value changed: `size(bytes(…)) <= 63`");
    jg_buf e;
    e = (jg_buf)JG_BUF_INIT;
#define G(...)                                                                                     \
    do {                                                                                           \
        jg_buf_reset(&e);                                                                          \
        jg_buf_printf(&e, "!(%s) || !variables.hasMb || ", gate);                                  \
        jg_buf_printf(&e, __VA_ARGS__);                                                            \
    } while (0)
    char msg[512];
    snprintf(msg, sizeof msg, "%s: Required value", field);
    G("variables.mb != ''");
    add(g, vs, JG_R_MANAGED_BY_FORMAT, e.data, msg, NULL, "Invalid");
    const char *prefixed = "variables.mb.matches(r\"^[^/]+/[\\s\\S]+$\")";
    G("variables.mb == '' || %s", prefixed);
    add_value(g, vs, JG_R_MANAGED_BY_FORMAT, e.data, field, "Invalid value", "variables.mb",
              ": must be a domain-prefixed path (such as \"acme.io/foo\")");
    G("!%s || size(bytes(variables.host)) <= 253", prefixed);
    add_value(g, vs, JG_R_MANAGED_BY_FORMAT, e.data, field, "Invalid value", "variables.host",
              ": must be no more than 253 characters");
    G("!%s || variables.host.matches(r\"%s\")", prefixed, SUBDOMAIN_RE);
    char tail[600];
    snprintf(tail, sizeof tail, ": %s", jg_subdomain_detail);
    add_value(g, vs, JG_R_MANAGED_BY_FORMAT, e.data, field, "Invalid value", "variables.host",
              tail);
    G("!%s || variables.path.matches(r\"%s\")", prefixed, PATH_RE);
    snprintf(tail, sizeof tail, ": %s", jg_path_detail);
    add_value(g, vs, JG_R_MANAGED_BY_FORMAT, e.data, field, "Invalid value", "variables.path",
              tail);
    G("size(bytes(variables.mb)) <= 63");
    snprintf(msg, sizeof msg, "%s: Too long: may not be more than 63 bytes", field);
    add(g, vs, JG_R_MANAGED_BY_LENGTH, e.data, msg, NULL, "Invalid");
#undef G
    jg_buf_free(&e);
}

static void immutable_rule(struct gen *g, struct vals *vs, const char *field) {
    explain(g, JG_R_MANAGED_BY_IMMUTABLE, NULL, "UPDATE: presence and value both equal");
    jg_buf m;
    m = (jg_buf)JG_BUF_INIT;
    char head[512];
    snprintf(head, sizeof head, "%s: Invalid value: ", field);
    lit(&m, head);
    jg_buf_puts(&m, " + (variables.hasMb ? ");
    jsonq(&m, "variables.mb");
    jg_buf_puts(&m, " : 'null') + ': field is immutable'");
    char st[600];
    snprintf(st, sizeof st, "%s: Invalid value: field is immutable", field);
    add(g, vs, JG_R_MANAGED_BY_IMMUTABLE,
        "request.operation != 'UPDATE' || (variables.hasMb == variables.hasOld && "
        "variables.mb == variables.oldMb)",
        st, m.data, "Invalid");
    jg_buf_free(&m);
}

/* The segment of `path` from `from` up to the next "[*]" (or the end): its length. */
static size_t seg_len(const char *from) {
    const char *s = strstr(from, "[*]");
    return s ? (size_t)(s - from) : strlen(from);
}

/* "this copy is in the stored object, with the same keys and value": new element chain names
 * e0.., old ones o0.. (docs/targets.md: copies of keyed lists match by key). */
static void nested_unchanged(jg_buf *b, const struct jg_policy_nested *nd, const char *rest,
                             int level, const char *nroot, const char *oroot) {
    size_t n = seg_len(rest);
    char newv[512], oldv[512];
    snprintf(newv, sizeof newv, "%s.%.*s", nroot, (int)n, rest);
    snprintf(oldv, sizeof oldv, "%s.%.*s", oroot, (int)n, rest);
    jg_buf_putc(b, '(');
    present(b, oroot, rest, n, false);
    if (rest[n] == '\0') {
        jg_buf_printf(b, " && %s == %s)", oldv, newv);
        return;
    }
    const char *key = nd->list_keys.v[level];
    char o[16], e[16];
    snprintf(o, sizeof o, "o%d", level);
    snprintf(e, sizeof e, "e%d", level);
    jg_buf_printf(b,
                  " && %s.exists(%s, %s != null && has(%s.%s) && has(%s.%s) && %s.%s == %s.%s && ",
                  oldv, o, o, o, key, e, key, o, key, e, key);
    const char *next = rest + n + 3 + (rest[n + 3] == '.');
    nested_unchanged(b, nd, next, level + 1, e, o);
    jg_buf_puts(b, "))");
}

/* The new copies: every one absent, the reserved value, or (on UPDATE) unchanged. */
static void nested_rule_expr(jg_buf *b, const struct jg_policy_nested *nd, const char *rest,
                             int level, const char *nroot) {
    size_t n = seg_len(rest);
    char v[512];
    snprintf(v, sizeof v, "%s.%.*s", nroot, (int)n, rest);
    jg_buf_puts(b, "!(");
    present(b, nroot, rest, n, false);
    jg_buf_puts(b, ") || ");
    if (rest[n] == '\0') {
        if (nd->reserved_value[0]) {
            jg_buf_printf(b, "%s == ", v);
            lit(b, nd->reserved_value);
            jg_buf_puts(b, " || ");
        }
        return; /* the caller appends the unchanged test */
    }
    char e[16];
    snprintf(e, sizeof e, "e%d", level);
    jg_buf_printf(b, "%s.all(%s, %s == null || (", v, e, e); /* a null element is no copy */
    const char *next = rest + n + 3 + (rest[n + 3] == '.');
    nested_rule_expr(b, nd, next, level + 1, e); /* the caller closes every all() */
}

static void nested_rules(struct gen *g, struct vals *vs, const struct jg_policy_target *t) {
    for (size_t i = 0; i < t->n_nested; i++) {
        const struct jg_policy_nested *nd = &t->nested[i];
        /* A list matched by index cannot be ratcheted without an element index (standard CEL
         * has none): such a path is checked on CREATE only, its UPDATEs by the webhook only. */
        size_t stars = 0;
        for (const char *q = nd->path; (q = strstr(q, "[*]")) != NULL; q += 3)
            stars++;
        bool keyed = nd->list_keys.n == stars;
        for (size_t k = 0; keyed && k < nd->list_keys.n; k++)
            keyed = nd->list_keys.v[k][0] != '\0';
        bool by_index = stars && !keyed;
        explain(g, JG_R_TARGET_NESTED_MANAGED_BY, by_index ? "CREATE only" : NULL,
                by_index
                    ? "a `[*]` list matched by index (no listKey): standard CEL has no element "
                      "index to pair a copy with the stored one, so UPDATEs stay with the "
                      "webhook"
                : stars ? "every copy absent, the nested reserved value, or (UPDATE) unchanged: "
                          "`all()` over each `[*]` list; a copy of a keyed list is unchanged when "
                          "the stored list `exists()` with the same keys and value"
                        : "the copy absent, the nested reserved value, or (UPDATE) equal to the "
                          "stored copy");
        /* innermost: "absent || reserved || unchanged", inside the all() of every list */
        jg_buf b;
        b = (jg_buf)JG_BUF_INIT;
        if (by_index) jg_buf_puts(&b, "request.operation != 'CREATE' || ");
        nested_rule_expr(&b, nd, nd->path, 0, "object");
        if (by_index) {
            jg_buf_puts(&b, "false");
        } else {
            jg_buf_puts(&b, "(oldObject != null && ");
            nested_unchanged(&b, nd, nd->path, 0, "object", "oldObject");
            jg_buf_putc(&b, ')');
        }
        for (size_t k = 0; k < stars; k++)
            jg_buf_puts(&b, "))");
        char msg[1024];
        if (nd->reserved_value[0]) {
            jg_buf rv;
            rv = (jg_buf)JG_BUF_INIT;
            jg_buf_go_quote(&rv, nd->reserved_value, strlen(nd->reserved_value));
            if (stars) {
                snprintf(msg, sizeof msg, "%s: Unsupported value: supported values: %s", nd->path,
                         rv.data);
                add(g, vs, JG_R_TARGET_NESTED_MANAGED_BY, b.data, msg, NULL, "Invalid");
            } else {
                char expr[600];
                snprintf(expr, sizeof expr, "object.%s", nd->path);
                char tail[600];
                snprintf(tail, sizeof tail, ": supported values: %s", rv.data);
                add_value(g, vs, JG_R_TARGET_NESTED_MANAGED_BY, b.data, nd->path,
                          "Unsupported value", expr, tail);
            }
            jg_buf_free(&rv);
        } else {
            snprintf(msg, sizeof msg, "%s: Forbidden: must not be set", nd->path);
            add(g, vs, JG_R_TARGET_NESTED_MANAGED_BY, b.data, msg, NULL, "Invalid");
        }
        jg_buf_free(&b);
    }
}

static void delegation_rule(struct gen *g, struct vals *vs, const struct jg_policy_target *t) {
    if (t->delegation_supported) return;
    explain(g, JG_R_TARGET_DELEGATION_UNSUPPORTED, NULL,
            "CREATE, and UPDATE when the value changed: only the reserved value");
    jg_buf e, tail;
    e = (jg_buf)JG_BUF_INIT;
    tail = (jg_buf)JG_BUF_INIT;
    jg_buf_puts(&e, "!variables.changed || !variables.hasMb || variables.mb == ");
    lit(&e, t->reserved_value);
    jg_buf_printf(&tail,
                  ": %s's controller ignores managedBy, so the local operator would still run the "
                  "pods; leave it unset or use ",
                  t->kind);
    jg_buf_go_quote(&tail, t->reserved_value, strlen(t->reserved_value));
    add_value(g, vs, JG_R_TARGET_DELEGATION_UNSUPPORTED, e.data, t->managed_by_path,
              "Invalid value", "variables.mb", tail.data);
    jg_buf_free(&e);
    jg_buf_free(&tail);
}

/* "<prefix>-<resource>.<group>[-<version>]-<mode>" */
static void object_name(char *out, size_t cap, struct gen *g, const struct jg_policy_target *t,
                        bool by_version, int mode) {
    snprintf(out, cap, "%s-%s%s%s%s%s-%s", g->o->prefix, t->resource, t->group[0] ? "." : "",
             t->group, by_version ? "-" : "", by_version ? t->versions.v[0] : "",
             jg_mode_name((enum jg_mode)mode));
}

/* A value of another type is refused whatever the modes (the webhook's 400 before any rule): a
 * first validation in the Deny policy, which exists whenever the object has a validation. */
static void type_check(struct vals *vs, const char *field) {
    size_t any = 0;
    for (int m = 0; m < JG_MODE_OFF; m++)
        any += json_array_size(vs->v[m]);
    if (!any) return;
    char st[600];
    snprintf(st, sizeof st,
             "%s: must be a string or null, every field above it an object or null and every "
             "[*] a list (jobguard refuses other types before any rule)",
             field);
    json_array_insert_new(vs->v[JG_MODE_DENY], 0,
                          json_pack("{s:s, s:s, s:s}", "expression", "variables.typed", "message",
                                    st, "reason", "Invalid"));
}

/* An object's metadata: name, the label, and the annotations that tie the set to its policy. */
static json_t *metadata(struct gen *g, const char *name) {
    json_t *md = json_pack("{s:s, s:{s:s}}", "name", name, "labels", "app.kubernetes.io/managed-by",
                           "jobguard");
    json_t *ann = json_object();
    if (g->o->policy_sha256)
        json_object_set_new(ann, JG_VAP_ANN_SHA256, json_string(g->o->policy_sha256));
    if (g->o->mode_overrides && g->o->mode_overrides[0])
        json_object_set_new(ann, JG_VAP_ANN_MODES, json_string(g->o->mode_overrides));
    if (json_object_size(ann))
        json_object_set_new(md, "annotations", ann);
    else
        json_decref(ann);
    return md;
}

/* The binding of policy `name` in mode m, with the webhooks' exemptions (docs/vap.md
 * "Exemptions"). */
static json_t *binding(struct gen *g, const char *name, int m) {
    json_t *b = json_pack("{s:s, s:s, s:o, s:{s:s, s:[s]}}", "apiVersion",
                          "admissionregistration.k8s.io/v1", "kind",
                          "ValidatingAdmissionPolicyBinding", "metadata", metadata(g, name), "spec",
                          "policyName", name, "validationActions", actions[m]);
    if (g->o->namespace_selector)
        json_object_set_new(json_object_get(b, "spec"), "matchResources",
                            json_pack("{s:O}", "namespaceSelector", g->o->namespace_selector));
    return b;
}

/* Appends one policy and its binding per mode that has validations. */
static void emit(struct gen *g, const struct jg_policy_target *t, bool by_version,
                 json_t *variables, struct vals *vs) {
    type_check(vs, t->managed_by_path);
    for (int m = 0; m < JG_MODE_OFF; m++) {
        if (json_array_size(vs->v[m]) == 0) {
            json_decref(vs->v[m]);
            continue;
        }
        char name[512];
        object_name(name, sizeof name, g, t, by_version, m);
        json_t *versions = json_array();
        for (size_t i = 0; i < t->versions.n; i++)
            json_array_append_new(versions, json_string(t->versions.v[i]));
        /* namespaced kinds only, as the chart's webhooks (scope: Namespaced) */
        json_t *rule = json_pack("{s:[s], s:o, s:[s, s], s:[s], s:s}", "apiGroups", t->group,
                                 "apiVersions", versions, "operations", "CREATE", "UPDATE",
                                 "resources", t->resource, "scope", "Namespaced");
        json_t *policy =
            json_pack("{s:s, s:s, s:o, s:{s:s, s:{s:s, s:[o]}, s:O, s:o}}", "apiVersion",
                      "admissionregistration.k8s.io/v1", "kind", "ValidatingAdmissionPolicy",
                      "metadata", metadata(g, name), "spec", "failurePolicy", "Fail",
                      "matchConstraints", "matchPolicy", by_version ? "Exact" : "Equivalent",
                      "resourceRules", rule, "variables", variables, "validations", vs->v[m]);
        json_array_append_new(g->out, policy);
        json_array_append_new(g->out, binding(g, name, m));
    }
    json_decref(variables);
}

static void new_vals(struct vals *vs) {
    for (int m = 0; m < JG_MODE_OFF; m++)
        vs->v[m] = json_array();
}

/* The namespaces controller c may be named in, as RE2 alternatives appended to re (with '|'
 * between them): -1 when it names no namespaces (any), else how many were appended (0: its globs
 * match no namespace). */
static int ns_alts(jg_buf *re, const struct jg_policy_controller *c) {
    if (c->namespaces.n == 0) return -1;
    int alts = 0;
    for (size_t i = 0; i < c->namespaces.n; i++) {
        size_t mark = re->len;
        if (re->len) jg_buf_putc(re, '|');
        if (glob_re(re, c->namespaces.v[i])) {
            alts++;
        } else {
            re->len = mark; /* a glob that matches no namespace adds no alternative */
            if (re->data) re->data[mark] = '\0';
        }
    }
    return alts;
}

/* The namespace column of a table row: '' any namespace, '-' none, else an anchored RE2. */
static void ns_column(jg_buf *b, const char *prefix, bool any, const jg_buf *re) {
    jg_buf col = JG_BUF_INIT;
    jg_buf_puts(&col, prefix);
    if (any)
        ;
    else if (!re->len)
        jg_buf_putc(&col, '-');
    else
        jg_buf_printf(&col, "^(%s)$", re->data);
    lit(b, col.data ? col.data : "");
    jg_buf_free(&col);
}

/* "the namespace column x admits variables.ns" for a column written with `prefix`. */
static void ns_admits(jg_buf *b, const char *x, const char *prefix) {
    size_t n = strlen(prefix);
    if (n)
        jg_buf_printf(b, "(%s == '%s' || (%s != '%s-' && variables.ns.matches(%s.substring(%zu))))",
                      x, prefix, x, prefix, x, n);
    else
        jg_buf_printf(b, "(%s == '' || (%s != '-' && variables.ns.matches(%s)))", x, x, x);
}

static int cmp_ctl(const void *a, const void *b) {
    const struct jg_policy_controller *x = *(const struct jg_policy_controller *const *)a;
    const struct jg_policy_controller *y = *(const struct jg_policy_controller *const *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x < y ? -1 : x > y);
}

/* The `ctl` variable of Policy-AllowedControllers: one row per controller name, sorted by name
 * (bytes, as CEL and Go compare strings): [name, namespaces (ns_column), the name %q-quoted, the
 * `is allowed only in namespaces` notes of its entries (rules.c namespace_note)]. The table is
 * written once for every target row (docs/vap.md "Size"). */
static char *ctl_table(const struct jg_policy *p) {
    const struct jg_policy_controller **v = malloc((p->n_controllers + 1) * sizeof *v);
    for (size_t i = 0; i < p->n_controllers; i++)
        v[i] = &p->controllers[i];
    qsort(v, p->n_controllers, sizeof *v, cmp_ctl);
    jg_buf b = JG_BUF_INIT;
    jg_buf_putc(&b, '[');
    for (size_t i = 0, rows = 0; i < p->n_controllers;) {
        size_t j = i;
        bool any = false;
        jg_buf re = JG_BUF_INIT, notes = JG_BUF_INIT;
        /* entries of one name, in the policy's order (the sort keeps it for equal names) */
        for (; j < p->n_controllers && strcmp(v[j]->name, v[i]->name) == 0; j++) {
            const struct jg_policy_controller *c = v[j];
            any |= ns_alts(&re, c) < 0;
            if (!c->namespaces.n) continue;
            jg_buf_puts(&notes, "; ");
            jg_buf_go_quote(&notes, c->name, strlen(c->name));
            jg_buf_puts(&notes, " is allowed only in namespaces ");
            size_t k = c->namespaces.n < 8 ? c->namespaces.n : 8;
            for (size_t q = 0; q < k; q++)
                jg_buf_printf(&notes, "%s%s", q ? ", " : "", c->namespaces.v[q]);
            if (c->namespaces.n > k) jg_buf_printf(&notes, " and %zu more", c->namespaces.n - k);
        }
        jg_buf q = JG_BUF_INIT;
        jg_buf_go_quote(&q, v[i]->name, strlen(v[i]->name));
        jg_buf_puts(&b, rows++ ? ", [" : "[");
        lit(&b, v[i]->name);
        jg_buf_puts(&b, ", ");
        ns_column(&b, "", any, &re);
        jg_buf_puts(&b, ", ");
        lit(&b, q.data);
        jg_buf_puts(&b, ", ");
        lit(&b, notes.data ? notes.data : "");
        jg_buf_putc(&b, ']');
        jg_buf_free(&q);
        jg_buf_free(&re);
        jg_buf_free(&notes);
        i = j;
    }
    jg_buf_putc(&b, ']');
    free(v);
    return b.data;
}

/* "a group of the user is in <list>" (the list follows, then ')'); a request without groups has
 * none, rather than an error that failurePolicy would decide. */
#define GROUPS_HAVE "(has(request.userInfo.groups) && request.userInfo.groups.exists(x, x in "

static void lit_list(jg_buf *b, const struct jg_strv *l) {
    jg_buf_putc(b, '[');
    for (size_t k = 0; k < l->n; k++) {
        if (k) jg_buf_puts(b, ", ");
        lit(b, l->v[k]);
    }
    jg_buf_putc(b, ']');
}

/* The `wtab` variable of Policy-StatusWriters: one row per policy entry that binds status
 * writers, in the policy's order, all strings (CEL list literals are homogeneous):
 * ['n:' name, 'r:' namespaces (ns_column), 'u:' user..., 'g:' group...]. */
static char *writers_table(const struct jg_policy *p) {
    jg_buf b = JG_BUF_INIT, t = JG_BUF_INIT;
    jg_buf_putc(&b, '[');
    for (size_t i = 0, rows = 0; i < p->n_controllers; i++) {
        const struct jg_policy_controller *c = &p->controllers[i];
        if (!c->has_status_writers) continue;
        jg_buf re = JG_BUF_INIT;
        bool any = ns_alts(&re, c) < 0;
        jg_buf_puts(&b, rows++ ? ", [" : "[");
        jg_buf_reset(&t);
        jg_buf_printf(&t, "n:%s", c->name);
        lit(&b, t.data);
        jg_buf_puts(&b, ", ");
        ns_column(&b, "r:", any, &re);
        for (int k = 0; k < 2; k++) {
            const struct jg_strv *l = k ? &c->writer_groups : &c->writer_users;
            for (size_t q = 0; q < l->n; q++) {
                jg_buf_reset(&t);
                jg_buf_printf(&t, "%c:%s", k ? 'g' : 'u', l->v[q]);
                jg_buf_puts(&b, ", ");
                lit(&b, t.data);
            }
        }
        jg_buf_putc(&b, ']');
        jg_buf_free(&re);
    }
    jg_buf_putc(&b, ']');
    jg_buf_free(&t);
    return b.data;
}

/* The policy-wide objects cover every target row: */
struct rowset {
    const struct jg_policy_target *const *t;
    const bool *by_version; /* matched by version (two rows of one resource, MPIJob) */
    size_t n;
};

static bool is_builtin_batch(const struct jg_policy_target *t, const char *kind) {
    return strcmp(t->group, "batch") == 0 && strcmp(t->kind, kind) == 0;
}

/* `cond ? a : cond ? b : ... : otherwise` over the rows, one arm per distinct value of f(row)
 * (rows sharing a managedBy path share an arm: `variables.row in [..]`). */
static void per_row(jg_buf *b, const struct rowset *rs,
                    const char *(*key)(const struct jg_policy_target *),
                    void (*arm)(jg_buf *, const struct jg_policy_target *), const char *otherwise) {
    bool *done = calloc(rs->n + 1, sizeof *done);
    for (size_t i = 0; i < rs->n; i++) {
        if (done[i]) continue;
        jg_buf_puts(b, "variables.row in [");
        for (size_t k = i, first = 1; k < rs->n; k++) {
            if (done[k] || strcmp(key(rs->t[k]), key(rs->t[i])) != 0) continue;
            done[k] = true;
            jg_buf_printf(b, "%s%zu", first ? "" : ", ", k);
            first = 0;
        }
        jg_buf_puts(b, "] ? (");
        arm(b, rs->t[i]);
        jg_buf_puts(b, ") : ");
    }
    jg_buf_puts(b, otherwise);
    free(done);
}

static const char *key_path(const struct jg_policy_target *t) {
    return t->managed_by_path;
}
static const char *key_kind(const struct jg_policy_target *t) {
    return t->kind;
}
static const char *key_reserved(const struct jg_policy_target *t) {
    return t->reserved_value;
}

static void arm_typed(jg_buf *b, const struct jg_policy_target *t) {
    char *e = typed_expr(t);
    jg_buf_puts(b, e);
    jg_free(e);
}
static void arm_has_new(jg_buf *b, const struct jg_policy_target *t) {
    present(b, "object", t->managed_by_path, strlen(t->managed_by_path), true);
}
static void arm_has_old(jg_buf *b, const struct jg_policy_target *t) {
    jg_buf_puts(b, "oldObject != null && ");
    present(b, "oldObject", t->managed_by_path, strlen(t->managed_by_path), true);
}
static void arm_mb_new(jg_buf *b, const struct jg_policy_target *t) {
    jg_buf_printf(b, "object.%s", t->managed_by_path);
}
static void arm_mb_old(jg_buf *b, const struct jg_policy_target *t) {
    jg_buf_printf(b, "oldObject.%s", t->managed_by_path);
}
static void arm_field(jg_buf *b, const struct jg_policy_target *t) {
    lit(b, t->managed_by_path);
}
static void arm_kind(jg_buf *b, const struct jg_policy_target *t) {
    lit(b, t->kind);
}
static void arm_reserved(jg_buf *b, const struct jg_policy_target *t) {
    lit(b, t->reserved_value);
}
static void arm_reserved_q(jg_buf *b, const struct jg_policy_target *t) {
    jg_buf q = JG_BUF_INIT;
    jg_buf_go_quote(&q, t->reserved_value, strlen(t->reserved_value));
    lit(b, q.data);
    jg_buf_free(&q);
}

/* Variables of a policy-wide object: row (the target row of the request, -1 none), typed, ns,
 * hasMb, mb, hasOld, oldMb, changed, sub, field, kind, reserved, reservedQ. */
static json_t *rowset_variables(const struct rowset *rs) {
    json_t *v = json_array();
    jg_buf b = JG_BUF_INIT;
    for (size_t i = 0; i < rs->n; i++) {
        const struct jg_policy_target *t = rs->t[i];
        jg_buf_printf(&b, "request.resource.group == '%s' && request.resource.resource == '%s'",
                      t->group, t->resource);
        if (rs->by_version[i]) {
            jg_buf_puts(&b, " && request.resource.version in ");
            lit_list(&b, &t->versions);
        }
        jg_buf_printf(&b, " ? %zu : ", i);
    }
    jg_buf_puts(&b, "-1");
    json_array_append_new(v, variable("row", b.data));
    jg_buf_reset(&b);
    for (size_t i = 0; i < rs->n; i++) {
        jg_buf_printf(&b, "variables.row == %zu ? (", i);
        arm_typed(&b, rs->t[i]);
        jg_buf_puts(&b, ") : ");
    }
    jg_buf_puts(&b, "true");
    json_array_append_new(v, variable("typed", b.data));
    json_array_append_new(v, variable("ns", "has(request.namespace) ? request.namespace : ''"));
    static const struct {
        const char *name;
        void (*arm)(jg_buf *, const struct jg_policy_target *);
        const char *(*key)(const struct jg_policy_target *);
        const char *pre, *otherwise;
    } vars[] = {
        {"hasMb", arm_has_new, key_path, "", "false"},
        {"mb", arm_mb_new, key_path, "!variables.hasMb ? '' : ", "''"},
        {"hasOld", arm_has_old, key_path, "", "false"},
        {"oldMb", arm_mb_old, key_path, "!variables.hasOld ? '' : ", "''"},
        {"field", arm_field, key_path, "", "''"},
        {"kind", arm_kind, key_kind, "", "''"},
        {"reserved", arm_reserved, key_reserved, "", "''"},
        {"reservedQ", arm_reserved_q, key_reserved, "", "''"},
    };
    for (size_t k = 0; k < sizeof vars / sizeof *vars; k++) {
        jg_buf_reset(&b);
        jg_buf_puts(&b, vars[k].pre);
        per_row(&b, rs, vars[k].key, vars[k].arm, vars[k].otherwise);
        json_array_append_new(v, variable(vars[k].name, b.data));
        if (k == 3)
            json_array_append_new(v, variable("changed", "request.operation == 'CREATE' || "
                                                         "variables.hasMb != variables.hasOld || "
                                                         "variables.mb != variables.oldMb"));
    }
    json_array_append_new(v, variable("sub", "has(request.subResource) && "
                                             "request.subResource != ''"));
    jg_buf_free(&b);
    return v;
}

/* Emits one policy-wide object and its binding per mode in use: `<prefix>-<what>-<mode>`. */
static void emit_policy_wide(struct gen *g, const struct rowset *rs, const char *what, bool status,
                             json_t *variables, struct vals *vs) {
    type_check(vs, "managedBy");
    for (int m = 0; m < JG_MODE_OFF; m++) {
        if (json_array_size(vs->v[m]) == 0) {
            json_decref(vs->v[m]);
            continue;
        }
        char name[512];
        snprintf(name, sizeof name, "%s-%s-%s", g->o->prefix, what, jg_mode_name((enum jg_mode)m));
        json_t *rules = json_array();
        for (size_t i = 0; i < rs->n; i++) {
            const struct jg_policy_target *t = rs->t[i];
            json_t *versions = json_array(), *res = json_array();
            for (size_t k = 0; k < t->versions.n; k++)
                json_array_append_new(versions, json_string(t->versions.v[k]));
            json_array_append_new(res, json_string(t->resource));
            bool cron = is_builtin_batch(t, "CronJob");
            if (status && !cron) {
                char sr[300];
                snprintf(sr, sizeof sr, "%s/status", t->resource);
                json_array_append_new(res, json_string(sr));
            }
            json_array_append_new(rules, json_pack("{s:[s], s:o, s:[s, s], s:o, s:s}", "apiGroups",
                                                   t->group, "apiVersions", versions, "operations",
                                                   "CREATE", "UPDATE", "resources", res, "scope",
                                                   "Namespaced"));
        }
        json_t *policy = json_pack(
            "{s:s, s:s, s:o, s:{s:s, s:{s:s, s:o}, s:O, s:o}}", "apiVersion",
            "admissionregistration.k8s.io/v1", "kind", "ValidatingAdmissionPolicy", "metadata",
            metadata(g, name), "spec", "failurePolicy", "Fail", "matchConstraints", "matchPolicy",
            "Equivalent", "resourceRules", rules, "variables", variables, "validations", vs->v[m]);
        json_array_append_new(g->out, policy);
        json_array_append_new(g->out, binding(g, name, m));
    }
    json_decref(variables);
}

/* The variables of a policy-wide object and its table `name` (the expression `tab`, freed). */
static json_t *table_variables(const struct rowset *rs, const char *name, char *tab) {
    json_t *v = rowset_variables(rs);
    json_array_append_new(v, variable(name, tab));
    jg_free(tab);
    return v;
}

/* Policy-AllowedControllers (docs/rules.md §11.1) for every row: CREATE, and UPDATE when the
 * value changed, of the main resource. */
static void allowed_controllers(struct gen *g, const struct rowset *rs) {
    const struct jg_policy *p = g->cfg->policy;
    if (!p || p->allow_unlisted_controllers) return;
    struct vals vs;
    new_vals(&vs);
    json_t *v = table_variables(rs, "ctl", ctl_table(p));
    static const char admits[] = "(c[1] == '' || (c[1] != '-' && variables.ns.matches(c[1])))";
    jg_buf e = JG_BUF_INIT, m = JG_BUF_INIT;
    jg_buf_printf(&e,
                  "variables.row < 0 || variables.sub || !variables.changed || !variables.hasMb || "
                  "variables.mb == variables.reserved || variables.ctl.exists(c, c[0] == "
                  "variables.mb && %s)",
                  admits);
    /* jobguard's text: the names allowed here and the reserved value, sorted, then the notes */
    jg_buf_puts(&m, "variables.field + ': Unsupported value: ' + ");
    goq(&m, "variables.mb");
    jg_buf_printf(&m,
                  " + ': supported values: ' + [variables.ctl.filter(c, %s)].map(l, "
                  "l.filter(c, c[0] < variables.reserved).map(c, c[2]) + [variables.reservedQ] + "
                  "l.filter(c, c[0] > variables.reserved).map(c, c[2]))[0].join(', ') + "
                  "variables.ctl.filter(c, c[0] == variables.mb).map(c, c[3]).join('')",
                  admits);
    add(g, &vs, JG_R_POLICY_ALLOWED_CONTROLLERS, e.data,
        "managedBy: Unsupported value: not a controller the policy allows in this namespace "
        "(Policy-AllowedControllers)",
        m.data, "Invalid");
    jg_buf_free(&e);
    jg_buf_free(&m);
    emit_policy_wide(g, rs, "allowed-controllers", false, v, &vs);
}

/* The user may write the status of objects managed by the value of `x` (docs/rules.md §11.2):
 * an exempt group, no entry binding it here, or an entry binding it here that lists the user or
 * one of the groups. */
static void writer_ok(jg_buf *b, const struct jg_policy *p, const char *x) {
    jg_buf here = JG_BUF_INIT;
    jg_buf_printf(&here, "w[0] == 'n:' + %s && ", x);
    ns_admits(&here, "w[1]", "r:");
    jg_buf_puts(b, GROUPS_HAVE);
    lit_list(b, &p->status_writer_exempt);
    jg_buf_printf(b,
                  ")) || !variables.wtab.exists(w, %s) || variables.wtab.exists(w, %s && "
                  "(('u:' + request.userInfo.username) in w || (has(request.userInfo.groups) && "
                  "request.userInfo.groups.exists(x, ('g:' + x) in w))))",
                  here.data, here.data);
    jg_buf_free(&here);
}

/* Policy-StatusWriters (docs/rules.md §11.2) for every row: `<resource>/status` UPDATEs, and a
 * main-resource UPDATE that changes status (a CRD without the status subresource; not Job and
 * CronJob, whose status is a subresource): the stored controller, then the new one if it
 * differs. */
static void status_writers(struct gen *g, const struct rowset *rs) {
    const struct jg_policy *p = g->cfg->policy;
    bool any = false;
    for (size_t i = 0; p && i < p->n_controllers; i++)
        any |= p->controllers[i].has_status_writers;
    if (!any) return;
    struct vals vs;
    new_vals(&vs);
    json_t *v = table_variables(rs, "wtab", writers_table(p));
    jg_buf b = JG_BUF_INIT;
    writer_ok(&b, p, "variables.oldMb");
    json_array_append_new(v, variable("okOld", b.data));
    jg_buf_reset(&b);
    writer_ok(&b, p, "variables.mb");
    json_array_append_new(v, variable("okNew", b.data));
    jg_buf_reset(&b);
    jg_buf_puts(&b, "'User ' + ");
    goq(&b, "request.userInfo.username");
    jg_buf_puts(&b, " + ' cannot update the status of a ' + variables.kind + ' managed by ' + "
                    "(variables.hasOld && !variables.okOld ? ");
    goq(&b, "variables.oldMb");
    jg_buf_puts(&b, " : ");
    goq(&b, "variables.mb");
    jg_buf_putc(&b, ')');
    jg_buf e = JG_BUF_INIT, batch = JG_BUF_INIT;
    for (size_t i = 0; i < rs->n; i++)
        if (is_builtin_batch(rs->t[i], "Job") || is_builtin_batch(rs->t[i], "CronJob"))
            jg_buf_printf(&batch, "%s%zu", batch.len ? ", " : "", i);
    jg_buf_printf(&e,
                  "variables.row < 0 || (!variables.sub && (variables.row in [%s] || "
                  "request.operation != 'UPDATE' || (has(object.status) == has(oldObject.status) "
                  "&& (!has(object.status) || object.status == oldObject.status)))) || "
                  "((!variables.hasOld || variables.okOld) && (!variables.hasMb || "
                  "(variables.hasOld && variables.mb == variables.oldMb) || variables.okNew))",
                  batch.data ? batch.data : "");
    add(g, &vs, JG_R_POLICY_STATUS_WRITERS, e.data,
        "the user may not update the status of an object managed by this controller "
        "(Policy-StatusWriters)",
        b.data, "Forbidden");
    jg_buf_free(&b);
    jg_buf_free(&e);
    jg_buf_free(&batch);
    emit_policy_wide(g, rs, "status-writers", true, v, &vs);
}

/* For --explain: what the policy-wide objects do for the current row. */
static void explain_policy_wide(struct gen *g, bool job, bool cron) {
    const struct jg_policy *p = g->cfg->policy;
    if (!p || p->allow_unlisted_controllers)
        explain(g, JG_R_POLICY_ALLOWED_CONTROLLERS, "no (nothing to check)",
                "no policy, or it allows unlisted controllers");
    else
        explain(g, JG_R_POLICY_ALLOWED_CONTROLLERS, NULL,
                "CREATE, and UPDATE when the value changed: the reserved value, or a listed "
                "controller whose namespace globs (one anchored RE2 alternative) match "
                "`request.namespace`; a value listed only for other namespaces gets jobguard's "
                "`is allowed only in namespaces` note (one object for every kind, its table "
                "written once)");
    if (cron) return;
    bool any = false;
    for (size_t i = 0; p && i < p->n_controllers; i++)
        any |= p->controllers[i].has_status_writers;
    if (!any) {
        explain(g, JG_R_POLICY_STATUS_WRITERS, "no (nothing to check)",
                "no policy entry binds status writers");
        return;
    }
    if (!job)
        explain(g, JG_R_POLICY_STATUS_WRITERS, NULL,
                "a main-resource UPDATE that changes `status` (CEL equality; jobguard compares "
                "bytes): the same test");
    explain(g, JG_R_POLICY_STATUS_WRITERS, NULL,
            "`<resource>/status` UPDATE: an exempt group, no entry binding the stored or new "
            "controller, or a user or group listed by that entry (one object for every kind)");
}

/* The row's own policies: the rules that do not depend on the controller list. */
static bool row(struct gen *g, const struct jg_policy_target *t, bool by_version) {
    if (!path_ok(t->managed_by_path))
        return fail(g, "managedByPath has a field CEL cannot select", t->managed_by_path);
    for (size_t i = 0; i < t->n_nested; i++)
        if (!path_ok(t->nested[i].path))
            return fail(g, "nested path has a field CEL cannot select", t->nested[i].path);
    g->t = t;
    g->by_version = by_version;
    struct vals vs;
    new_vals(&vs);
    const char *field = t->managed_by_path;
    bool job = is_builtin_batch(t, "Job"), cron = is_builtin_batch(t, "CronJob");
    if (job || cron) {
        if (g->o->job_rules) format_rules(g, &vs, field, "true");
        if (g->o->job_rules && job) immutable_rule(g, &vs, field);
        static const char native[] = "the API server checks batch/v1 Job and CronJob itself from "
                                     "1.32; `--job-rules` or a version below 1.32 emits the rule";
        for (int r = JG_R_MANAGED_BY_FORMAT; !g->o->job_rules && r <= JG_R_MANAGED_BY_IMMUTABLE;
             r++)
            if (job || r != JG_R_MANAGED_BY_IMMUTABLE) explain(g, r, "no (API server)", native);
    } else {
        if (t->check_format) format_rules(g, &vs, field, "variables.changed");
        immutable_rule(g, &vs, field);
        delegation_rule(g, &vs, t);
        nested_rules(g, &vs, t);
    }
    explain_policy_wide(g, job, cron);
    emit(g, t, by_version, main_variables(g, t), &vs);
    return true;
}

/* Two rows of one group and resource (MPIJob): each matches its own versions exactly. */
static bool shared_resource(const struct jg_policy_target *const *rows, size_t n, size_t i) {
    for (size_t k = 0; k < n; k++)
        if (k != i && strcmp(rows[k]->group, rows[i]->group) == 0 &&
            strcmp(rows[k]->resource, rows[i]->resource) == 0)
            return true;
    return false;
}

static json_t *build(const struct jg_config *cfg, const struct jg_vap_options *o, json_t *ex,
                     char *err, size_t errcap) {
    struct gen g = {
        .cfg = cfg, .o = o, .out = json_array(), .err = err, .errcap = errcap, .explain = ex};
    const struct jg_policy *p = cfg->policy;
    size_t cap = jg_builtin_target_count + (p ? p->n_targets : 0), n = 0;
    const struct jg_policy_target **rows = malloc(cap * sizeof *rows);
    for (size_t i = 0; p && i < p->n_targets; i++)
        rows[n++] = &p->targets[i];
    for (size_t i = 0; i < jg_builtin_target_count; i++)
        if (!jg_target_builtin_replaced(p, i)) rows[n++] = &jg_builtin_targets[i];
    bool ok = true, *by_version = calloc(n + 1, sizeof *by_version);
    for (size_t i = 0; ok && i < n; i++)
        ok = row(&g, rows[i], by_version[i] = shared_resource(rows, n, i));
    /* the controller list's rules: one object per mode for every row, so that their size does
     * not grow with controllers x rows (docs/vap.md "Size") */
    struct rowset rs = {rows, by_version, n};
    if (ok) allowed_controllers(&g, &rs);
    if (ok) status_writers(&g, &rs);
    free(by_version);
    free(rows);
    jg_buf_free(&g.b);
    if (!ok) {
        json_decref(g.out);
        return NULL;
    }
    return g.out;
}

json_t *jg_vap_build(const struct jg_config *cfg, const struct jg_vap_options *o, char *err,
                     size_t errcap) {
    return build(cfg, o, NULL, err, errcap);
}

/* Appends `s` to the ", "-separated list in o[key] unless it is there. */
static void list_add(json_t *o, const char *key, const char *s) {
    const char *cur = json_string_value(json_object_get(o, key));
    if (!cur) {
        json_object_set_new(o, key, json_string(s));
        return;
    }
    size_t n = strlen(s);
    for (const char *q = cur; (q = strstr(q, s)) != NULL; q += n)
        if ((q == cur || q[-1] == ' ') && (q[n] == '\0' || q[n] == ',')) return;
    jg_buf b = JG_BUF_INIT;
    jg_buf_printf(&b, "%s, %s", cur, s);
    json_object_set_new(o, key, json_string(b.data));
    jg_buf_free(&b);
}

/* Merges entries equal in everything but `key` into one, listing their `key`s. */
static json_t *merge(json_t *in, const char *key, const char *k1, const char *k2, const char *k3) {
    json_t *out = json_array();
    size_t i, j;
    json_t *e, *x;
    json_array_foreach(in, i, e) {
        json_t *hit = NULL;
        json_array_foreach(out, j, x) {
            if (json_equal(json_object_get(x, k1), json_object_get(e, k1)) &&
                json_equal(json_object_get(x, k2), json_object_get(e, k2)) &&
                json_equal(json_object_get(x, k3), json_object_get(e, k3))) {
                hit = x;
                break;
            }
        }
        if (hit) {
            list_add(hit, key, json_string_value(json_object_get(e, key)));
        } else {
            json_array_append_new(out, json_deep_copy(e));
        }
    }
    json_decref(in);
    return out;
}

json_t *jg_vap_explain(const struct jg_config *cfg, const struct jg_vap_options *o, char *err,
                       size_t errcap) {
    json_t *ex = json_array();
    json_t *objs = build(cfg, o, ex, err, errcap);
    if (!objs) {
        json_decref(ex);
        return NULL;
    }
    json_decref(objs);
    /* the rules the generator never looked at: the Job status rules (docs/rules.md §3) */
    for (int r = 0; r < JG_RULE_COUNT; r++) {
        size_t i;
        json_t *e;
        bool seen = false;
        json_array_foreach(ex, i, e) seen |=
            strcmp(json_string_value(json_object_get(e, "rule")), jg_rules[r].name) == 0;
        if (!seen)
            json_array_append_new(
                ex, json_pack("{s:s, s:s, s:s, s:s}", "rule", jg_rules[r].name, "target", "Job",
                              "vap", "no (webhook only)", "how",
                              "a Job status rule: it needs the stored spec, time arithmetic or "
                              "index-list parsing that CEL cannot do exactly within the cost "
                              "limits"));
    }
    ex = merge(ex, "target", "rule", "vap", "how");
    return merge(ex, "rule", "target", "vap", "how");
}
