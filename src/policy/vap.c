/* vap: compiles the target rows and the policy into ValidatingAdmissionPolicy objects
 * (docs/vap.md). One policy (and binding) per row and mode in use, one more for the row's
 * <resource>/status when the policy binds status writers. Only standard CEL, RE2 `matches` and
 * the Kubernetes strings library (indexOf, substring, replace, join: every version since 1.27). */
#include "jobguard/vap.h"

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
    if (!vap) vap = (g->cfg->disabled >> rule & 1) || m == JG_MODE_OFF ? "no (mode off)" : actions[m];
    char target[300];
    snprintf(target, sizeof target, "%s%s%s", g->t->kind, g->by_version ? " " : "",
             g->by_version ? g->t->versions.v[0] : "");
    json_array_append_new(g->explain, json_pack("{s:s, s:s, s:s, s:s}", "rule",
                                                jg_rules[rule].name, "target", target, "vap", vap,
                                                "how", how));
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
    "true",    "false",   "null", "in",     "as",   "break",     "const",  "continue", "else",
    "for",     "function", "if",  "import", "let",  "loop",      "package", "namespace", "return",
    "var",     "void",    "while"};

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
        if (strncmp(p, "[*]", 3) == 0) p += 3;
        if (*p == '.') p++;
    }
    return true;
}

/* `has(r.a) && has(r.a.b) ...` for a path without "[*]" below root expression r. */
static void has_chain(jg_buf *b, const char *root, const char *path, size_t len) {
    for (size_t i = 0, first = 1; i <= len; i++) {
        if (i < len && path[i] != '.') continue;
        if (!first) jg_buf_puts(b, " && ");
        first = 0;
        jg_buf_printf(b, "has(%s.%.*s)", root, (int)i, path);
    }
}

static json_t *variable(const char *name, const char *expr) {
    return json_pack("{s:s, s:s}", "name", name, "expression", expr);
}

/* Variables of a main-resource policy at the row's path: hasMb, mb, hasOld, oldMb, changed,
 * host, path. */
static json_t *main_variables(struct gen *g, const char *field) {
    json_t *v = json_array();
    jg_buf *b = &g->b;
    static const char *const names[2][3] = {{"hasMb", "mb", "object"},
                                            {"hasOld", "oldMb", "oldObject"}};
    for (int k = 0; k < 2; k++) { /* the new object's value, then the stored one's */
        jg_buf_reset(b);
        jg_buf_puts(b, k ? "(oldObject != null && " : "(");
        has_chain(b, names[k][2], field, strlen(field));
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

static void add(struct gen *g, struct vals *vs, int rule, const char *expr, const char *msg,
                const char *msg_expr, const char *reason) {
    unsigned m = g->cfg->mode[rule];
    if (m >= JG_MODE_COUNT) m = JG_MODE_DENY;
    if ((g->cfg->disabled >> rule & 1) || m == JG_MODE_OFF) return;
    json_t *o = json_pack("{s:s, s:s}", "expression", expr, "reason", reason);
    if (msg) json_object_set_new(o, "message", json_string(msg));
    if (msg_expr) json_object_set_new(o, "messageExpression", json_string(msg_expr));
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

/* The CEL condition "controller c may be named in request.namespace". */
static void ns_cond(jg_buf *b, const struct jg_policy_controller *c) {
    if (c->namespaces.n == 0) {
        jg_buf_puts(b, "true");
        return;
    }
    jg_buf re;
    re = (jg_buf)JG_BUF_INIT;
    size_t alts = 0;
    for (size_t i = 0; i < c->namespaces.n; i++) {
        size_t mark = re.len;
        if (alts) jg_buf_putc(&re, '|');
        if (glob_re(&re, c->namespaces.v[i])) {
            alts++;
        } else {
            re.len = mark; /* a glob that matches no namespace adds no alternative */
            if (re.data) re.data[mark] = '\0';
        }
    }
    if (alts == 0) {
        jg_buf_puts(b, "false");
    } else {
        jg_buf_puts(b, "request.namespace.matches(");
        char *r = NULL;
        jg_buf tmp;
        tmp = (jg_buf)JG_BUF_INIT;
        jg_buf_printf(&tmp, "^(%s)$", re.data);
        r = tmp.data;
        lit(b, r);
        jg_buf_putc(b, ')');
        jg_buf_free(&tmp);
    }
    jg_buf_free(&re);
}

static int cmp_cstr(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Policy-AllowedControllers (docs/rules.md §11.1) at `field`; gate: the CEL condition under
 * which the rule runs. */
static void allowed_controllers(struct gen *g, struct vals *vs, const char *field,
                                const char *reserved, const char *gate) {
    const struct jg_policy *p = g->cfg->policy;
    if (!p || p->allow_unlisted_controllers) {
        explain(g, JG_R_POLICY_ALLOWED_CONTROLLERS, "no (nothing to check)",
                "no policy, or it allows unlisted controllers");
        return;
    }
    explain(g, JG_R_POLICY_ALLOWED_CONTROLLERS, NULL,
            "CREATE, and UPDATE when the value changed: the reserved value, or a listed controller "
            "whose namespace globs (one anchored RE2 alternative) match `request.namespace`; a "
            "value listed only for other namespaces gets jobguard's `is allowed only in "
            "namespaces` note");
    jg_buf e, m;
    e = (jg_buf)JG_BUF_INIT;
    m = (jg_buf)JG_BUF_INIT;
    jg_buf_printf(&e, "!(%s) || !variables.hasMb || variables.mb == ", gate);
    lit(&e, reserved);
    for (size_t i = 0; i < p->n_controllers; i++) {
        jg_buf_puts(&e, " || (variables.mb == ");
        lit(&e, p->controllers[i].name);
        jg_buf_puts(&e, " && ");
        ns_cond(&e, &p->controllers[i]);
        jg_buf_putc(&e, ')');
    }
    /* supported values: the reserved one and the names listed here, sorted, once each */
    const char **names = malloc((p->n_controllers + 1) * sizeof *names);
    size_t n = 0;
    names[n++] = reserved;
    for (size_t i = 0; i < p->n_controllers; i++)
        names[n++] = p->controllers[i].name;
    qsort(names, n, sizeof *names, cmp_cstr);
    char *head = msg_value(field, "Unsupported value", "variables.mb", false, ": supported values: ");
    jg_buf_puts(&m, head);
    jg_free(head);
    jg_buf_puts(&m, " + (");
    for (size_t i = 0; i < n; i++) {
        if (i && strcmp(names[i], names[i - 1]) == 0) continue;
        jg_buf tmp;
        tmp = (jg_buf)JG_BUF_INIT;
        jg_buf_go_quote(&tmp, names[i], strlen(names[i]));
        if (i) jg_buf_puts(&m, " + ");
        jg_buf_puts(&m, "((");
        if (strcmp(names[i], reserved) == 0) {
            jg_buf_puts(&m, "true");
        } else {
            for (size_t k = 0, any = 0; k < p->n_controllers; k++) {
                if (strcmp(p->controllers[k].name, names[i]) != 0) continue;
                if (any++) jg_buf_puts(&m, " || ");
                ns_cond(&m, &p->controllers[k]);
            }
        }
        jg_buf_puts(&m, ") ? [");
        lit(&m, tmp.data);
        jg_buf_puts(&m, "] : [])");
        jg_buf_free(&tmp);
    }
    jg_buf_puts(&m, ").join(', ')");
    /* a value refused only because its controller is limited to other namespaces says where it
     * is allowed (rules.c namespace_note): the same globs, at most 8, then "and N more" */
    for (size_t i = 0; i < p->n_controllers; i++) {
        const struct jg_policy_controller *c = &p->controllers[i];
        if (!c->namespaces.n) continue;
        jg_buf note;
        note = (jg_buf)JG_BUF_INIT;
        jg_buf_puts(&note, "; ");
        jg_buf_go_quote(&note, c->name, strlen(c->name));
        jg_buf_puts(&note, " is allowed only in namespaces ");
        size_t k = c->namespaces.n < 8 ? c->namespaces.n : 8;
        for (size_t j = 0; j < k; j++)
            jg_buf_printf(&note, "%s%s", j ? ", " : "", c->namespaces.v[j]);
        if (c->namespaces.n > k) jg_buf_printf(&note, " and %zu more", c->namespaces.n - k);
        jg_buf_puts(&m, " + (variables.mb == ");
        lit(&m, c->name);
        jg_buf_puts(&m, " ? ");
        lit(&m, note.data);
        jg_buf_puts(&m, " : '')");
        jg_buf_free(&note);
    }
    free(names);
    add(g, vs, JG_R_POLICY_ALLOWED_CONTROLLERS, e.data, NULL, m.data, "Invalid");
    jg_buf_free(&e);
    jg_buf_free(&m);
}

/* Format and length (docs/rules.md §2.2, §2.3) at `field` when `gate` holds and a value is set. */
static void format_rules(struct gen *g, struct vals *vs, const char *field, const char *gate) {
    bool always = strcmp(gate, "true") == 0;
    explain(g, JG_R_MANAGED_BY_FORMAT, NULL,
            always ? "every CREATE and UPDATE: not empty; RE2 `matches` on the whole value, its host "
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
    char *m = msg_value(field, "Invalid value", "variables.mb", false,
                        ": must be a domain-prefixed path (such as \"acme.io/foo\")");
    add(g, vs, JG_R_MANAGED_BY_FORMAT, e.data, NULL, m, "Invalid");
    jg_free(m);
    G("!%s || size(bytes(variables.host)) <= 253", prefixed);
    m = msg_value(field, "Invalid value", "variables.host", false,
                  ": must be no more than 253 characters");
    add(g, vs, JG_R_MANAGED_BY_FORMAT, e.data, NULL, m, "Invalid");
    jg_free(m);
    G("!%s || variables.host.matches(r\"%s\")", prefixed, SUBDOMAIN_RE);
    char tail[600];
    snprintf(tail, sizeof tail, ": %s", jg_subdomain_detail);
    m = msg_value(field, "Invalid value", "variables.host", false, tail);
    add(g, vs, JG_R_MANAGED_BY_FORMAT, e.data, NULL, m, "Invalid");
    jg_free(m);
    G("!%s || variables.path.matches(r\"%s\")", prefixed, PATH_RE);
    snprintf(tail, sizeof tail, ": %s", jg_path_detail);
    m = msg_value(field, "Invalid value", "variables.path", false, tail);
    add(g, vs, JG_R_MANAGED_BY_FORMAT, e.data, NULL, m, "Invalid");
    jg_free(m);
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
    add(g, vs, JG_R_MANAGED_BY_IMMUTABLE,
        "request.operation != 'UPDATE' || (variables.hasMb == variables.hasOld && "
        "variables.mb == variables.oldMb)",
        NULL, m.data, "Invalid");
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
    has_chain(b, oroot, rest, n);
    if (rest[n] == '\0') {
        jg_buf_printf(b, " && %s == %s)", oldv, newv);
        return;
    }
    const char *key = nd->list_keys.v[level];
    char o[16], e[16];
    snprintf(o, sizeof o, "o%d", level);
    snprintf(e, sizeof e, "e%d", level);
    jg_buf_printf(b, " && %s.exists(%s, has(%s.%s) && has(%s.%s) && %s.%s == %s.%s && ", oldv, o,
                  o, key, e, key, o, key, e, key);
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
    has_chain(b, nroot, rest, n);
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
    jg_buf_printf(b, "%s.all(%s, ", v, e);
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
                by_index ? "a `[*]` list matched by index (no listKey): standard CEL has no element "
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
            jg_buf_putc(&b, ')');
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
                char *m = msg_value(nd->path, "Unsupported value", expr, false, tail);
                add(g, vs, JG_R_TARGET_NESTED_MANAGED_BY, b.data, NULL, m, "Invalid");
                jg_free(m);
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
    char *m = msg_value(t->managed_by_path, "Invalid value", "variables.mb", false, tail.data);
    add(g, vs, JG_R_TARGET_DELEGATION_UNSUPPORTED, e.data, NULL, m, "Invalid");
    jg_free(m);
    jg_buf_free(&e);
    jg_buf_free(&tail);
}

/* "<prefix>-<resource>.<group>[-<version>][-status]-<mode>" */
static void object_name(char *out, size_t cap, struct gen *g, const struct jg_policy_target *t,
                        bool by_version, bool status, int mode) {
    snprintf(out, cap, "%s-%s%s%s%s%s%s-%s", g->o->prefix, t->resource, t->group[0] ? "." : "",
             t->group, by_version ? "-" : "", by_version ? t->versions.v[0] : "",
             status ? "-status" : "", jg_mode_name((enum jg_mode)mode));
}

/* Appends one policy and its binding per mode that has validations. */
static void emit(struct gen *g, const struct jg_policy_target *t, bool by_version, bool status,
                 json_t *variables, struct vals *vs) {
    for (int m = 0; m < JG_MODE_OFF; m++) {
        if (json_array_size(vs->v[m]) == 0) {
            json_decref(vs->v[m]);
            continue;
        }
        char name[512], res[300];
        object_name(name, sizeof name, g, t, by_version, status, m);
        snprintf(res, sizeof res, "%s%s", t->resource, status ? "/status" : "");
        json_t *versions = json_array();
        for (size_t i = 0; i < t->versions.n; i++)
            json_array_append_new(versions, json_string(t->versions.v[i]));
        json_t *rule = json_pack("{s:[s], s:o, s:o, s:[s]}", "apiGroups", t->group, "apiVersions",
                                 versions, "operations",
                                 status ? json_pack("[s]", "UPDATE")
                                        : json_pack("[s, s]", "CREATE", "UPDATE"),
                                 "resources", res);
        json_t *labels = json_pack("{s:s}", "app.kubernetes.io/managed-by", "jobguard");
        json_t *policy = json_pack(
            "{s:s, s:s, s:{s:s, s:o}, s:{s:s, s:{s:s, s:[o]}, s:O, s:o}}", "apiVersion",
            "admissionregistration.k8s.io/v1", "kind", "ValidatingAdmissionPolicy", "metadata",
            "name", name, "labels", json_deep_copy(labels), "spec", "failurePolicy", "Fail",
            "matchConstraints", "matchPolicy", by_version ? "Exact" : "Equivalent",
            "resourceRules", rule, "variables", variables, "validations", vs->v[m]);
        json_t *binding = json_pack(
            "{s:s, s:s, s:{s:s, s:o}, s:{s:s, s:[s]}}", "apiVersion",
            "admissionregistration.k8s.io/v1", "kind", "ValidatingAdmissionPolicyBinding",
            "metadata", "name", name, "labels", labels, "spec", "policyName", name,
            "validationActions", actions[m]);
        json_array_append_new(g->out, policy);
        json_array_append_new(g->out, binding);
    }
    json_decref(variables);
}

static void new_vals(struct vals *vs) {
    for (int m = 0; m < JG_MODE_OFF; m++)
        vs->v[m] = json_array();
}

/* The user may write the status of objects managed by the value of `v` (a variable name) under
 * the policy (docs/rules.md §11.2): an exempt group, no binding entry, or a listed writer. */
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

static void writer_ok(jg_buf *b, const struct jg_policy *p, const char *v) {
    jg_buf_puts(b, "(" GROUPS_HAVE);
    lit_list(b, &p->status_writer_exempt);
    jg_buf_puts(b, "))");
    /* pass 0: "no entry binds it"; pass 1: "an entry binding it lists the user or a group" */
    for (int pass = 0; pass < 2; pass++) {
        jg_buf_puts(b, pass ? "" : " || !(false");
        for (size_t i = 0; i < p->n_controllers; i++) {
            const struct jg_policy_controller *c = &p->controllers[i];
            if (!c->has_status_writers) continue;
            jg_buf_printf(b, " || (%s == ", v);
            lit(b, c->name);
            jg_buf_puts(b, " && ");
            ns_cond(b, c);
            if (pass) {
                jg_buf_puts(b, " && (request.userInfo.username in ");
                lit_list(b, &c->writer_users);
                jg_buf_puts(b, " || " GROUPS_HAVE);
                lit_list(b, &c->writer_groups);
                jg_buf_puts(b, ")))");
            }
            jg_buf_putc(b, ')');
        }
        jg_buf_puts(b, pass ? "" : ")");
    }
    jg_buf_putc(b, ')');
}

/* Policy-StatusWriters (docs/rules.md §11.2): the stored controller, then the new one if it
 * differs, unless `skip` holds. Adds okOld/okNew to the variables v. False: nothing to bind. */
static bool writers_rule(struct gen *g, struct vals *vs, json_t *v, const char *kind,
                         const char *skip) {
    const struct jg_policy *p = g->cfg->policy;
    bool any = false;
    for (size_t i = 0; p && i < p->n_controllers; i++)
        any |= p->controllers[i].has_status_writers;
    bool on_status = strcmp(skip, "false") == 0;
    if (!any) {
        explain(g, JG_R_POLICY_STATUS_WRITERS, "no (nothing to check)",
                "no policy entry binds status writers");
        return false;
    }
    explain(g, JG_R_POLICY_STATUS_WRITERS, NULL,
            on_status ? "`<resource>/status` UPDATE: an exempt group, no entry binding the stored "
                        "or new controller, or a user or group listed by that entry"
                      : "a main-resource UPDATE that changes `status` (CEL equality; jobguard "
                        "compares bytes): the same test");
    jg_buf b = JG_BUF_INIT;
    writer_ok(&b, p, "variables.oldMb");
    json_array_append_new(v, variable("okOld", b.data));
    jg_buf_reset(&b);
    writer_ok(&b, p, "variables.mb");
    json_array_append_new(v, variable("okNew", b.data));
    jg_buf_reset(&b);
    char head[600];
    snprintf(head, sizeof head, " cannot update the status of a %s managed by ", kind);
    jg_buf_puts(&b, "'User ' + ");
    goq(&b, "request.userInfo.username");
    jg_buf_puts(&b, " + ");
    lit(&b, head);
    jg_buf_puts(&b, " + (variables.hasOld && !variables.okOld ? ");
    goq(&b, "variables.oldMb");
    jg_buf_puts(&b, " : ");
    goq(&b, "variables.mb");
    jg_buf_putc(&b, ')');
    jg_buf e = JG_BUF_INIT;
    jg_buf_printf(&e,
                  "(%s) || ((!variables.hasOld || variables.okOld) && (!variables.hasMb || "
                  "(variables.hasOld && variables.mb == variables.oldMb) || variables.okNew))",
                  skip);
    add(g, vs, JG_R_POLICY_STATUS_WRITERS, e.data, NULL, b.data, "Forbidden");
    jg_buf_free(&b);
    jg_buf_free(&e);
    return true;
}

/* Policy-StatusWriters on <resource>/status UPDATE. */
static void status_policy(struct gen *g, const struct jg_policy_target *t, bool by_version) {
    json_t *v = main_variables(g, t->managed_by_path);
    struct vals vs;
    new_vals(&vs);
    if (writers_rule(g, &vs, v, t->kind, "false")) {
        emit(g, t, by_version, true, v, &vs);
    } else {
        for (int m = 0; m < JG_MODE_OFF; m++)
            json_decref(vs.v[m]);
        json_decref(v);
    }
}

static bool is_builtin_batch(const struct jg_policy_target *t, const char *kind) {
    return strcmp(t->group, "batch") == 0 && strcmp(t->kind, kind) == 0;
}

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
    if (is_builtin_batch(t, "Job") || is_builtin_batch(t, "CronJob")) {
        bool job = is_builtin_batch(t, "Job");
        if (g->o->job_rules) format_rules(g, &vs, field, "true");
        if (g->o->job_rules && job) immutable_rule(g, &vs, field);
        static const char native[] = "the API server checks batch/v1 Job and CronJob itself from "
                                     "1.32; `--job-rules` or a version below 1.32 emits the rule";
        for (int r = JG_R_MANAGED_BY_FORMAT; !g->o->job_rules && r <= JG_R_MANAGED_BY_IMMUTABLE; r++)
            if (job || r != JG_R_MANAGED_BY_IMMUTABLE) explain(g, r, "no (API server)", native);
        /* like every kind, only when the value changes (docs/rules.md §11.1) */
        allowed_controllers(g, &vs, field, t->reserved_value, "variables.changed");
        emit(g, t, by_version, false, main_variables(g, field), &vs);
        if (job) status_policy(g, t, by_version);
        return true;
    }
    if (t->check_format) format_rules(g, &vs, field, "variables.changed");
    immutable_rule(g, &vs, field);
    delegation_rule(g, &vs, t);
    nested_rules(g, &vs, t);
    allowed_controllers(g, &vs, field, t->reserved_value, "variables.changed");
    json_t *v = main_variables(g, field);
    /* a main-resource UPDATE that changes status (a CRD without the status subresource) */
    writers_rule(g, &vs, v, t->kind,
                 "request.operation != 'UPDATE' || (has(object.status) == "
                 "has(oldObject.status) && (!has(object.status) || object.status == "
                 "oldObject.status))");
    emit(g, t, by_version, false, v, &vs);
    status_policy(g, t, by_version);
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
    struct gen g = {.cfg = cfg, .o = o, .out = json_array(), .err = err, .errcap = errcap,
                    .explain = ex};
    const struct jg_policy *p = cfg->policy;
    size_t cap = jg_builtin_target_count + (p ? p->n_targets : 0), n = 0;
    const struct jg_policy_target **rows = malloc(cap * sizeof *rows);
    for (size_t i = 0; p && i < p->n_targets; i++)
        rows[n++] = &p->targets[i];
    for (size_t i = 0; i < jg_builtin_target_count; i++)
        if (!jg_target_builtin_replaced(p, i)) rows[n++] = &jg_builtin_targets[i];
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++)
        ok = row(&g, rows[i], shared_resource(rows, n, i));
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
        if ((q == cur || q[-1] == ' ') && (q[n] == '\0' || q[n] == ','))
            return;
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
        json_array_foreach(ex, i, e) seen |= strcmp(json_string_value(json_object_get(e, "rule")),
                                                    jg_rules[r].name) == 0;
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
