/* jobguard check: decide one AdmissionReview, or a pair of raw Job objects, offline. Enters the
 * engine through the same jg_admit path as the server, so they cannot disagree. */
#include "jobguard/admit.h"
#include "jobguard/cli.h"
#include "jobguard/policy.h"

#include <stdio.h>
#include <string.h>

enum { EXIT_ALLOWED = 0, EXIT_DENIED = 1, EXIT_UNREADABLE = 2 };

static void usage(FILE *f) {
    fprintf(
        f,
        "Usage: jobguard check [options] [FILE|-]\n"
        "       jobguard check [options] --new NEW.json [--old OLD.json] [--subresource status]\n"
        "\n"
        "Decides one AdmissionReview (admission.k8s.io/v1 or v1beta1) read from FILE or stdin\n"
        "and prints the response AdmissionReview on stdout. With --new/--old it checks raw\n"
        "objects of any target (Job, CronJob, JobSet, ...; 'jobguard rules' lists them) instead:\n"
        "--new alone is a CREATE, --old and --new an UPDATE of the main resource, or of its\n"
        "status with --subresource status. The object's apiVersion and kind say which target\n"
        "it is (batch/v1 Job when it has neither); --kind or --resource say it otherwise.\n"
        "\n"
        "Options:\n"
        "  --explain              also print a human-readable verdict on stderr, one line\n"
        "                         per error and per warning as kubectl prints them\n"
        "  --parity VERSION       Kubernetes wording to reproduce: 1.35 (default), 1.36 or 1.37\n"
        "  --disable-rule ID      do not enforce rule ID (repeatable; see 'jobguard rules')\n"
        "  --policy-file FILE     apply this policy file (modes, controllers, targets;\n"
        "                         docs/policy.md); an invalid file exits 2\n"
        "  --mode ID=MODE         rule ID's mode: deny, warn, audit or off; ID \"*\" sets every\n"
        "                         rule (repeatable, later ones win, and win over the policy\n"
        "                         file's modes; see docs/modes.md)\n"
        "  --new FILE             the new object (raw JSON of any target)\n"
        "  --old FILE             the stored object (makes it an UPDATE)\n"
        "  --subresource NAME     \"status\" to check a status update (needs --old)\n"
        "  --kind KIND[.GROUP]    the target of --new/--old by kind, e.g. JobSet or\n"
        "                         PyTorchJob.kubeflow.org (GROUP defaults to the object's)\n"
        "  --resource RES[.GROUP] the same by resource, e.g. jobsets.jobset.x-k8s.io\n"
        "  --user NAME            who sends the --new/--old request (status writers of the\n"
        "                         policy; service accounts as system:serviceaccount:NS:NAME)\n"
        "  --group NAME           a group of that user (repeatable)\n"
        "  --help                 this text\n"
        "\n"
        "Exit status: 0 allowed, 1 denied, 2 unreadable input (reason on stderr).\n");
}

/* --mode ID=MODE, ID a rule ID or "*" for every rule. */
static bool parse_mode(const char *value, struct jg_config *cfg) {
    char err[300];
    if (jg_mode_set(value, strlen(value), cfg->mode, err, sizeof err)) return true;
    fprintf(stderr, "jobguard check: --mode: %s\n", err);
    return false;
}

/* Parses the options shared by check and serve: --parity and --disable-rule (and check's
 * --mode). */
static bool parse_config_flag(const char *flag, const char *value, struct jg_config *cfg) {
    if (strcmp(flag, "--mode") == 0) return parse_mode(value, cfg);
    if (strcmp(flag, "--parity") == 0) {
        if (jg_parity_parse(value, &cfg->parity)) return true;
        fprintf(stderr, "jobguard check: --parity: unsupported %s (" JG_PARITY_VALUES ")\n", value);
        return false;
    }
    const struct jg_rule *r = jg_rule_find(value);
    if (!r) {
        fprintf(stderr, "jobguard check: --disable-rule: unknown rule %s (see 'jobguard rules')\n",
                value);
        return false;
    }
    cfg->disabled |= UINT64_C(1) << r->id;
    return true;
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

int jg_cmd_check(int argc, char **argv) {
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_config_modes_unset(&cfg); /* --mode, else the policy file, else deny */
    const char *file = NULL, *new_path = NULL, *old_path = NULL, *sub = NULL, *policy_path = NULL,
               *kind = NULL, *resource = NULL, *user = NULL;
    jg_str groups[64];
    size_t n_groups = 0;
    bool want_explain = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool takes_value = strcmp(a, "--parity") == 0 || strcmp(a, "--disable-rule") == 0 ||
                           strcmp(a, "--policy-file") == 0 || strcmp(a, "--mode") == 0 ||
                           strcmp(a, "--new") == 0 || strcmp(a, "--old") == 0 ||
                           strcmp(a, "--subresource") == 0 || strcmp(a, "--kind") == 0 ||
                           strcmp(a, "--resource") == 0 || strcmp(a, "--user") == 0 ||
                           strcmp(a, "--group") == 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--explain") == 0) {
            want_explain = true;
        } else if (takes_value) {
            if (i + 1 >= argc) {
                fprintf(stderr, "jobguard check: %s needs a value\n", a);
                return EXIT_UNREADABLE;
            }
            const char *v = argv[++i];
            if (strcmp(a, "--new") == 0)
                new_path = v;
            else if (strcmp(a, "--old") == 0)
                old_path = v;
            else if (strcmp(a, "--subresource") == 0)
                sub = v;
            else if (strcmp(a, "--kind") == 0)
                kind = v;
            else if (strcmp(a, "--resource") == 0)
                resource = v;
            else if (strcmp(a, "--user") == 0)
                user = v;
            else if (strcmp(a, "--group") == 0) {
                if (n_groups == sizeof groups / sizeof groups[0]) {
                    fprintf(stderr, "jobguard check: more than 64 --group\n");
                    return EXIT_UNREADABLE;
                }
                groups[n_groups++] = (jg_str){v, strlen(v)};
            }
            else if (strcmp(a, "--policy-file") == 0)
                policy_path = v;
            else if (!parse_config_flag(a, v, &cfg))
                return EXIT_UNREADABLE;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "jobguard check: unknown option %s\n", a);
            usage(stderr);
            return EXIT_UNREADABLE;
        } else if (!file) {
            file = a;
        } else {
            fprintf(stderr, "jobguard check: more than one input file\n");
            return EXIT_UNREADABLE;
        }
    }
    if (new_path && file) {
        fprintf(stderr, "jobguard check: give either an AdmissionReview FILE or --new, not both\n");
        return EXIT_UNREADABLE;
    }
    if ((old_path || sub || kind || resource || user || n_groups) && !new_path) {
        fprintf(stderr, "jobguard check: --old, --subresource, --kind, --resource, --user and "
                        "--group need --new (a review names its own)\n");
        return EXIT_UNREADABLE;
    }
    if (sub && strcmp(sub, "status") != 0) {
        fprintf(stderr, "jobguard check: --subresource: only \"status\" is checked\n");
        return EXIT_UNREADABLE;
    }

    char reason[1024];
    struct jg_policy *policy = NULL;
    if (policy_path) {
        if (!(policy = jg_policy_load_file(policy_path, reason, sizeof reason))) {
            fprintf(stderr, "jobguard check: --policy-file: %s\n", reason);
            return EXIT_UNREADABLE;
        }
    }
    jg_policy_apply(policy, &cfg); /* --mode wins over the file; --disable-rule stays off */
    jg_buf in = JG_BUF_INIT, old_in = JG_BUF_INIT, response = JG_BUF_INIT;
    struct jg_outcome o;
    jg_outcome_init(&o);
    int rc = EXIT_UNREADABLE;
    if (new_path) {
        if (!jg_read_file(new_path, JG_MAX_BODY_BYTES, &in, reason, sizeof reason) ||
            (old_path &&
             !jg_read_file(old_path, JG_MAX_BODY_BYTES, &old_in, reason, sizeof reason))) {
            fprintf(stderr, "jobguard check: %s\n", reason);
            goto out;
        }
        jg_review review;
        jg_decode_error err;
        struct jg_decode_objects_opts opts = {policy, kind, resource};
        if (jg_decode_objects(old_path ? old_in.data : NULL, old_in.len, in.data, in.len, sub,
                              &opts, &review, &err) != JG_DECODE_OK) {
            fprintf(stderr, "jobguard check: %s\n", err.message);
            jg_review_free(&review);
            goto out;
        }
        if (user) review.req.username = (jg_str){user, strlen(user)};
        review.req.groups = (jg_str_list){n_groups > 0, n_groups, groups};
        jg_admit_review(&review, &cfg, &response, &o);
        jg_review_free(&review);
    } else {
        if (!jg_read_file(file ? file : "-", JG_MAX_BODY_BYTES, &in, reason, sizeof reason)) {
            fprintf(stderr, "jobguard check: %s\n", reason);
            goto out;
        }
        jg_admit(in.data, in.len, &cfg, &response, &o);
    }
    if (response.oom) {
        fputs(jg_oom_response, stdout);
    } else {
        fwrite(response.data, 1, response.len, stdout);
    }
    fputc('\n', stdout);
    if (want_explain) explain(&o, o.kind);
    switch (o.verdict) {
    case JG_VERDICT_ALLOWED:
        rc = EXIT_ALLOWED;
        break;
    case JG_VERDICT_DENIED:
        rc = EXIT_DENIED;
        break;
    default:
        if (!want_explain)
            fprintf(stderr, "jobguard check: %s\n", o.message.data ? o.message.data : "");
        rc = EXIT_UNREADABLE;
    }
out:
    jg_buf_free(&in);
    jg_buf_free(&old_in);
    jg_buf_free(&response);
    jg_outcome_free(&o);
    jg_policy_free(policy);
    return rc;
}
