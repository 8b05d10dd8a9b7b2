/* jobguard replay: what the rules would have done to the writes an API server's audit log holds
 * (docs/replay.md). The events are read by the one reader (reader.h; EventLists one event at a
 * time), each object of a target kind has its history rebuilt from the events themselves (the
 * last state of each live object is kept, nothing else), and every create, update and status
 * write is decided as the webhook would have decided it: the stored object as old object, the
 * written one as new, the event's user and groups, through the same decoder and rules as the
 * server. A write whose old object the log does not hold is decided only for the rules that need
 * none, and says so. */
#include "replay.h"

#include "cli.h"
#include "jobguard/admit.h"
#include "jobguard/policy.h"
#include "jobguard/reader.h"
#include "jobguard/targets.h"

#include "flags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_CLEAN = 0, EXIT_BAD_INPUT = 2 }; /* 1: jg_cli_exit_status */
enum output { OUT_TEXT, OUT_JSON };
enum decision { D_FULL, D_PARTIAL, D_NONE, D_COUNT };
static const char *const decision_names[D_COUNT] = {"full", "partial", "none"};

#define BIT(r) (UINT64_C(1) << (r))
#define MAX_KINDS 64   /* skipped resources counted by name; more are counted together */
#define MAX_USERS 1000 /* users counted by name in the summary; more are counted together */
#define MAX_ROWS 256   /* kind x verb rows of the summary */

/* Why a write was decided partly or not at all. */
enum reason {
    R_NONE,
    R_NO_HISTORY,    /* the object's earlier state is not in the log */
    R_UNKNOWN_STATE, /* an earlier write left it unknown (entry->why says which) */
    R_RV_GAP,        /* the write was based on a resourceVersion the log does not hold */
    R_UID,           /* the stored object of that name is another one (another uid) */
    R_METADATA,      /* the event holds no object (Metadata level) */
    R_PATCH,         /* a patch whose result is not in the event */
    R_COUNT
};
static const char *const reason_text[R_COUNT] = {
    "",
    "no earlier state of the object in the log (the log starts after its last write)",
    "an earlier write left the object's state unknown",
    "resourceVersion gap: the write was based on a version the log does not hold",
    "the stored object of that name is another one (another uid)",
    "the event holds no object (logged at Metadata level)",
    "a patch whose result is not in the event (logged at Request level, or refused)",
};

/* ---- live objects: the last state of each, by group/resource/namespace/name ---- */

struct entry {
    uint64_t hash; /* 0: empty slot */
    char *key;
    size_t klen;
    char *json; /* the last state; NULL when unknown */
    size_t len, cap;
    char *rv, *uid;
    char *why; /* unknown: which write left it so */
};

struct table {
    struct entry *v;
    size_t cap, n;
};

static uint64_t hash_key(const char *k, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)k[i]) * 1099511628211ULL;
    return h ? h : 1;
}

static struct entry *table_find(struct table *t, const char *k, size_t n, uint64_t h) {
    if (!t->cap) return NULL;
    for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        struct entry *e = &t->v[i];
        if (!e->hash) return NULL;
        if (e->hash == h && e->klen == n && memcmp(e->key, k, n) == 0) return e;
    }
}

static bool table_grow(struct table *t) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    struct entry *v = calloc(cap, sizeof *v);
    if (!v) return false;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->v[i].hash) continue;
        size_t j = t->v[i].hash & (cap - 1);
        while (v[j].hash)
            j = (j + 1) & (cap - 1);
        v[j] = t->v[i];
    }
    free(t->v);
    t->v = v;
    t->cap = cap;
    return true;
}

static struct entry *table_add(struct table *t, const char *k, size_t n, uint64_t h) {
    if ((t->n + 1) * 4 > t->cap * 3 && !table_grow(t)) return NULL;
    size_t i = h & (t->cap - 1);
    while (t->v[i].hash)
        i = (i + 1) & (t->cap - 1);
    struct entry *e = &t->v[i];
    *e = (struct entry){.hash = h, .key = malloc(n ? n : 1), .klen = n};
    if (!e->key) {
        e->hash = 0;
        return NULL;
    }
    memcpy(e->key, k, n);
    t->n++;
    return e;
}

static void entry_clear(struct entry *e) {
    free(e->json);
    free(e->rv);
    free(e->uid);
    free(e->why);
    e->json = e->rv = e->uid = e->why = NULL;
    e->len = e->cap = 0;
}

/* Removes e, moving later entries of its probe run back (no tombstones). */
static void table_remove(struct table *t, struct entry *e) {
    entry_clear(e);
    free(e->key);
    size_t i = (size_t)(e - t->v), mask = t->cap - 1;
    t->v[i].hash = 0;
    for (size_t j = (i + 1) & mask; t->v[j].hash; j = (j + 1) & mask) {
        size_t home = t->v[j].hash & mask;
        /* move j to i when its home is not in (i, j] cyclically */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            t->v[i] = t->v[j];
            t->v[j].hash = 0;
            i = j;
        }
    }
    t->n--;
}

static void table_free(struct table *t) {
    for (size_t i = 0; i < t->cap; i++)
        if (t->v[i].hash) {
            entry_clear(&t->v[i]);
            free(t->v[i].key);
        }
    free(t->v);
}

static char *dup_n(jg_str s) {
    char *c = malloc(s.n + 1);
    if (c) {
        if (s.n) memcpy(c, s.p, s.n);
        c[s.n] = '\0';
    }
    return c;
}

/* ---- the run ---- */

struct row { /* one kind x verb of the summary */
    char kind[64], verb[24];
    size_t n[D_COUNT], refused, api_refused;
};

struct user_count {
    char *name;
    size_t n[JG_RULE_COUNT];
};

struct replay {
    struct jg_config cfg;
    enum output out;
    unsigned fail_on;
    struct table live;
    struct jg_audit_event ev;
    jg_buf line, msg;
    bool first_row, oom;
    /* counts */
    size_t events, decided[D_COUNT], refused_by_mode[JG_MODE_OFF], api_refused, dry_runs;
    size_t reasons[R_COUNT], deletes, unreadable;
    size_t skip_stage[3], skip_read, skip_sub, skip_nonresource, skip_other_verb, skip_kinds;
    size_t rule_writes[JG_RULE_COUNT];
    struct {
        char name[160];
        size_t n;
    } kinds[MAX_KINDS];
    size_t n_kinds, kinds_other;
    struct row rows[MAX_ROWS];
    size_t n_rows;
    struct user_count *users;
    size_t n_users, users_other[JG_RULE_COUNT];
};

static void flush_line(struct replay *r) {
    if (r->line.oom) r->oom = true;
    fwrite(r->line.data ? r->line.data : "", 1, r->line.len, stdout);
    jg_buf_reset(&r->line);
}

static void unreadable(struct replay *r, const char *where, const char *what) {
    r->unreadable++;
    if (where)
        fprintf(stderr, "jobguard replay: %s: %s\n", where, what);
    else
        fprintf(stderr, "jobguard replay: %s\n", what);
}

static void count_kind(struct replay *r, const struct jg_audit_ref *ref) {
    r->skip_kinds++;
    char name[160];
    if (ref->group.n)
        snprintf(name, sizeof name, "%.*s.%.*s", (int)(ref->resource.n > 63 ? 63 : ref->resource.n),
                 ref->resource.p, (int)(ref->group.n > 90 ? 90 : ref->group.n), ref->group.p);
    else
        snprintf(name, sizeof name, "%.*s", (int)(ref->resource.n > 63 ? 63 : ref->resource.n),
                 ref->resource.p);
    for (size_t i = 0; i < r->n_kinds; i++)
        if (strcmp(r->kinds[i].name, name) == 0) {
            r->kinds[i].n++;
            return;
        }
    if (r->n_kinds == MAX_KINDS) {
        r->kinds_other++;
        return;
    }
    snprintf(r->kinds[r->n_kinds].name, sizeof r->kinds[0].name, "%s", name);
    r->kinds[r->n_kinds++].n = 1;
}

static struct row *row_for(struct replay *r, const char *kind, const char *verb) {
    for (size_t i = 0; i < r->n_rows; i++)
        if (strcmp(r->rows[i].kind, kind) == 0 && strcmp(r->rows[i].verb, verb) == 0)
            return &r->rows[i];
    if (r->n_rows == MAX_ROWS) return NULL;
    struct row *w = &r->rows[r->n_rows++];
    memset(w, 0, sizeof *w);
    snprintf(w->kind, sizeof w->kind, "%s", kind);
    snprintf(w->verb, sizeof w->verb, "%s", verb);
    return w;
}

static size_t *user_counts(struct replay *r, jg_str user) {
    for (size_t i = 0; i < r->n_users; i++)
        if (jg_str_eq_lit(user, r->users[i].name)) return r->users[i].n;
    if (r->n_users == MAX_USERS) return r->users_other;
    struct user_count *v = realloc(r->users, (r->n_users + 1) * sizeof *v);
    if (!v) {
        r->oom = true;
        return r->users_other;
    }
    r->users = v;
    struct user_count *u = &v[r->n_users];
    memset(u, 0, sizeof *u);
    u->name = dup_n(user);
    if (!u->name) {
        r->oom = true;
        return r->users_other;
    }
    r->n_users++;
    return u->n;
}

/* ---- one write ---- */

/* What identifies a write in every output. */
struct write {
    const struct jg_audit_event *ev;
    const struct jg_policy_target *row;
    const char *kind, *group, *verb; /* verb: "update/status" etc. for the summary */
    jg_str namespace_, name, user;
    const struct jg_str_vec *groups;
    bool dry_run;
    enum decision dec;
    enum reason reason;
    const char *why;    /* R_UNKNOWN_STATE: which write */
    uint64_t unchecked; /* rules the decision could not check */
};

static void json_str(jg_buf *b, jg_str s) {
    jg_buf_json_string(b, s.p ? s.p : "", s.n);
}

static void json_cstr(jg_buf *b, const char *s) {
    jg_buf_json_string(b, s, strlen(s));
}

/* `,"name":"value"` */
static void member(jg_buf *b, const char *name, jg_str v) {
    jg_buf_puts(b, ",\"");
    jg_buf_puts(b, name);
    jg_buf_puts(b, "\":");
    json_str(b, v);
}

/* A cell of a text row: s with control bytes shown as '?', so that a name read from the log
 * cannot break or forge a row; cut to cap - 1 bytes. */
static const char *cell(char *out, size_t cap, jg_str a, const char *sep, jg_str b) {
    size_t k = 0;
    for (int part = 0; part < 3; part++) {
        jg_str s = part == 0 ? a : part == 1 ? (jg_str){sep, strlen(sep)} : b;
        for (size_t i = 0; i < s.n && k + 1 < cap; i++) {
            unsigned char c = (unsigned char)s.p[i];
            out[k++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
        }
    }
    out[k] = '\0';
    return out;
}

static void text_row(struct replay *r, const struct write *w, int rule, int mode, jg_str message) {
    const struct jg_audit_event *ev = w->ev;
    static const jg_str none = {"", 0};
    if (r->first_row) {
        jg_buf_printf(&r->line, "%-27s %-36s %-6s %-8s %-40s %-6s %-40s %-4s %-44s %-5s %s\n",
                      "TIME", "AUDITID", "VERB", "KIND", "NAMESPACE/NAME", "SUB", "USER", "API",
                      "RULE", "MODE", "MESSAGE");
        r->first_row = false;
    }
    char t[64], id[128], verb[32], who[400], sub[64], user[600], api[24] = "-";
    if (ev->has_code) snprintf(api, sizeof api, "%ld", ev->code);
    jg_buf_printf(
        &r->line, "%-27s %-36s %-6s %-8s %-40s %-6s %-40s %-4s %-44s %-5s ",
        cell(t, sizeof t, ev->received, "", none), cell(id, sizeof id, ev->audit_id, "", none),
        cell(verb, sizeof verb, ev->verb, "", none), w->kind,
        cell(who, sizeof who, w->namespace_, w->namespace_.n ? "/" : "", w->name),
        ev->ref.subresource.n ? cell(sub, sizeof sub, ev->ref.subresource, "", none) : "-",
        cell(user, sizeof user, w->user, "", none), api, jg_rules[rule].name,
        jg_mode_name((enum jg_mode)mode));
    jg_buf_put(&r->line, message.p, message.n);
    jg_buf_putc(&r->line, '\n');
    flush_line(r);
}

/* The message of error i as the API server would have worded the refusal: "<field>: <body>" as
 * a cause of the 422, or the whole 403 message of a Forbidden. */
static jg_str error_message(struct replay *r, const struct write *w, const struct jg_errors *e,
                            size_t i, const struct jg_request *q) {
    jg_buf_reset(&r->msg);
    if (e->v[i].type == JG_ERR_FORBIDDEN) {
        jg_render_forbidden(e, i, q->row ? q->row->resource : "jobs", w->group, w->name, &r->msg);
    } else {
        jg_str f = jg_err_field(e, i), b = jg_err_body(e, i);
        if (f.n) {
            jg_buf_put(&r->msg, f.p, f.n);
            jg_buf_puts(&r->msg, ": ");
        }
        jg_buf_put(&r->msg, b.p, b.n);
    }
    if (r->msg.oom) r->oom = true;
    return (jg_str){r->msg.data ? r->msg.data : "", r->msg.len};
}

static void json_head(struct replay *r, const struct write *w) {
    const struct jg_audit_event *ev = w->ev;
    jg_buf *b = &r->line;
    jg_buf_puts(b, "{\"auditID\":");
    json_str(b, ev->audit_id);
    member(b, "time", ev->received);
    member(b, "verb", ev->verb);
    member(b, "kind", (jg_str){w->kind, strlen(w->kind)});
    member(b, "apiGroup", ev->ref.group);
    member(b, "resource", ev->ref.resource);
    member(b, "subresource", ev->ref.subresource);
    member(b, "namespace", w->namespace_);
    member(b, "name", w->name);
    member(b, "user", w->user);
    jg_buf_puts(b, ",\"groups\":[");
    for (size_t i = 0; i < w->groups->n; i++) {
        if (i) jg_buf_putc(b, ',');
        json_str(b, w->groups->v[i]);
    }
    jg_buf_puts(b, "],\"apiServerCode\":");
    if (ev->has_code)
        jg_buf_put_i64(b, ev->code);
    else
        jg_buf_puts(b, "null");
    jg_buf_puts(b, w->dry_run ? ",\"dryRun\":true,\"decision\":\""
                              : ",\"dryRun\":false,\"decision\":\"");
    jg_buf_puts(b, decision_names[w->dec]);
    jg_buf_putc(b, '"');
    if (w->dec != D_FULL) {
        jg_buf_puts(b, ",\"reason\":");
        if (w->reason == R_UNKNOWN_STATE && w->why) {
            jg_buf rs = JG_BUF_INIT;
            jg_buf_printf(&rs, "%s: %s", reason_text[w->reason], w->why);
            json_str(b, (jg_str){rs.data ? rs.data : "", rs.len});
            jg_buf_free(&rs);
        } else {
            json_cstr(b, reason_text[w->reason]);
        }
        jg_buf_puts(b, ",\"unchecked\":[");
        bool first = true;
        for (int k = 0; k < JG_RULE_COUNT; k++)
            if (w->unchecked & BIT(k)) {
                jg_buf_printf(b, "%s\"%s\"", first ? "" : ",", jg_rules[k].name);
                first = false;
            }
        jg_buf_putc(b, ']');
    }
}

/* The rules that apply to a write of `row` (its main resource, or its status) and are not off
 * under cfg; the policy rules only with a policy. */
static uint64_t rules_on(const struct jg_config *cfg, const struct jg_policy_target *row,
                         bool status) {
    bool job = strcmp(row->group, "batch") == 0 && strcmp(row->kind, "Job") == 0;
    bool cronjob = strcmp(row->group, "batch") == 0 && strcmp(row->kind, "CronJob") == 0;
    uint64_t m;
    if (status) {
        m = BIT(JG_R_POLICY_STATUS_WRITERS);
        if (job)
            for (int k = JG_R_NON_NEGATIVE; k <= JG_R_SCM_AFTER_COMPLETE; k++)
                m |= BIT(k);
    } else {
        m = BIT(JG_R_MANAGED_BY_FORMAT) | BIT(JG_R_MANAGED_BY_LENGTH) |
            BIT(JG_R_POLICY_ALLOWED_CONTROLLERS);
        if (!cronjob) m |= BIT(JG_R_MANAGED_BY_IMMUTABLE);
        if (!job && !cronjob)
            m |= BIT(JG_R_TARGET_NESTED_MANAGED_BY) | BIT(JG_R_TARGET_DELEGATION_UNSUPPORTED) |
                 BIT(JG_R_POLICY_STATUS_WRITERS);
    }
    if (!cfg->policy)
        m &= ~(BIT(JG_R_POLICY_ALLOWED_CONTROLLERS) | BIT(JG_R_POLICY_STATUS_WRITERS));
    for (int k = 0; k < JG_RULE_COUNT; k++)
        if (jg_rule_mode(cfg, k) == JG_MODE_OFF) m &= ~BIT(k);
    return m;
}

/* The rules an UPDATE decides without its old object (docs/replay.md): on a status write the
 * status writers (the API server puts the stored spec back, so managedBy is the stored one); on a
 * Job or CronJob main-resource update the managedBy format and length, which Kubernetes checks on
 * every update. Everything else compares with the stored object. */
static uint64_t decidable_without_old(const struct jg_request *q) {
    if (q->sub_resource.n) return BIT(JG_R_POLICY_STATUS_WRITERS);
    if (q->target == JG_TARGET_JOB || q->target == JG_TARGET_CRONJOB)
        return BIT(JG_R_MANAGED_BY_FORMAT) | BIT(JG_R_MANAGED_BY_LENGTH);
    return 0;
}

static void decided_none(struct replay *r, struct write *w) {
    struct row *row = row_for(r, w->kind, w->verb);
    r->decided[D_NONE]++;
    r->reasons[w->reason]++;
    if (row) {
        row->n[D_NONE]++;
        if (w->ev->has_code && (w->ev->code < 200 || w->ev->code > 299)) row->api_refused++;
    }
    if (r->out != OUT_JSON) return;
    w->unchecked = rules_on(&r->cfg, w->row, w->ev->ref.subresource.n > 0);
    json_head(r, w);
    jg_buf_puts(&r->line, ",\"allowed\":null,\"causes\":[]}\n");
    flush_line(r);
}

/* Decides one write: old_json NULL for a CREATE; with w->dec == D_PARTIAL the new object stands
 * in for the old one and only the rules that need no old object count. */
static void decide(struct replay *r, struct write *w, const char *where, const char *old_json,
                   size_t old_len, jg_str new_json) {
    const struct jg_audit_event *ev = w->ev;
    char res[400];
    snprintf(res, sizeof res, "%.*s%s%.*s",
             (int)(ev->ref.resource.n > 200 ? 200 : ev->ref.resource.n), ev->ref.resource.p,
             ev->ref.group.n ? "." : "", (int)(ev->ref.group.n > 190 ? 190 : ev->ref.group.n),
             ev->ref.group.p);
    char sub[64];
    snprintf(sub, sizeof sub, "%.*s",
             (int)(ev->ref.subresource.n > 63 ? 63 : ev->ref.subresource.n), ev->ref.subresource.p);
    bool update = !jg_str_eq_lit(ev->verb, "create");
    if (w->dec == D_PARTIAL) {
        old_json = new_json.p;
        old_len = new_json.n;
    }
    jg_review rv;
    jg_decode_error err;
    struct jg_decode_objects_opts opts = {r->cfg.policy, NULL, res, NULL};
    if (jg_decode_objects(update ? old_json : NULL, old_len, new_json.p, new_json.n,
                          sub[0] ? sub : NULL, &opts, &rv, &err) != JG_DECODE_OK) {
        char what[800];
        snprintf(what, sizeof what, "auditID %.*s: %s",
                 (int)(ev->audit_id.n > 64 ? 64 : ev->audit_id.n), ev->audit_id.p, err.message);
        unreadable(r, where, what);
        jg_review_free(&rv);
        return;
    }
    struct jg_request *q = &rv.req;
    if (w->namespace_.n) q->namespace_ = w->namespace_;
    q->name = w->name;
    q->username = w->user;
    q->groups = (jg_str_list){w->groups->n > 0, w->groups->n, w->groups->v};
    q->dry_run = w->dry_run;
    struct jg_config cfg = r->cfg;
    uint64_t on = rules_on(&cfg, w->row, ev->ref.subresource.n > 0);
    if (w->dec == D_PARTIAL) {
        uint64_t can = decidable_without_old(q) & on;
        w->unchecked = on & ~can;
        cfg.disabled |= ~can;
        if (!can) {
            w->dec = D_NONE;
            jg_review_free(&rv);
            decided_none(r, w);
            return;
        }
    }
    struct jg_errors errs[JG_MODE_OFF];
    for (int m = 0; m < JG_MODE_OFF; m++)
        jg_errors_init(&errs[m]);
    jg_validate_modes(q, &cfg, errs);
    bool oom = false;
    uint64_t fired = 0;
    for (int m = 0; m < JG_MODE_OFF; m++) {
        oom |= errs[m].oom;
        fired |= errs[m].rules;
    }
    if (oom) {
        r->oom = true;
        unreadable(r, where, "out of memory deciding the write");
    } else {
        const struct jg_errors *deny = &errs[JG_MODE_DENY];
        bool allowed = deny->n + deny->omitted == 0;
        int strictest = -1;
        for (int m = JG_MODE_OFF - 1; m >= 0; m--)
            if (errs[m].rules) strictest = m;
        if (strictest >= 0) r->refused_by_mode[strictest]++;
        r->decided[w->dec]++;
        r->reasons[w->reason]++;
        struct row *row = row_for(r, w->kind, w->verb);
        if (row) {
            row->n[w->dec]++;
            row->refused += !allowed;
            if (ev->has_code && (ev->code < 200 || ev->code > 299)) row->api_refused++;
        }
        if (fired) {
            size_t *uc = user_counts(r, w->user);
            for (int k = 0; k < JG_RULE_COUNT; k++)
                if (fired & BIT(k)) {
                    r->rule_writes[k]++;
                    uc[k]++;
                }
        }
        if (r->out == OUT_JSON) {
            json_head(r, w);
            jg_buf *b = &r->line;
            jg_buf_puts(b, allowed ? ",\"allowed\":true" : ",\"allowed\":false");
            if (!allowed) { /* the response jobguard would have sent: code and message */
                size_t f = jg_errors_find_forbidden(deny);
                jg_buf_reset(&r->msg);
                if (f < deny->n)
                    jg_render_forbidden(deny, f, q->row->resource, w->group, w->name, &r->msg);
                else
                    jg_render_message(deny, w->kind, w->group, w->name, &r->msg);
                jg_buf_printf(b, ",\"code\":%d,\"message\":", f < deny->n ? 403 : 422);
                json_str(b, (jg_str){r->msg.data ? r->msg.data : "", r->msg.len});
            }
            jg_buf_puts(b, ",\"causes\":[");
            bool first = true;
            for (int m = 0; m < JG_MODE_OFF; m++)
                for (size_t i = 0; i < errs[m].n; i++) {
                    jg_buf_puts(b, first ? "{\"rule\":\"" : ",{\"rule\":\"");
                    first = false;
                    jg_buf_printf(b, "%s\",\"mode\":\"%s\",\"field\":",
                                  jg_rules[errs[m].v[i].rule].name, jg_mode_name((enum jg_mode)m));
                    json_str(b, jg_err_field(&errs[m], i));
                    jg_buf_puts(b, ",\"message\":");
                    json_str(b, error_message(r, w, &errs[m], i, q));
                    jg_buf_putc(b, '}');
                }
            jg_buf_puts(b, "]}\n");
            flush_line(r);
        } else {
            for (int m = 0; m < JG_MODE_OFF; m++) {
                for (size_t i = 0; i < errs[m].n; i++) {
                    /* Kubernetes runs some checks twice on an update; its message drops the
                     * duplicates, and so do the rows */
                    if (i && errs[m].v[i].rule == errs[m].v[i - 1].rule &&
                        jg_str_eq(jg_err_field(&errs[m], i), jg_err_field(&errs[m], i - 1)) &&
                        jg_str_eq(jg_err_body(&errs[m], i), jg_err_body(&errs[m], i - 1)))
                        continue;
                    text_row(r, w, errs[m].v[i].rule, m, error_message(r, w, &errs[m], i, q));
                }
                for (int k = 0; k < JG_RULE_COUNT; k++) {
                    size_t left_out = jg_errors_omitted_by(&errs[m], k);
                    if (!left_out) continue;
                    char note[64];
                    int n = snprintf(note, sizeof note, "[truncated %zu errors]", left_out);
                    text_row(r, w, k, m, (jg_str){note, (size_t)n});
                }
            }
        }
    }
    for (int m = 0; m < JG_MODE_OFF; m++)
        jg_errors_free(&errs[m]);
    jg_review_free(&rv);
}

/* ---- one event ---- */

static bool success(const struct jg_audit_event *ev) {
    return ev->has_code && ev->code >= 200 && ev->code <= 299;
}

/* A Status (or nothing an object could be read from) rather than the object written. */
static bool is_object_state(const struct jg_audit_object *o) {
    return o->present && o->is_object && !jg_str_eq_lit(o->kind, "Status");
}

/* requestURI's query holds dryRun=All: the API server decides the write (the webhook too) but
 * stores nothing. */
static bool dry_run(jg_str uri) {
    const char *q = uri.p ? memchr(uri.p, '?', uri.n) : NULL;
    if (!q) return false;
    const char *end = uri.p + uri.n;
    for (const char *p = q + 1; p < end;) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *e = amp ? amp : end;
        size_t n = (size_t)(e - p);
        if (n > JG_LIT_LEN("dryRun=") && JG_LIT_PREFIX(p, n, "dryRun=")) return true; /* a value */
        p = e + 1;
    }
    return false;
}

static bool set_state(struct entry *e, jg_str json, jg_str rv, jg_str uid) {
    if (json.n > e->cap) {
        char *v = realloc(e->json, json.n);
        if (!v) return false;
        e->json = v;
        e->cap = json.n;
    } else if (!e->json) {
        e->json = malloc(json.n ? json.n : 1);
        if (!e->json) return false;
        e->cap = json.n ? json.n : 1;
    }
    memcpy(e->json, json.p, json.n);
    e->len = json.n;
    free(e->rv);
    free(e->uid);
    free(e->why);
    e->why = NULL;
    e->rv = rv.n ? dup_n(rv) : NULL;
    e->uid = uid.n ? dup_n(uid) : NULL;
    return !(rv.n && !e->rv) && !(uid.n && !e->uid);
}

static void set_unknown(struct replay *r, struct entry *e, const char *fmt, jg_str a, jg_str b) {
    entry_clear(e);
    jg_buf why = JG_BUF_INIT;
    jg_buf_printf(&why, fmt, (int)(a.n > 64 ? 64 : a.n), a.p, (int)(b.n > 64 ? 64 : b.n), b.p);
    if (why.oom) r->oom = true;
    e->why = why.data; /* NULL when out of memory: the reason alone is given */
}

static void key_of(jg_buf *k, const struct jg_audit_ref *ref, jg_str ns, jg_str name) {
    jg_buf_reset(k);
    jg_buf_put(k, ref->group.p, ref->group.n);
    jg_buf_putc(k, '\x1f');
    jg_buf_put(k, ref->resource.p, ref->resource.n);
    jg_buf_putc(k, '\x1f');
    jg_buf_put(k, ns.p, ns.n);
    jg_buf_putc(k, '\x1f');
    jg_buf_put(k, name.p, name.n);
}

static void write_event(struct replay *r, const struct jg_policy_target *row, const char *where,
                        jg_buf *kb) {
    const struct jg_audit_event *ev = &r->ev;
    const struct jg_audit_ref *ref = &ev->ref;
    const struct jg_audit_object *req = &ev->request, *resp = &ev->response;
    bool create = jg_str_eq_lit(ev->verb, "create"), patch = jg_str_eq_lit(ev->verb, "patch");
    bool ok = success(ev);
    const struct jg_audit_user *u = ev->impersonated.set ? &ev->impersonated : &ev->user;
    struct write w = {.ev = ev,
                      .row = row,
                      .kind = row->kind,
                      .group = row->group,
                      .user = u->username,
                      .groups = &u->groups,
                      .dry_run = dry_run(ev->request_uri)};
    char verb[24];
    snprintf(verb, sizeof verb, "%.*s%s", (int)(ev->verb.n > 8 ? 8 : ev->verb.n), ev->verb.p,
             ref->subresource.n ? "/status" : "");
    w.verb = verb;
    w.namespace_ = ref->namespace_;
    w.name = ref->name;
    const struct jg_audit_object *named = is_object_state(resp) ? resp : req;
    if (!w.name.n) w.name = named->name;
    if (!w.namespace_.n) w.namespace_ = named->namespace_;
    if (w.dry_run) r->dry_runs++;
    if (ev->has_code && !ok) r->api_refused++;

    /* the object written: the stored result when the write succeeded and the event holds it,
     * else what the request sent when it is a whole object */
    jg_str new_json = {NULL, 0};
    const struct jg_audit_object *state = NULL;
    if (ok && is_object_state(resp))
        state = resp;
    else if (!patch && req->is_object)
        state = req;
    if (state) new_json = state->json;

    key_of(kb, ref, w.namespace_, w.name);
    uint64_t h = hash_key(kb->data ? kb->data : "", kb->len);
    struct entry *e = kb->oom ? NULL : table_find(&r->live, kb->data, kb->len, h);
    const char *old_json = NULL;
    size_t old_len = 0;
    if (!state) {
        w.dec = D_NONE;
        w.reason = patch && req->present ? R_PATCH : R_METADATA;
    } else if (!create) {
        w.dec = D_PARTIAL;
        if (!e) {
            w.reason = R_NO_HISTORY;
        } else if (!e->json) {
            w.reason = R_UNKNOWN_STATE;
            w.why = e->why;
        } else if (ok && ref->resource_version.n && e->rv &&
                   !jg_str_eq_lit(ref->resource_version, e->rv)) {
            w.reason = R_RV_GAP;
        } else if (ref->uid.n && e->uid && !jg_str_eq_lit(ref->uid, e->uid)) {
            w.reason = R_UID;
        } else {
            w.dec = D_FULL;
            old_json = e->json;
            old_len = e->len;
        }
    }
    if (w.dec == D_NONE)
        decided_none(r, &w);
    else
        decide(r, &w, where, old_json, old_len, new_json);

    if (!ok || w.dry_run) return; /* nothing stored */
    if (!e) {
        e = table_add(&r->live, kb->data ? kb->data : "", kb->len, h);
        if (!e) {
            r->oom = true;
            return;
        }
    }
    if (state) {
        if (!set_state(e, state->json, state->resource_version, state->uid)) r->oom = true;
    } else {
        set_unknown(r, e, "its write %.*s (%.*s) is logged without the object it stored",
                    ev->audit_id, ev->verb);
    }
}

static void replay_event(struct replay *r, const struct jg_doc *d, jg_buf *kb) {
    char where[1200], err[600];
    jg_cli_where(d, where, sizeof where);
    struct jg_audit_event *ev = &r->ev;
    if (!jg_audit_event_parse(d->json, d->len, ev, err, sizeof err)) {
        unreadable(r, where, err);
        return;
    }
    r->events++;
    if (!jg_str_eq_lit(ev->stage, "ResponseComplete")) {
        r->skip_stage[jg_str_eq_lit(ev->stage, "RequestReceived")   ? 0
                      : jg_str_eq_lit(ev->stage, "ResponseStarted") ? 1
                                                                    : 2]++;
        return;
    }
    const struct jg_audit_ref *ref = &ev->ref;
    if (!ref->set || !ref->resource.n) {
        r->skip_nonresource++;
        return;
    }
    const struct jg_policy_target *row =
        jg_target_route(r->cfg.policy, ref->group, ref->version, ref->resource, false);
    if (!row) {
        count_kind(r, ref);
        return;
    }
    jg_str verb = ev->verb;
    bool main_res = ref->subresource.n == 0, status = jg_str_eq_lit(ref->subresource, "status");
    if (jg_str_eq_lit(verb, "get") || jg_str_eq_lit(verb, "list") || jg_str_eq_lit(verb, "watch")) {
        r->skip_read++;
    } else if ((jg_str_eq_lit(verb, "create") && main_res) ||
               ((jg_str_eq_lit(verb, "update") || jg_str_eq_lit(verb, "patch")) &&
                (main_res || status))) {
        write_event(r, row, where, kb);
    } else if (jg_str_eq_lit(verb, "delete") && main_res) {
        r->deletes++;
        if (!success(ev) || dry_run(ev->request_uri)) return;
        key_of(kb, ref, ref->namespace_, ref->name);
        uint64_t h = hash_key(kb->data ? kb->data : "", kb->len);
        struct entry *e = kb->oom ? NULL : table_find(&r->live, kb->data, kb->len, h);
        if (!e) return;
        /* finalizers keep it: the API server answers with the object, deletionTimestamp set */
        if (is_object_state(&ev->response) && ev->response.deleting) {
            if (!set_state(e, ev->response.json, ev->response.resource_version, ev->response.uid))
                r->oom = true;
        } else {
            table_remove(&r->live, e);
        }
    } else if (jg_str_eq_lit(verb, "deletecollection") && main_res) {
        r->deletes++;
        if (!success(ev) || dry_run(ev->request_uri)) return;
        /* every object of that resource in that namespace (all namespaces when none) */
        key_of(kb, ref, ref->namespace_, (jg_str){"", 0});
        size_t prefix = kb->len - (ref->namespace_.n ? 0 : 1);
        for (size_t i = 0; i < r->live.cap;) {
            struct entry *e = &r->live.v[i];
            if (e->hash && e->klen >= prefix && memcmp(e->key, kb->data, prefix) == 0)
                table_remove(&r->live, e); /* a later entry may have moved into slot i */
            else
                i++;
        }
    } else {
        /* another subresource (scale, ...) or verb: it may change the object, which the log
         * does not say */
        if (jg_str_eq_lit(verb, "deletecollection") || jg_str_eq_lit(verb, "delete"))
            r->skip_other_verb++;
        else
            r->skip_sub++;
        if (!success(ev) || dry_run(ev->request_uri) || !ref->name.n) return;
        key_of(kb, ref, ref->namespace_, ref->name);
        uint64_t h = hash_key(kb->data ? kb->data : "", kb->len);
        struct entry *e = kb->oom ? NULL : table_find(&r->live, kb->data, kb->len, h);
        if (e)
            set_unknown(r, e, "its write %.*s to another subresource (%.*s) changed it",
                        ev->audit_id, ref->subresource);
    }
}

/* ---- summaries ---- */

static void text_summary(struct replay *r) {
    char name[600];
    if (r->first_row) printf("no write would have been refused, warned or annotated\n");
    size_t skipped = r->skip_stage[0] + r->skip_stage[1] + r->skip_stage[2] + r->skip_read +
                     r->skip_sub + r->skip_nonresource + r->skip_other_verb + r->skip_kinds;
    printf("\n%zu audit events: %zu writes of target kinds (%zu decided fully, %zu partly, %zu not "
           "at all), %zu deletes, %zu skipped\n",
           r->events, r->decided[D_FULL] + r->decided[D_PARTIAL] + r->decided[D_NONE],
           r->decided[D_FULL], r->decided[D_PARTIAL], r->decided[D_NONE], r->deletes, skipped);
    printf("writes: %zu would have been refused (deny mode), %zu warned only, %zu annotated only; "
           "%zu were refused by the API server itself, %zu were dry runs\n",
           r->refused_by_mode[JG_MODE_DENY], r->refused_by_mode[JG_MODE_WARN],
           r->refused_by_mode[JG_MODE_AUDIT], r->api_refused, r->dry_runs);
    if (r->n_rows) {
        printf("\n%-16s %-14s %8s %8s %8s %8s %8s %8s\n", "KIND", "VERB", "WRITES", "FULL",
               "PARTIAL", "NONE", "REFUSED", "API-REF");
        for (size_t i = 0; i < r->n_rows; i++) {
            const struct row *w = &r->rows[i];
            printf("%-16s %-14s %8zu %8zu %8zu %8zu %8zu %8zu\n", w->kind, w->verb,
                   w->n[D_FULL] + w->n[D_PARTIAL] + w->n[D_NONE], w->n[D_FULL], w->n[D_PARTIAL],
                   w->n[D_NONE], w->refused, w->api_refused);
        }
    }
    bool header = false;
    for (int k = 0; k < JG_RULE_COUNT; k++) {
        if (!r->rule_writes[k]) continue;
        if (!header) printf("\n%-44s %-5s %8s  %s\n", "RULE", "MODE", "WRITES", "USER");
        header = true;
        printf("%-44s %-5s %8zu\n", jg_rules[k].name, jg_mode_name(jg_rule_mode(&r->cfg, k)),
               r->rule_writes[k]);
        for (size_t u = 0; u < r->n_users; u++)
            if (r->users[u].n[k])
                printf("%-44s %-5s %8zu  %s\n", "", "", r->users[u].n[k],
                       cell(name, sizeof name, (jg_str){r->users[u].name, strlen(r->users[u].name)},
                            "", (jg_str){"", 0}));
        if (r->users_other[k])
            printf("%-44s %-5s %8zu  (other users, past the first %d)\n", "", "", r->users_other[k],
                   MAX_USERS);
    }
    bool reasons = false;
    for (int k = R_NONE + 1; k < R_COUNT; k++) {
        if (!r->reasons[k]) continue;
        if (!reasons) printf("\nwrites decided partly or not at all, by reason:\n");
        reasons = true;
        printf("%8zu  %s\n", r->reasons[k], reason_text[k]);
    }
    printf("\nskipped: %zu RequestReceived, %zu ResponseStarted and %zu Panic stage events, %zu "
           "reads (get, list, watch), %zu writes to other subresources, %zu other verbs, %zu "
           "non-resource requests, %zu events of other kinds",
           r->skip_stage[0], r->skip_stage[1], r->skip_stage[2], r->skip_read, r->skip_sub,
           r->skip_other_verb, r->skip_nonresource, r->skip_kinds);
    for (size_t i = 0; i < r->n_kinds; i++)
        printf("%s%s %zu", i ? ", " : " (", r->kinds[i].name, r->kinds[i].n);
    if (r->kinds_other) printf(", other kinds %zu", r->kinds_other);
    printf("%s\n", r->n_kinds ? ")" : "");
    printf("live objects at the end of the log: %zu\n", r->live.n);
    if (r->unreadable) printf("unreadable: %zu (reasons on stderr)\n", r->unreadable);
}

/* The last line of -o json: the same counts as one object. */
static void json_summary(struct replay *r) {
    jg_buf *b = &r->line;
    jg_buf_printf(b,
                  "{\"summary\":{\"events\":%zu,\"writes\":%zu,\"decided\":{\"full\":%zu,"
                  "\"partial\":%zu,\"none\":%zu},\"refused\":{\"deny\":%zu,\"warn\":%zu,"
                  "\"audit\":%zu},\"apiServerRefused\":%zu,\"dryRuns\":%zu,\"deletes\":%zu,"
                  "\"byKindVerb\":[",
                  r->events, r->decided[D_FULL] + r->decided[D_PARTIAL] + r->decided[D_NONE],
                  r->decided[D_FULL], r->decided[D_PARTIAL], r->decided[D_NONE],
                  r->refused_by_mode[JG_MODE_DENY], r->refused_by_mode[JG_MODE_WARN],
                  r->refused_by_mode[JG_MODE_AUDIT], r->api_refused, r->dry_runs, r->deletes);
    for (size_t i = 0; i < r->n_rows; i++) {
        const struct row *w = &r->rows[i];
        jg_buf_printf(b, "%s{\"kind\":", i ? "," : "");
        json_cstr(b, w->kind);
        jg_buf_puts(b, ",\"verb\":");
        json_cstr(b, w->verb);
        jg_buf_printf(b,
                      ",\"full\":%zu,\"partial\":%zu,\"none\":%zu,\"refused\":%zu,"
                      "\"apiServerRefused\":%zu}",
                      w->n[D_FULL], w->n[D_PARTIAL], w->n[D_NONE], w->refused, w->api_refused);
    }
    jg_buf_puts(b, "],\"rules\":[");
    bool first = true;
    for (int k = 0; k < JG_RULE_COUNT; k++) {
        if (!r->rule_writes[k]) continue;
        jg_buf_printf(b, "%s{\"rule\":\"%s\",\"mode\":\"%s\",\"writes\":%zu,\"users\":{",
                      first ? "" : ",", jg_rules[k].name, jg_mode_name(jg_rule_mode(&r->cfg, k)),
                      r->rule_writes[k]);
        first = false;
        bool ufirst = true;
        for (size_t u = 0; u < r->n_users; u++) {
            if (!r->users[u].n[k]) continue;
            if (!ufirst) jg_buf_putc(b, ',');
            ufirst = false;
            json_cstr(b, r->users[u].name);
            jg_buf_printf(b, ":%zu", r->users[u].n[k]);
        }
        jg_buf_printf(b, "},\"otherUsers\":%zu}", r->users_other[k]);
    }
    jg_buf_puts(b, "],\"reasons\":{");
    first = true;
    for (int k = R_NONE + 1; k < R_COUNT; k++) {
        if (!r->reasons[k]) continue;
        if (!first) jg_buf_putc(b, ',');
        first = false;
        json_cstr(b, reason_text[k]);
        jg_buf_printf(b, ":%zu", r->reasons[k]);
    }
    jg_buf_printf(b,
                  "},\"skipped\":{\"RequestReceived\":%zu,\"ResponseStarted\":%zu,\"Panic\":%zu,"
                  "\"reads\":%zu,\"otherSubresources\":%zu,\"otherVerbs\":%zu,"
                  "\"nonResource\":%zu,\"otherKinds\":%zu,\"kinds\":{",
                  r->skip_stage[0], r->skip_stage[1], r->skip_stage[2], r->skip_read, r->skip_sub,
                  r->skip_other_verb, r->skip_nonresource, r->skip_kinds);
    for (size_t i = 0; i < r->n_kinds; i++) {
        if (i) jg_buf_putc(b, ',');
        json_cstr(b, r->kinds[i].name);
        jg_buf_printf(b, ":%zu", r->kinds[i].n);
    }
    jg_buf_printf(b, "},\"kindsOther\":%zu},\"liveObjects\":%zu,\"unreadable\":%zu}}\n",
                  r->kinds_other, r->live.n, r->unreadable);
    flush_line(r);
}

/* ---- the command ---- */

enum { F_POLICY, F_VALUES, F_MODE, F_DISABLE_RULE, F_PARITY, F_OUTPUT, F_FAIL_ON, F_COUNT };

static const struct jg_flag flags[F_COUNT] = {
    [F_POLICY] = JG_FLAG_POLICY_FILE,
    [F_VALUES] = JG_FLAG_VALUES,
    [F_MODE] = JG_FLAG_MODE,
    [F_DISABLE_RULE] = JG_FLAG_DISABLE_RULE,
    [F_PARITY] = JG_FLAG_PARITY,
    [F_OUTPUT] = {"output", 'o', "FORMAT",
                  "text (default: a row per write refused, warned or annotated,\n"
                  "then a summary per kind and verb, per rule and user) or json\n"
                  "(one object per write, then a summary object)"},
    [F_FAIL_ON] = {"fail-on", 0, "MODE",
                   "also exit 1 for writes a warn-mode rule would have warned\n"
                   "about (warn), or warned or annotated (audit)"},
};

static const struct jg_flags spec = {
    .cmd = "replay",
    .head = "Usage: jobguard replay [options] AUDIT_LOG...|-\n"
            "\n"
            "Reads a kube-apiserver audit log (audit.k8s.io/v1 Event, one per line, or EventList;\n"
            "several files in the order given, - for stdin), rebuilds the history of every object\n"
            "of a target kind from the events (the object each successful write stored is the old\n"
            "object of the next one), and decides every create, update and status write as the\n"
            "webhook would have: old and new object, subresource, user and groups from the event,\n"
            "each rule in its mode. A write whose earlier state is not in the log is decided only\n"
            "for the rules that need no old object, and says so. Record the writes at\n"
            "RequestResponse level (docs/replay.md has the audit policy).\n"
            "\n"
            "  jobguard replay --policy-file policy.yaml /var/log/kubernetes/audit.log\n"
            "\n"
            "Options:\n",
    .tail =
        "\n"
        "Exit status (as scan): 0 no write refused by a deny-mode rule, 1 some (or, with\n"
        "--fail-on, a rule of that mode fired), 2 unreadable input (after reporting the rest).\n",
    .flag = flags,
    .n = F_COUNT,
    .indent = 25,
};

int jg_cmd_replay(int argc, char **argv) {
    struct replay *r = calloc(1, sizeof *r);
    const char **paths = calloc((size_t)argc + 1, sizeof *paths);
    struct jg_cli_policy_files pf = {0};
    size_t n_paths = 0;
    struct jg_policy *policy = NULL;
    int rc = EXIT_BAD_INPUT;
    if (!r || !paths) {
        fprintf(stderr, "jobguard replay: out of memory\n");
        free(r);
        free(paths);
        return rc;
    }
    r->cfg = (struct jg_config)JG_CONFIG_DEFAULT;
    r->first_row = true;
    jg_config_modes_unset(&r->cfg);
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
        case F_OUTPUT:
            if (strcmp(v, "text") == 0)
                r->out = OUT_TEXT;
            else if (strcmp(v, "json") == 0)
                r->out = OUT_JSON;
            else {
                fprintf(stderr, "jobguard replay: %.*s: unsupported %s (text or json)\n",
                        it.spelled_len, it.spelled, v);
                goto out;
            }
            break;
        case F_FAIL_ON:
            if (!jg_cli_fail_on("replay", v, &r->fail_on)) goto out;
            break;
        default: /* --parity, --disable-rule, --mode, --policy-file, --values */
            if (!jg_cli_config_flag("replay", flags[f].name, v, &r->cfg, &pf)) goto out;
        }
    }
    if (!n_paths) {
        fprintf(stderr, "jobguard replay: no input: give audit log files or - for stdin\n");
        jg_flags_usage(&spec, stderr);
        goto out;
    }
    if (pf.policy && pf.values) {
        fprintf(stderr, "jobguard replay: give either --policy-file or --values, not both\n");
        goto out;
    }
    char reason[1024];
    if (pf.policy && !(policy = jg_policy_load_file(pf.policy, reason, sizeof reason))) {
        fprintf(stderr, "jobguard replay: --policy-file: %s\n", reason);
        goto out;
    }
    bool absent = false;
    if (pf.values && !(policy = jg_cli_load_values(pf.values, &absent, reason, sizeof reason)) &&
        !absent) {
        fprintf(stderr, "jobguard replay: --values: %s\n", reason);
        goto out;
    }
    if (absent)
        fprintf(stderr,
                "jobguard replay: --values: %s has no policy block (.policy is absent or "
                "empty): the built-in defaults apply, as the chart installs no policy file\n",
                pf.values);
    jg_policy_apply(policy, &r->cfg);

    jg_reader *rd = jg_reader_open(paths, n_paths);
    if (!rd) {
        fprintf(stderr, "jobguard replay: out of memory\n");
        goto out;
    }
    struct jg_doc d;
    char err[1200];
    jg_buf key = JG_BUF_INIT;
    int st;
    while ((st = jg_reader_next(rd, &d, err, sizeof err)) != 0) {
        if (st < 0)
            unreadable(r, NULL, err);
        else
            replay_event(r, &d, &key);
    }
    jg_reader_close(rd);
    jg_buf_free(&key);
    if (r->out == OUT_TEXT)
        text_summary(r);
    else
        json_summary(r);
    fflush(stdout);
    if (r->oom) unreadable(r, NULL, "out of memory: the output is incomplete");
    rc = jg_cli_exit_status(r->unreadable, r->refused_by_mode, r->fail_on);
out:
    table_free(&r->live);
    jg_audit_event_free(&r->ev);
    for (size_t u = 0; u < r->n_users; u++)
        free(r->users[u].name);
    free(r->users);
    jg_buf_free(&r->line);
    jg_buf_free(&r->msg);
    jg_policy_free(policy);
    free(paths);
    free(r);
    return rc;
}
