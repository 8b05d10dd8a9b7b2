/* jobguard check: decide AdmissionReviews, or raw objects of any target, offline. Files, folders
 * and stdin are read by the one reader (reader.h: JSON or YAML, Lists one element at a time); a
 * raw object becomes the AdmissionReview the API server would send, which enters the engine
 * through the same jg_admit path as the server, so they cannot disagree, and which
 * --print-review writes instead of deciding it. */
#include "cli.h"
#include "jobguard/admit.h"
#include "jobguard/encode.h"
#include "jobguard/policy.h"
#include "jobguard/reader.h"

#include "flags.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_ALLOWED = 0, EXIT_DENIED = 1, EXIT_UNREADABLE = 2 };

enum {
    F_EXPLAIN,
    F_PARITY,
    F_DISABLE_RULE,
    F_POLICY,
    F_VALUES,
    F_MODE,
    F_NEW,
    F_OLD,
    F_SUBRESOURCE,
    F_KIND,
    F_RESOURCE,
    F_NAMESPACE,
    F_USER,
    F_GROUP,
    F_PRINT_REVIEW,
    F_COUNT
};

static const struct jg_flag flags[F_COUNT] = {
    [F_EXPLAIN] = {"explain", 0, NULL,
                   "also print a human-readable verdict on stderr, one line\n"
                   "per error and per warning as kubectl prints them"},
    [F_PARITY] = JG_FLAG_PARITY,
    [F_DISABLE_RULE] = JG_FLAG_DISABLE_RULE,
    [F_POLICY] = JG_FLAG_POLICY_FILE,
    [F_VALUES] = JG_FLAG_VALUES,
    [F_MODE] = JG_FLAG_MODE,
    [F_NEW] = {"new", 0, "PATH", "raw objects to check (repeatable)"},
    [F_OLD] = {"old", 0, "FILE", "the stored object (makes it an UPDATE; one --new object)"},
    [F_SUBRESOURCE] = {"subresource", 0, "NAME",
                       "\"status\" to check a status update (needs --old)"},
    [F_KIND] = {"kind", 0, "KIND[.GROUP]",
                "the target of the objects by kind, e.g. JobSet or\n"
                "PyTorchJob.kubeflow.org (GROUP defaults to the object's)"},
    [F_RESOURCE] = {"resource", 0, "RES[.GROUP]",
                    "the same by resource, e.g. jobsets.jobset.x-k8s.io"},
    [F_NAMESPACE] = {"namespace", 0, "NS",
                     "the namespace of objects that name none (as kubectl -n);\n"
                     "an object naming another one is refused, as kubectl does"},
    [F_USER] = {"user", 0, "NAME",
                "who sends the requests (status writers of the policy;\n"
                "service accounts as system:serviceaccount:NS:NAME)"},
    [F_GROUP] = {"group", 0, "NAME", "a group of that user (repeatable)"},
    [F_PRINT_REVIEW] = {"print-review", 0, NULL,
                        "print the AdmissionReview of each --new object, one per\n"
                        "line, instead of deciding it (to post with curl)"},
};

static const struct jg_flags spec = {
    .cmd = "check",
    .head = "Usage: jobguard check [options] [FILE|DIR|-]...\n"
            "       jobguard check [options] --new PATH... [--old OLD] [--subresource status]\n"
            "\n"
            "Decides the AdmissionReviews (admission.k8s.io/v1 or v1beta1) read from the FILEs,\n"
            "folders or stdin and prints each response AdmissionReview on stdout, one per line.\n"
            "With --new it checks raw objects of any target (Job, CronJob, JobSet, ...; 'jobguard\n"
            "rules' lists them) instead, each as the API server would send it: --new alone is a\n"
            "CREATE of every object in PATH (a file, a folder of *.json/*.yaml/*.yml, or - for\n"
            "stdin; JSON or YAML, several documents, Lists one object per item), --old and --new\n"
            "an UPDATE of one object's main resource, or of its status with --subresource status.\n"
            "An object's apiVersion and kind say which target it is; --kind or --resource say it\n"
            "when the object does not.\n"
            "\n"
            "Options:\n",
    .tail = "\n"
            "Exit status: 0 allowed, 1 denied, 2 unreadable input; of several objects, the worst\n"
            "(reasons on stderr, each naming the file and line).\n",
    .flag = flags,
    .n = F_COUNT,
    .indent = 25,
};

/* What one run of check carries from object to object. */
struct run {
    struct jg_config cfg;
    const char *kind, *resource, *sub, *user, *ns;
    jg_str groups[64];
    size_t n_groups;
    bool explain, print_review;
    const char *old_json; /* the --old object (compact JSON), NULL for CREATE */
    size_t old_len;
    jg_buf review, response, compact;
    unsigned long n; /* objects decided or printed */
    int rc;
};

static void worse(struct run *r, int rc) {
    if (rc > r->rc) r->rc = rc;
}

static void explain(const struct jg_outcome *o, const char *kind) {
    const char *who = o->name[0] ? o->name : "(unnamed)";
    /* kubectl prints each warning as "Warning: <text>" before the outcome */
    const char *w = o->warnings.data ? o->warnings.data : "";
    for (const char *nl; (nl = strchr(w, '\n')) != NULL; w = nl + 1)
        fprintf(stderr, "Warning: %.*s\n", (int)(nl - w), w);
    switch (o->verdict) {
    case JG_VERDICT_ALLOWED:
        fprintf(stderr, "allowed: %s %s%s%s %s%s%s\n", o->operation, o->resource,
                o->sub_resource[0] ? "/" : "", o->sub_resource, o->namespace_,
                o->namespace_[0] ? "/" : "", who);
        break;
    case JG_VERDICT_DENIED: {
        if (o->code == 403) { /* Policy-StatusWriters */
            fprintf(stderr, "Error from server (Forbidden): %s\n",
                    o->message.data ? o->message.data : "");
            break;
        }
        /* kubectl prints one "The <Kind> "<name>" is invalid: <field>: <message>" line per cause.
         */
        const char *p = o->causes.data ? o->causes.data : "";
        while (*p) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            fprintf(stderr, "The %s \"%s\" is invalid: %.*s\n", kind, who, (int)n, p);
            p += n + (nl != NULL);
        }
        break;
    }
    default:
        fprintf(stderr, "error: %s\n", o->message.data ? o->message.data : "");
    }
}

/* Decides one AdmissionReview: its response on stdout, the verdict into the exit status.
 * `hint_doc` (may be NULL) is the document, to say when it is a raw object and not a review. */
static void decide(struct run *r, const char *body, size_t len, const char *where,
                   const struct jg_doc *hint_doc) {
    struct jg_outcome o;
    jg_outcome_init(&o);
    jg_admit(body, len, &r->cfg, &r->response, &o);
    if (r->response.oom)
        fputs(jg_oom_response, stdout);
    else
        fwrite(r->response.data, 1, r->response.len, stdout);
    fputc('\n', stdout);
    if (r->explain) explain(&o, o.kind);
    switch (o.verdict) {
    case JG_VERDICT_ALLOWED:
        worse(r, EXIT_ALLOWED);
        break;
    case JG_VERDICT_DENIED:
        worse(r, EXIT_DENIED);
        break;
    default: {
        char hint[200] = "";
        if (hint_doc) { /* a raw object given where a review belongs: say so */
            jg_review rv;
            jg_decode_error err;
            struct jg_object_meta meta;
            struct jg_decode_objects_opts opts = {r->cfg.policy, NULL, NULL, &meta};
            jg_decode_objects(NULL, 0, hint_doc->json, hint_doc->len, NULL, &opts, &rv, &err);
            if (meta.kind.set && !jg_str_eq_lit(meta.kind.s, "AdmissionReview"))
                snprintf(hint, sizeof hint,
                         " (this is a %.*s, not an AdmissionReview: check raw objects with "
                         "--new)",
                         (int)(meta.kind.s.n > 64 ? 64 : meta.kind.s.n), meta.kind.s.p);
            else if (!meta.kind.set && o.message.data &&
                     strcmp(o.message.data, "request: required") == 0)
                snprintf(hint, sizeof hint,
                         " (this has neither kind nor request: an object is checked with --new, "
                         "and --kind KIND[.GROUP] names its kind)");
            jg_review_free(&rv);
        }
        if (!r->explain || hint[0])
            fprintf(stderr, "jobguard check: %s: %s%s\n", where,
                    o.message.data ? o.message.data : "", hint);
        worse(r, EXIT_UNREADABLE);
    }
    }
    jg_outcome_free(&o);
}

/* request.uid: the API server sends a random UUID; check derives one from what it decides (the
 * object's position in the input, the objects and the subresource), so that the same input gives
 * the same output. RFC 9562 layout, version 8 (custom). */
static void derive_uid(const struct run *r, const char *new_json, size_t new_len, char out[37]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    char ord[32];
    int n = snprintf(ord, sizeof ord, "%lu", r->n);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    memset(md, 0, sizeof md);
    if (ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
        EVP_DigestUpdate(ctx, ord, (size_t)n + 1);
        EVP_DigestUpdate(ctx, r->sub ? r->sub : "", r->sub ? strlen(r->sub) + 1 : 1);
        EVP_DigestUpdate(ctx, new_json, new_len);
        if (r->old_json) EVP_DigestUpdate(ctx, r->old_json, r->old_len);
        EVP_DigestFinal_ex(ctx, md, &mdlen);
    }
    EVP_MD_CTX_free(ctx);
    md[6] = (unsigned char)((md[6] & 0x0f) | 0x80);
    md[8] = (unsigned char)((md[8] & 0x3f) | 0x80);
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[k++] = '-';
        out[k++] = hex[md[i] >> 4];
        out[k++] = hex[md[i] & 15];
    }
    out[k] = '\0';
}

static void put_gvk(jg_buf *b, const char *key, jg_str group, jg_str version, const char *last,
                    const char *value) {
    jg_buf_printf(b, ",\"%s\":{\"group\":", key);
    jg_buf_json_string(b, group.p, group.n);
    jg_buf_puts(b, ",\"version\":");
    jg_buf_json_string(b, version.p, version.n);
    jg_buf_printf(b, ",\"%s\":", last);
    jg_buf_json_string(b, value, strlen(value));
    jg_buf_putc(b, '}');
}

/* The AdmissionReview kube-apiserver sends for the decoded request q, with the objects as given
 * (compact), in the member order of admission/v1's AdmissionRequest and its omitempty rules. */
static void compose(struct run *r, const struct jg_request *q, jg_str ns, const char *new_json,
                    size_t new_len) {
    jg_buf *b = &r->review;
    jg_buf_reset(b);
    char uid[37];
    derive_uid(r, new_json, new_len, uid);
    jg_buf_printf(b,
                  "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
                  "\"request\":{\"uid\":\"%s\"",
                  uid);
    const char *sub = r->sub ? r->sub : "";
    for (int i = 0; i < 2; i++) { /* kind, resource, subResource; then requestKind, ... */
        put_gvk(b, i ? "requestKind" : "kind", q->group, q->version, "kind", q->row->kind);
        put_gvk(b, i ? "requestResource" : "resource", q->group, q->version, "resource",
                q->row->resource);
        if (*sub) jg_buf_printf(b, ",\"%s\":\"%s\"", i ? "requestSubResource" : "subResource", sub);
    }
    if (q->object.name.n) {
        jg_buf_puts(b, ",\"name\":");
        jg_buf_json_string(b, q->object.name.p, q->object.name.n);
    }
    if (ns.n) {
        jg_buf_puts(b, ",\"namespace\":");
        jg_buf_json_string(b, ns.p, ns.n);
    }
    bool update = r->old_json != NULL;
    jg_buf_printf(b, ",\"operation\":\"%s\",\"userInfo\":{", update ? "UPDATE" : "CREATE");
    if (r->user) {
        jg_buf_puts(b, "\"username\":");
        jg_buf_json_string(b, r->user, strlen(r->user));
    }
    if (r->n_groups) {
        jg_buf_puts(b, r->user ? ",\"groups\":[" : "\"groups\":[");
        for (size_t i = 0; i < r->n_groups; i++) {
            if (i) jg_buf_putc(b, ',');
            jg_buf_json_string(b, r->groups[i].p, r->groups[i].n);
        }
        jg_buf_putc(b, ']');
    }
    jg_buf_puts(b, "},\"object\":");
    jg_buf_put(b, new_json, new_len);
    jg_buf_puts(b, ",\"oldObject\":");
    if (update)
        jg_buf_put(b, r->old_json, r->old_len);
    else
        jg_buf_puts(b, "null");
    jg_buf_printf(b,
                  ",\"dryRun\":false,\"options\":{\"kind\":\"%s\",\"apiVersion\":"
                  "\"meta.k8s.io/v1\"}}}",
                  update ? "UpdateOptions" : "CreateOptions");
}

/* One raw object: decoded as the request it would be, then decided, or printed as a review. */
static void check_object(struct run *r, const char *json, size_t len, const char *where) {
    jg_review rv;
    jg_decode_error err;
    struct jg_object_meta meta;
    struct jg_decode_objects_opts opts = {r->cfg.policy, r->kind, r->resource, &meta};
    if (jg_decode_objects(r->old_json, r->old_len, json, len, r->sub, &opts, &rv, &err) !=
        JG_DECODE_OK) {
        bool untyped = !r->kind && !r->resource && (!meta.kind.set || !meta.api_version.set);
        fprintf(stderr, "jobguard check: %s: %s%s\n", where, err.message,
                untyped ? "; --kind KIND[.GROUP] or --resource RES[.GROUP] names it otherwise"
                        : "");
        jg_review_free(&rv);
        worse(r, EXIT_UNREADABLE);
        return;
    }
    jg_str ns = rv.req.namespace_;
    if (r->ns && !ns.n) {
        ns = (jg_str){r->ns, strlen(r->ns)};
    } else if (r->ns && !jg_str_eq_lit(ns, r->ns)) { /* kubectl's words (cli-runtime) */
        fprintf(stderr,
                "jobguard check: %s: the namespace from the provided object \"%.*s\" does not "
                "match the namespace \"%s\". You must pass '--namespace=%.*s' to perform this "
                "operation.\n",
                where, (int)ns.n, ns.p, r->ns, (int)ns.n, ns.p);
        jg_review_free(&rv);
        worse(r, EXIT_UNREADABLE);
        return;
    }
    jg_buf_reset(&r->compact);
    jg_cli_json_compact(&r->compact, json, len);
    compose(r, &rv.req, ns, r->compact.data ? r->compact.data : "", r->compact.len);
    jg_review_free(&rv);
    r->n++;
    if (r->review.oom || r->compact.oom) {
        fprintf(stderr, "jobguard check: %s: out of memory\n", where);
        worse(r, EXIT_UNREADABLE);
        return;
    }
    if (r->print_review) {
        fwrite(r->review.data, 1, r->review.len, stdout);
        fputc('\n', stdout);
        return;
    }
    decide(r, r->review.data, r->review.len, where, NULL);
}

/* Reads the --old object: exactly one document. */
static bool read_old(struct run *r, const char *path, jg_buf *out) {
    jg_reader *rd = jg_reader_open(&path, 1);
    if (!rd) {
        fprintf(stderr, "jobguard check: --old: out of memory\n");
        return false;
    }
    struct jg_doc d;
    char err[1200], where[1200];
    int got = 0, st;
    bool ok = true;
    while ((st = jg_reader_next(rd, &d, err, sizeof err)) != 0) {
        if (st < 0) {
            fprintf(stderr, "jobguard check: --old: %s\n", err);
            ok = false;
        } else if (++got == 1) {
            jg_cli_json_compact(out, d.json, d.len);
        } else {
            jg_cli_where(&d, where, sizeof where);
            fprintf(stderr,
                    "jobguard check: --old: %s holds more than one object (%s is the second); "
                    "--old is the stored copy of exactly one --new object\n",
                    path, where);
            ok = false;
            break;
        }
    }
    jg_reader_close(rd);
    if (ok && got == 0) {
        fprintf(stderr, "jobguard check: --old: %s holds no object\n", path);
        ok = false;
    }
    if (ok && out->oom) {
        fprintf(stderr, "jobguard check: --old: out of memory\n");
        ok = false;
    }
    r->old_json = out->data;
    r->old_len = out->len;
    return ok;
}

/* Every document of `paths`: raw objects (--new) or AdmissionReviews. With --old, exactly one
 * new object: it is held until the reader says there is no second one. */
static void run_inputs(struct run *r, const char *const *paths, size_t n, bool raw) {
    jg_reader *rd = jg_reader_open(paths, n);
    if (!rd) {
        fprintf(stderr, "jobguard check: out of memory\n");
        worse(r, EXIT_UNREADABLE);
        return;
    }
    struct jg_doc d;
    jg_buf held_json = JG_BUF_INIT; /* with --old: the one new object, until the input ends */
    char held_where[1200] = "", err[1200];
    unsigned long docs = 0;
    bool refused = false;
    int st;
    while ((st = jg_reader_next(rd, &d, err, sizeof err)) != 0) {
        if (st < 0) {
            fprintf(stderr, "jobguard check: %s\n", err);
            if (!raw) { /* stdout carries a response per input, as for an undecodable review */
                jg_buf_reset(&r->response);
                jg_encode_error(&r->response, JG_API_V1, (jg_str){"", 0}, 400, "BadRequest", err);
                fwrite(r->response.data ? r->response.data : "", 1, r->response.len, stdout);
                fputc('\n', stdout);
            }
            worse(r, EXIT_UNREADABLE);
            continue;
        }
        docs++;
        char where[1200];
        jg_cli_where(&d, where, sizeof where);
        if (!raw) {
            decide(r, d.json, d.len, where, &d);
        } else if (!r->old_json) {
            check_object(r, d.json, d.len, where);
        } else if (docs == 1) {
            jg_buf_put(&held_json, d.json, d.len);
            snprintf(held_where, sizeof held_where, "%s", where);
        } else if (!refused) {
            fprintf(stderr,
                    "jobguard check: --old pairs with exactly one --new object, but %s is a "
                    "second one (after %s); check several objects without --old\n",
                    where, held_where);
            refused = true;
            worse(r, EXIT_UNREADABLE);
        }
    }
    jg_reader_close(rd);
    if (r->old_json && docs == 1 && !refused) {
        if (held_json.oom) {
            fprintf(stderr, "jobguard check: out of memory\n");
            worse(r, EXIT_UNREADABLE);
        } else {
            check_object(r, held_json.data, held_json.len, held_where);
        }
    }
    jg_buf_free(&held_json);
    if (docs == 0 && st == 0 && r->rc == EXIT_ALLOWED) {
        fprintf(stderr, "jobguard check: no %s in the input\n", raw ? "object" : "AdmissionReview");
        worse(r, EXIT_UNREADABLE);
    }
}

int jg_cmd_check(int argc, char **argv) {
    struct run r = {.cfg = JG_CONFIG_DEFAULT};
    jg_config_modes_unset(&r.cfg); /* --mode, else the policy file, else deny */
    const char *old_path = NULL;
    struct jg_cli_policy_files pf = {0};
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    const char **news = calloc((size_t)argc + 1, sizeof *news);
    size_t n_files = 0, n_news = 0;
    int rc = EXIT_UNREADABLE;
    struct jg_policy *policy = NULL;
    jg_buf old = JG_BUF_INIT;
    if (!files || !news) {
        fprintf(stderr, "jobguard check: out of memory\n");
        goto out;
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
            files[n_files++] = v;
            break;
        case F_EXPLAIN:
            r.explain = true;
            break;
        case F_PRINT_REVIEW:
            r.print_review = true;
            break;
        case F_NEW:
            news[n_news++] = v;
            break;
        case F_OLD:
            old_path = v;
            break;
        case F_SUBRESOURCE:
            r.sub = v;
            break;
        case F_KIND:
            r.kind = v;
            break;
        case F_RESOURCE:
            r.resource = v;
            break;
        case F_USER:
            r.user = v;
            break;
        case F_NAMESPACE:
            r.ns = v;
            break;
        case F_GROUP:
            if (r.n_groups == sizeof r.groups / sizeof r.groups[0]) {
                fprintf(stderr, "jobguard check: more than %zu --group\n",
                        sizeof r.groups / sizeof r.groups[0]);
                goto out;
            }
            r.groups[r.n_groups++] = (jg_str){v, strlen(v)};
            break;
        default: /* --parity, --disable-rule, --mode, --policy-file, --values */
            if (!jg_cli_config_flag("check", flags[f].name, v, &r.cfg, &pf)) goto out;
        }
    }
    if (n_news && n_files) {
        fprintf(stderr, "jobguard check: give either AdmissionReview FILEs or --new, not both\n");
        goto out;
    }
    if ((old_path || r.sub || r.kind || r.resource || r.user || r.n_groups || r.ns ||
         r.print_review) &&
        !n_news) {
        fprintf(stderr, "jobguard check: --old, --subresource, --kind, --resource, --namespace, "
                        "--user, --group and --print-review need --new (a review names its "
                        "own)\n");
        goto out;
    }
    if (r.sub && strcmp(r.sub, "status") != 0) {
        fprintf(stderr, "jobguard check: --subresource: only \"status\" is checked\n");
        goto out;
    }
    if (r.sub && !old_path) {
        fprintf(stderr,
                "jobguard check: --subresource %s needs --old: a subresource is only "
                "ever UPDATEd\n",
                r.sub);
        goto out;
    }
    if (r.ns && strlen(r.ns) > JG_MAX_NAMESPACE_BYTES) {
        fprintf(stderr, "jobguard check: " JG_NAMESPACE_TOO_LONG_FMT "\n", "--namespace",
                JG_MAX_NAMESPACE_BYTES, strlen(r.ns));
        goto out;
    }

    if (!jg_cli_load_policy("check", pf.policy, pf.values, &policy)) goto out;
    jg_policy_apply(policy, &r.cfg); /* --mode wins over the file; --disable-rule stays off */
    if (old_path && !read_old(&r, old_path, &old)) goto out;
    if (n_news) {
        run_inputs(&r, news, n_news, true);
    } else {
        static const char *const dash[] = {"-"};
        run_inputs(&r, n_files ? files : dash, n_files ? n_files : 1, false);
    }
    rc = r.rc;
out:
    jg_buf_free(&old);
    jg_buf_free(&r.review);
    jg_buf_free(&r.response);
    jg_buf_free(&r.compact);
    jg_policy_free(policy);
    free(files);
    free(news);
    return rc;
}
