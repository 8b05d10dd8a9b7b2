/* jobguard scan: which stored objects already break a rule. Every object of a target kind in the
 * input (files, folders, stdin; `kubectl get ... -o json` Lists one item at a time) is checked
 * as a CREATE of what is stored, through the same decoder and rules as the server; the rules that
 * need an old object or the requesting user cannot be checked and are listed as such
 * (docs/scan.md). Text and JSON stream as objects come; PolicyReports keep one compact record per
 * object, never the object. */
#include "cli.h"
#include "jobguard/admit.h"
#include "jobguard/policy.h"
#include "jobguard/reader.h"

#include "flags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_CLEAN = 0, EXIT_BROKEN = 1, EXIT_BAD_INPUT = 2 };
enum output { OUT_TEXT, OUT_JSON, OUT_POLICYREPORT, OUT_OPENREPORTS };

#define BIT(r) (UINT64_C(1) << (r))
/* The rules a CREATE of a stored object exercises; every other one needs the old object (the
 * immutability and status rules) or the user who writes (the status writers). */
#define CHECKABLE                                                                                  \
    (BIT(JG_R_MANAGED_BY_FORMAT) | BIT(JG_R_MANAGED_BY_LENGTH) |                                   \
     BIT(JG_R_TARGET_NESTED_MANAGED_BY) | BIT(JG_R_TARGET_DELEGATION_UNSUPPORTED) |                \
     BIT(JG_R_POLICY_ALLOWED_CONTROLLERS))
#define MAX_SKIPPED_KINDS 64 /* kinds counted by name; more are counted together */
#define MAX_KEPT_ERRORS 1000 /* unreadable documents listed in JSON output; more are counted */
#define REPORT_RESULTS 1000  /* results per PolicyReport; more continue in the next one */
/* Bytes of results per PolicyReport; more continue in the next one. etcd stores at most 1.5 MiB
 * an object, and `kubectl apply` (client side) keeps a second copy of what it applies in an
 * annotation: twice this, with the report's other fields, stays below it. */
#define REPORT_BYTES ((size_t)512 << 10)
/* The most of one result's message a report keeps (a managedBy value of 200 KB is quoted in its
 * message); the rest is cut, and the cut says so. */
#define REPORT_MESSAGE_BYTES 4096

enum {
    F_POLICY,
    F_VALUES,
    F_NAMESPACE,
    F_OUTPUT,
    F_FAIL_ON,
    F_MODE,
    F_DISABLE_RULE,
    F_PARITY,
    F_COUNT
};

static const struct jg_flag flags[F_COUNT] = {
    [F_POLICY] = JG_FLAG_POLICY_FILE,
    [F_VALUES] = JG_FLAG_VALUES,
    [F_NAMESPACE] = {"namespace", 0, "NS", "the namespace of objects that name none"},
    [F_OUTPUT] = {"output", 'o', "FORMAT",
                  "text (default), json, policyreport (wgpolicyk8s.io/v1alpha2\n"
                  "PolicyReport and ClusterPolicyReport, for kubectl apply -f -)\n"
                  "or openreports (the same as openreports.io/v1alpha1 Report\n"
                  "and ClusterReport)"},
    [F_FAIL_ON] = {"fail-on", 0, "MODE",
                   "also exit 1 for broken rules in warn mode (warn) or in warn\n"
                   "or audit mode (audit)"},
    [F_MODE] = JG_FLAG_MODE,
    [F_DISABLE_RULE] = JG_FLAG_DISABLE_RULE,
    [F_PARITY] = JG_FLAG_PARITY,
};

static const struct jg_flags spec = {
    .cmd = "scan",
    .head = "Usage: jobguard scan [options] PATH...|-\n"
            "\n"
            "Checks every stored object of a target kind in the PATHs (files, folders of\n"
            "*.json/*.yaml/*.yml, or - for stdin; JSON or YAML, several documents, Lists such as\n"
            "the output of kubectl get -o json one item at a time) as a CREATE of what is stored:\n"
            "managedBy format and length, nested copies, delegation and the policy's allowed\n"
            "controllers, each in its mode. Objects of other kinds are counted as skipped. Rules\n"
            "that need an old object or the requesting user (immutability, status writers, the\n"
            "Job status rules) cannot be checked on stored objects and are listed as such.\n"
            "\n"
            "  kubectl get jobs,cronjobs,jobsets.jobset.x-k8s.io -A -o json |\n"
            "    jobguard scan --policy-file policy.yaml -\n"
            "\n"
            "Options:\n",
    .tail = "\n"
            "Exit status (as gator test): 0 no deny-mode rule broken, 1 some broken (or, with\n"
            "--fail-on, a rule of that mode), 2 unreadable input (after reporting all the rest).\n",
    .flag = flags,
    .n = F_COUNT,
    .indent = 25,
};

/* One broken rule of one object, kept for PolicyReports. */
struct result {
    unsigned char rule, mode;
    char *field, *message; /* message: "<field>: <body>" as a denial's cause */
};

/* One object, kept for PolicyReports: what its report entries name. */
struct record {
    size_t seq; /* input order, to keep it within a namespace */
    char *api_version, *kind, *namespace_, *name, *uid;
    uint64_t passed; /* rules checked that it does not break */
    struct result *results;
    size_t n_results;
};

struct scan {
    struct jg_config cfg;
    const char *ns;
    enum output out;
    unsigned fail_on; /* bit (1 << mode) of the modes that fail the scan */
    /* counts */
    size_t objects, passed, broken_by_mode[JG_MODE_OFF], unreadable, skipped;
    size_t rule_objects[JG_RULE_COUNT], rule_errors[JG_RULE_COUNT];
    struct {
        char name[160]; /* "Kind" or "Kind.group" */
        size_t n;
    } skipped_kinds[MAX_SKIPPED_KINDS];
    size_t n_skipped_kinds, skipped_other;
    /* outputs */
    bool first_result;
    jg_buf line;
    jg_buf errors; /* JSON output: the kept error entries, comma-separated */
    size_t n_errors_kept;
    struct record *records;
    size_t n_records, cap_records;
    bool oom;
};

static char *dup_str(struct scan *s, const char *p, size_t n) {
    char *c = malloc(n + 1);
    if (!c) {
        s->oom = true;
        return NULL;
    }
    if (n) memcpy(c, p, n);
    c[n] = '\0';
    return c;
}

static void json_str(jg_buf *b, const char *s) {
    jg_buf_json_string(b, s ? s : "", s ? strlen(s) : 0);
}

static void json_slice(jg_buf *b, jg_str s) {
    jg_buf_json_string(b, s.p ? s.p : "", s.n);
}

static void flush_line(struct scan *s) {
    if (s->line.oom) s->oom = true;
    fwrite(s->line.data ? s->line.data : "", 1, s->line.len, stdout);
    jg_buf_reset(&s->line);
}

/* An unreadable document or input: on stderr at once, and kept for the JSON output. */
static void report_error(struct scan *s, const char *where, const char *what) {
    s->unreadable++;
    if (where)
        fprintf(stderr, "jobguard scan: %s: %s\n", where, what);
    else
        fprintf(stderr, "jobguard scan: %s\n", what);
    if (s->out != OUT_JSON || s->n_errors_kept >= MAX_KEPT_ERRORS) return;
    if (s->n_errors_kept++) jg_buf_putc(&s->errors, ',');
    jg_buf_puts(&s->errors, "{\"where\":");
    if (where)
        json_str(&s->errors, where);
    else
        jg_buf_puts(&s->errors, "null");
    jg_buf_puts(&s->errors, ",\"message\":");
    json_str(&s->errors, what);
    jg_buf_putc(&s->errors, '}');
}

static void count_skipped(struct scan *s, const struct jg_object_meta *m) {
    s->skipped++;
    char name[160];
    jg_str k = m->kind.s, api = m->api_version.s;
    const char *slash = api.p ? memchr(api.p, '/', api.n) : NULL;
    if (slash)
        snprintf(name, sizeof name, "%.*s.%.*s", (int)(k.n > 63 ? 63 : k.n), k.p,
                 (int)((size_t)(slash - api.p) > 90 ? 90 : slash - api.p), api.p);
    else
        snprintf(name, sizeof name, "%.*s", (int)(k.n > 63 ? 63 : k.n), k.p);
    for (size_t i = 0; i < s->n_skipped_kinds; i++)
        if (strcmp(s->skipped_kinds[i].name, name) == 0) {
            s->skipped_kinds[i].n++;
            return;
        }
    if (s->n_skipped_kinds == MAX_SKIPPED_KINDS) {
        s->skipped_other++;
        return;
    }
    snprintf(s->skipped_kinds[s->n_skipped_kinds].name, sizeof s->skipped_kinds[0].name, "%s",
             name);
    s->skipped_kinds[s->n_skipped_kinds++].n = 1;
}

/* The checkable rules that apply to this object's target and are not off. */
static uint64_t checked_rules(const struct scan *s, const struct jg_request *q) {
    uint64_t m = 0;
    const struct jg_policy_target *row = q->row;
    if (!row || row->check_format) m |= BIT(JG_R_MANAGED_BY_FORMAT) | BIT(JG_R_MANAGED_BY_LENGTH);
    if (row && row->n_nested) m |= BIT(JG_R_TARGET_NESTED_MANAGED_BY);
    if (row && !row->delegation_supported) m |= BIT(JG_R_TARGET_DELEGATION_UNSUPPORTED);
    if (s->cfg.policy) m |= BIT(JG_R_POLICY_ALLOWED_CONTROLLERS);
    for (int r = 0; r < JG_RULE_COUNT; r++)
        if (jg_rule_mode(&s->cfg, r) == JG_MODE_OFF) m &= ~BIT(r);
    return m & CHECKABLE;
}

/* What identifies an object in every output. */
struct object_ref {
    jg_str api_version, kind, namespace_, name, uid;
    const char *where;
};

static void text_row(struct scan *s, const struct object_ref *o, const char *rule, const char *mode,
                     jg_str message) {
    if (s->first_result) {
        jg_buf_printf(&s->line, "%-14s %-40s %-30s %-5s %s\n", "KIND", "NAMESPACE/NAME", "RULE",
                      "MODE", "MESSAGE");
        s->first_result = false;
    }
    char who[400];
    snprintf(who, sizeof who, "%.*s%s%.*s", (int)o->namespace_.n, o->namespace_.p,
             o->namespace_.n ? "/" : "", (int)o->name.n, o->name.p);
    jg_buf_printf(&s->line, "%-14.*s %-40s %-30s %-5s %.*s\n", (int)o->kind.n, o->kind.p, who, rule,
                  mode, (int)message.n, message.p);
    flush_line(s);
}

static void json_result(struct scan *s, const struct object_ref *o, const char *rule,
                        const char *mode, jg_str field, jg_str message) {
    jg_buf *b = &s->line;
    jg_buf_puts(b, s->first_result ? "\n" : ",\n");
    s->first_result = false;
    jg_buf_puts(b, "{\"where\":");
    json_str(b, o->where);
    jg_buf_puts(b, ",\"apiVersion\":");
    json_slice(b, o->api_version);
    jg_buf_puts(b, ",\"kind\":");
    json_slice(b, o->kind);
    jg_buf_puts(b, ",\"namespace\":");
    json_slice(b, o->namespace_);
    jg_buf_puts(b, ",\"name\":");
    json_slice(b, o->name);
    jg_buf_puts(b, ",\"uid\":");
    json_slice(b, o->uid);
    jg_buf_puts(b, ",\"rule\":");
    json_str(b, rule);
    jg_buf_printf(b, ",\"mode\":\"%s\",\"field\":", mode);
    json_slice(b, field);
    jg_buf_puts(b, ",\"message\":");
    json_slice(b, message);
    jg_buf_putc(b, '}');
    flush_line(s);
}

/* One broken rule: printed at once (text, JSON) or kept with its object (reports). */
static void emit(struct scan *s, const struct object_ref *o, struct record *rec, int rule, int mode,
                 jg_str field, jg_str message) {
    const char *id = jg_rules[rule].name, *mname = jg_mode_name((enum jg_mode)mode);
    if (s->out == OUT_TEXT) {
        text_row(s, o, id, mname, message);
    } else if (s->out == OUT_JSON) {
        json_result(s, o, id, mname, field, message);
    } else if (rec) {
        struct result *v = realloc(rec->results, (rec->n_results + 1) * sizeof *v);
        if (!v) {
            s->oom = true;
            return;
        }
        rec->results = v;
        v[rec->n_results++] =
            (struct result){(unsigned char)rule, (unsigned char)mode, dup_str(s, field.p, field.n),
                            dup_str(s, message.p, message.n)};
    }
}

static struct record *new_record(struct scan *s, const struct object_ref *o) {
    if (s->n_records == s->cap_records) {
        size_t cap = s->cap_records ? s->cap_records * 2 : 64;
        struct record *v = realloc(s->records, cap * sizeof *v);
        if (!v) {
            s->oom = true;
            return NULL;
        }
        s->records = v;
        s->cap_records = cap;
    }
    struct record *r = &s->records[s->n_records];
    *r = (struct record){.seq = s->n_records};
    s->n_records++;
    r->api_version = dup_str(s, o->api_version.p, o->api_version.n);
    r->kind = dup_str(s, o->kind.p, o->kind.n);
    r->namespace_ = dup_str(s, o->namespace_.p, o->namespace_.n);
    r->name = dup_str(s, o->name.p, o->name.n);
    r->uid = dup_str(s, o->uid.p, o->uid.n);
    return r;
}

/* The errors of one mode's list, one entry each; those the list left out, as one more. */
static void emit_errors(struct scan *s, const struct object_ref *o, struct record *rec, int mode,
                        const struct jg_errors *e) {
    for (size_t i = 0; i < e->n; i++) {
        jg_str f = jg_err_field(e, i), b = jg_err_body(e, i);
        jg_buf msg = JG_BUF_INIT;
        if (f.n) {
            jg_buf_put(&msg, f.p, f.n);
            jg_buf_puts(&msg, ": ");
        }
        jg_buf_put(&msg, b.p, b.n);
        s->rule_errors[e->v[i].rule]++;
        emit(s, o, rec, e->v[i].rule, mode, f, (jg_str){msg.data ? msg.data : "", msg.len});
        if (msg.oom) s->oom = true;
        jg_buf_free(&msg);
    }
    for (int r = 0; r < JG_RULE_COUNT; r++) {
        size_t left_out = jg_errors_omitted_by(e, r);
        if (!left_out) continue;
        char note[64];
        int n = snprintf(note, sizeof note, "[truncated %zu errors]", left_out);
        s->rule_errors[r] += left_out;
        emit(s, o, rec, r, mode, (jg_str){"", 0}, (jg_str){note, (size_t)n});
    }
}

static void scan_object(struct scan *s, const struct jg_doc *d) {
    char where[1200];
    jg_cli_where(d, where, sizeof where);
    jg_review rv;
    jg_decode_error err;
    struct jg_object_meta meta;
    struct jg_decode_objects_opts opts = {s->cfg.policy, NULL, NULL, &meta};
    if (jg_decode_objects(NULL, 0, d->json, d->len, NULL, &opts, &rv, &err) != JG_DECODE_OK) {
        if (meta.not_target)
            count_skipped(s, &meta);
        else /* the decoder names the object as check's "new object"; here it is the one */
            report_error(s, where,
                         JG_STARTS_WITH(err.message, "new object: ")
                             ? err.message + JG_LIT_LEN("new object: ")
                             : err.message);
        jg_review_free(&rv);
        return;
    }
    struct jg_request *q = &rv.req;
    if (!q->namespace_.n && s->ns) q->namespace_ = (jg_str){s->ns, strlen(s->ns)}; /* the rules' */
    struct object_ref o = {meta.api_version.s, {q->row->kind, strlen(q->row->kind)},
                           q->namespace_,      q->object.name,
                           meta.uid.s,         where};
    struct jg_errors errs[JG_MODE_OFF];
    for (int m = 0; m < JG_MODE_OFF; m++)
        jg_errors_init(&errs[m]);
    jg_validate_modes(q, &s->cfg, errs);
    s->objects++;
    uint64_t broken = 0;
    for (int m = 0; m < JG_MODE_OFF; m++) {
        if (errs[m].oom) s->oom = true;
        broken |= errs[m].rules;
    }
    struct record *rec = NULL;
    if (s->out == OUT_POLICYREPORT || s->out == OUT_OPENREPORTS) {
        rec = new_record(s, &o);
        if (rec) rec->passed = checked_rules(s, q) & ~broken;
    }
    for (int m = 0; m < JG_MODE_OFF; m++)
        emit_errors(s, &o, rec, m, &errs[m]);
    for (int r = 0; r < JG_RULE_COUNT; r++)
        if (broken & BIT(r)) s->rule_objects[r]++;
    int strictest = -1;
    for (int m = JG_MODE_OFF - 1; m >= 0; m--)
        if (errs[m].rules) strictest = m;
    if (strictest < 0)
        s->passed++;
    else
        s->broken_by_mode[strictest]++;
    for (int m = 0; m < JG_MODE_OFF; m++)
        jg_errors_free(&errs[m]);
    jg_review_free(&rv);
}

/* ---- summaries ---- */

static bool not_checkable(int r) {
    return !(CHECKABLE & BIT(r));
}

static void text_summary(struct scan *s) {
    if (s->first_result) printf("no checkable rule broken\n");
    printf("\n%zu objects of target kinds checked: %zu passed, %zu broke deny-mode rules, %zu "
           "warn-mode only, %zu audit-mode only\n",
           s->objects, s->passed, s->broken_by_mode[JG_MODE_DENY], s->broken_by_mode[JG_MODE_WARN],
           s->broken_by_mode[JG_MODE_AUDIT]);
    bool header = false;
    for (int r = 0; r < JG_RULE_COUNT; r++) {
        if (!s->rule_objects[r]) continue;
        if (!header) printf("%-30s %-5s %8s %8s\n", "RULE", "MODE", "OBJECTS", "ERRORS");
        header = true;
        printf("%-30s %-5s %8zu %8zu\n", jg_rules[r].name, jg_mode_name(jg_rule_mode(&s->cfg, r)),
               s->rule_objects[r], s->rule_errors[r]);
    }
    printf("skipped (not a target kind): %zu", s->skipped);
    for (size_t i = 0; i < s->n_skipped_kinds; i++)
        printf("%s%s %zu", i ? ", " : " (", s->skipped_kinds[i].name, s->skipped_kinds[i].n);
    if (s->skipped_other) printf(", other kinds %zu", s->skipped_other);
    printf("%s\n", s->n_skipped_kinds ? ")" : "");
    size_t status_rules = 0;
    for (int r = JG_R_NON_NEGATIVE; r <= JG_R_SCM_AFTER_COMPLETE; r++)
        status_rules++;
    printf("not checkable on stored objects: %s (needs the old object), %s (needs the "
           "requesting user), %zu Job status rules (need the old status; 'jobguard rules')\n",
           jg_rules[JG_R_MANAGED_BY_IMMUTABLE].name, jg_rules[JG_R_POLICY_STATUS_WRITERS].name,
           status_rules);
    if (s->unreadable) printf("unreadable: %zu (reasons on stderr)\n", s->unreadable);
}

static void json_summary(struct scan *s) {
    jg_buf *b = &s->line;
    jg_buf_printf(b,
                  "%s],\n\"summary\":{\"objects\":%zu,\"passed\":%zu,\"broken\":{\"deny\":%zu,"
                  "\"warn\":%zu,\"audit\":%zu},\"rules\":[",
                  s->first_result ? "" : "\n", s->objects, s->passed,
                  s->broken_by_mode[JG_MODE_DENY], s->broken_by_mode[JG_MODE_WARN],
                  s->broken_by_mode[JG_MODE_AUDIT]);
    bool first = true;
    for (int r = 0; r < JG_RULE_COUNT; r++) {
        if (!s->rule_objects[r]) continue;
        jg_buf_printf(b, "%s{\"rule\":\"%s\",\"mode\":\"%s\",\"objects\":%zu,\"errors\":%zu}",
                      first ? "" : ",", jg_rules[r].name, jg_mode_name(jg_rule_mode(&s->cfg, r)),
                      s->rule_objects[r], s->rule_errors[r]);
        first = false;
    }
    jg_buf_printf(b, "],\"skipped\":%zu,\"skippedKinds\":{", s->skipped);
    for (size_t i = 0; i < s->n_skipped_kinds; i++) {
        if (i) jg_buf_putc(b, ',');
        json_str(b, s->skipped_kinds[i].name);
        jg_buf_printf(b, ":%zu", s->skipped_kinds[i].n);
    }
    jg_buf_printf(b, "},\"skippedOtherKinds\":%zu,\"notCheckable\":[", s->skipped_other);
    first = true;
    for (int r = 0; r < JG_RULE_COUNT; r++) {
        if (!not_checkable(r)) continue;
        jg_buf_printf(b, "%s\"%s\"", first ? "" : ",", jg_rules[r].name);
        first = false;
    }
    jg_buf_printf(b, "],\"unreadable\":%zu},\n\"errors\":[", s->unreadable);
    jg_buf_put(b, s->errors.data ? s->errors.data : "", s->errors.len);
    jg_buf_puts(b, "]}\n");
    flush_line(s);
}

/* ---- PolicyReports ---- */

static int by_namespace(const void *a, const void *b) {
    const struct record *x = a, *y = b;
    int c = strcmp(x->namespace_ ? x->namespace_ : "", y->namespace_ ? y->namespace_ : "");
    if (c) return c;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The result value of a broken rule: fail for deny and audit (Kyverno reports an Audit policy's
 * failure as fail), warn for warn. */
static const char *report_result(int mode) {
    return mode == JG_MODE_WARN ? "warn" : "fail";
}

/* The length of s cut to at most max bytes, at the start of a UTF-8 sequence. */
static size_t utf8_cut(const char *s, size_t n, size_t max) {
    if (n <= max) return n;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return max;
}

/* One result, without a separator. */
static void report_entry(jg_buf *b, const struct record *r, int rule, int mode, const char *result,
                         const char *field, const char *message) {
    jg_buf_printf(b, "{\"policy\":\"jobguard\",\"rule\":\"%s\",\"result\":\"%s\",",
                  jg_rules[rule].name, result);
    if (message) {
        size_t n = strlen(message), keep = utf8_cut(message, n, REPORT_MESSAGE_BYTES);
        jg_buf_puts(b, "\"message\":");
        if (keep == n) {
            json_str(b, message);
        } else {
            jg_buf cut = JG_BUF_INIT;
            jg_buf_put(&cut, message, keep);
            jg_buf_printf(&cut, "... [cut: the message is %zu bytes]", n);
            jg_buf_json_string(b, cut.data ? cut.data : "", cut.len);
            if (cut.oom) b->oom = true;
            jg_buf_free(&cut);
        }
        jg_buf_putc(b, ',');
    }
    jg_buf_printf(b, "\"source\":\"jobguard\",\"scored\":true,\"properties\":{\"mode\":\"%s\"",
                  jg_mode_name((enum jg_mode)mode));
    if (field && *field) {
        jg_buf_puts(b, ",\"field\":");
        json_str(b, field);
    }
    jg_buf_puts(b, "},\"resources\":[{\"apiVersion\":");
    json_str(b, r->api_version);
    jg_buf_puts(b, ",\"kind\":");
    json_str(b, r->kind);
    if (r->namespace_ && *r->namespace_) {
        jg_buf_puts(b, ",\"namespace\":");
        json_str(b, r->namespace_);
    }
    jg_buf_puts(b, ",\"name\":");
    json_str(b, r->name);
    if (r->uid && *r->uid) {
        jg_buf_puts(b, ",\"uid\":");
        json_str(b, r->uid);
    }
    jg_buf_puts(b, "}]}");
}

struct report {
    jg_buf body;
    size_t pass, fail, warn, results, part;
};

static void report_open(struct report *p) {
    jg_buf_reset(&p->body);
    p->pass = p->fail = p->warn = p->results = 0;
    p->part++;
}

static void report_close(struct scan *s, struct report *p, const char *ns, bool *first_item) {
    bool openreports = s->out == OUT_OPENREPORTS;
    const char *api = openreports ? "openreports.io/v1alpha1" : "wgpolicyk8s.io/v1alpha2";
    const char *kind = *ns ? (openreports ? "Report" : "PolicyReport")
                           : (openreports ? "ClusterReport" : "ClusterPolicyReport");
    jg_buf *b = &s->line;
    jg_buf_printf(b, "%s{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"name\":",
                  *first_item ? "\n" : ",\n", api, kind);
    *first_item = false;
    char name[64];
    if (p->part > 1)
        snprintf(name, sizeof name, "jobguard-scan-%zu", p->part);
    else
        snprintf(name, sizeof name, "jobguard-scan");
    json_str(b, name);
    if (*ns) {
        jg_buf_puts(b, ",\"namespace\":");
        json_str(b, ns);
    }
    jg_buf_printf(b,
                  ",\"labels\":{\"app.kubernetes.io/managed-by\":\"jobguard\"}},"
                  "\"summary\":{\"pass\":%zu,\"fail\":%zu,\"warn\":%zu,\"error\":0,\"skip\":0},"
                  "\"results\":[",
                  p->pass, p->fail, p->warn);
    jg_buf_put(b, p->body.data ? p->body.data : "", p->body.len);
    jg_buf_puts(b, "]}");
    flush_line(s);
}

/* One object's results, each rendered whole: result k ends at ends[k] in buf. */
struct object_results {
    jg_buf buf;
    struct {
        size_t end;
        const char *result;
    } * v;
    size_t n, cap;
};

static bool add_result(struct object_results *o, const char *result) {
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 64;
        void *v = realloc(o->v, cap * sizeof *o->v);
        if (!v) return false;
        o->v = v;
        o->cap = cap;
    }
    o->v[o->n].end = o->buf.len;
    o->v[o->n++].result = result;
    return true;
}

static void policy_reports(struct scan *s) {
    if (s->n_records) qsort(s->records, s->n_records, sizeof *s->records, by_namespace);
    printf("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[");
    bool first_item = true;
    struct report p = {JG_BUF_INIT, 0, 0, 0, 0, 0};
    struct object_results obj = {JG_BUF_INIT, NULL, 0, 0}, *o = &obj;
    for (size_t i = 0; i < s->n_records;) {
        const char *ns = s->records[i].namespace_ ? s->records[i].namespace_ : "";
        p.part = 0;
        report_open(&p);
        for (; i < s->n_records; i++) {
            const struct record *r = &s->records[i];
            if (strcmp(r->namespace_ ? r->namespace_ : "", ns) != 0) break;
            jg_buf_reset(&o->buf);
            o->n = 0;
            for (size_t k = 0; k < r->n_results; k++) {
                const struct result *v = &r->results[k];
                const char *res = report_result(v->mode);
                report_entry(&o->buf, r, v->rule, v->mode, res, v->field, v->message);
                if (!add_result(o, res)) s->oom = true;
            }
            for (int k = 0; k < JG_RULE_COUNT; k++) {
                if (!(r->passed & BIT(k))) continue;
                report_entry(&o->buf, r, k, jg_rule_mode(&s->cfg, k), "pass", NULL, NULL);
                if (!add_result(o, "pass")) s->oom = true;
            }
            if (o->buf.oom) s->oom = true;
            /* An object's results stay in one report unless they alone pass its size. */
            if (p.results && (p.results + o->n > REPORT_RESULTS ||
                              p.body.len + o->buf.len + o->n > REPORT_BYTES)) {
                report_close(s, &p, ns, &first_item);
                report_open(&p);
            }
            for (size_t k = 0, from = 0; k < o->n; from = o->v[k++].end) {
                size_t len = o->v[k].end - from;
                if (p.results && p.body.len + 1 + len > REPORT_BYTES) {
                    report_close(s, &p, ns, &first_item);
                    report_open(&p);
                }
                if (p.results) jg_buf_putc(&p.body, ',');
                jg_buf_put(&p.body, o->buf.data + from, len);
                p.results++;
                if (strcmp(o->v[k].result, "pass") == 0)
                    p.pass++;
                else if (strcmp(o->v[k].result, "warn") == 0)
                    p.warn++;
                else
                    p.fail++;
            }
        }
        report_close(s, &p, ns, &first_item);
    }
    if (p.body.oom) s->oom = true;
    jg_buf_free(&p.body);
    jg_buf_free(&o->buf);
    free(o->v);
    printf("%s]}\n", first_item ? "" : "\n");
}

static void free_records(struct scan *s) {
    for (size_t i = 0; i < s->n_records; i++) {
        struct record *r = &s->records[i];
        for (size_t k = 0; k < r->n_results; k++) {
            free(r->results[k].field);
            free(r->results[k].message);
        }
        free(r->results);
        free(r->api_version);
        free(r->kind);
        free(r->namespace_);
        free(r->name);
        free(r->uid);
    }
    free(s->records);
}

int jg_cmd_scan(int argc, char **argv) {
    struct scan s = {.cfg = JG_CONFIG_DEFAULT, .first_result = true};
    jg_config_modes_unset(&s.cfg);
    struct jg_cli_policy_files pf = {0};
    const char **paths = calloc((size_t)argc + 1, sizeof *paths);
    size_t n_paths = 0;
    struct jg_policy *policy = NULL;
    int rc = EXIT_BAD_INPUT;
    if (!paths) {
        fprintf(stderr, "jobguard scan: out of memory\n");
        return rc;
    }
    struct jg_args it;
    jg_args_init(&it, &spec, argc, argv);
    const char *v;
    for (int f; (f = jg_args_next(&it, &v)) != JG_ARGS_END;) {
        switch (f) {
        case JG_ARGS_STOP:
            rc = it.status;
            goto out;
        case JG_ARGS_OPERAND:
            paths[n_paths++] = v;
            break;
        case F_NAMESPACE:
            if (strlen(v) > JG_MAX_NAMESPACE_BYTES) {
                fprintf(stderr, "jobguard scan: " JG_NAMESPACE_TOO_LONG_FMT "\n", "--namespace",
                        JG_MAX_NAMESPACE_BYTES, strlen(v));
                goto out;
            }
            s.ns = v;
            break;
        case F_OUTPUT: {
            static const char *const names[] = {"text", "json", "policyreport", "openreports"};
            enum { N_NAMES = sizeof names / sizeof names[0] };
            size_t k = 0;
            while (k < N_NAMES && strcmp(v, names[k]) != 0)
                k++;
            if (k == N_NAMES) {
                fprintf(stderr,
                        "jobguard scan: %.*s: unsupported %s (text, json, policyreport "
                        "or openreports)\n",
                        it.spelled_len, it.spelled, v);
                goto out;
            }
            s.out = (enum output)k;
            break;
        }
        case F_FAIL_ON:
            if (!jg_cli_fail_on("scan", v, &s.fail_on)) goto out;
            break;
        default: /* --parity, --disable-rule, --mode, --policy-file, --values */
            if (!jg_cli_config_flag("scan", flags[f].name, v, &s.cfg, &pf)) goto out;
        }
    }
    if (!n_paths) {
        fprintf(stderr, "jobguard scan: no input: give files, folders or - for stdin\n");
        jg_flags_usage(&spec, stderr);
        goto out;
    }
    if (!jg_cli_load_policy("scan", pf.policy, pf.values, &policy)) goto out;
    jg_policy_apply(policy, &s.cfg);

    jg_reader *rd = jg_reader_open(paths, n_paths);
    if (!rd) {
        fprintf(stderr, "jobguard scan: out of memory\n");
        goto out;
    }
    if (s.out == OUT_JSON) printf("{\"results\":[");
    struct jg_doc d;
    char err[1200];
    int st;
    while ((st = jg_reader_next(rd, &d, err, sizeof err)) != 0) {
        if (st < 0)
            report_error(&s, NULL, err);
        else
            scan_object(&s, &d);
    }
    jg_reader_close(rd);
    if (s.out == OUT_TEXT)
        text_summary(&s);
    else if (s.out == OUT_JSON)
        json_summary(&s);
    else
        policy_reports(&s);
    fflush(stdout);
    if (s.oom) report_error(&s, NULL, "out of memory: the output is incomplete");
    rc = jg_cli_exit_status(s.unreadable, s.broken_by_mode, s.fail_on);
out:
    free_records(&s);
    jg_buf_free(&s.line);
    jg_buf_free(&s.errors);
    jg_policy_free(policy);
    free(paths);
    return rc;
}
