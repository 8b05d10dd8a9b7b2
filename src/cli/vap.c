/* jobguard vap: the policy as ValidatingAdmissionPolicies and bindings (docs/vap.md). */
#include "jobguard/cli.h"
#include "jobguard/policy.h"
#include "jobguard/vap.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f) {
    fprintf(f,
            "Usage: jobguard vap [--policy-file FILE] [--output yaml|json]\n"
            "                    [--kubernetes-version 1.30..1.37] [--job-rules]\n"
            "                    [--name-prefix P] [--mode ID=MODE]...\n"
            "       jobguard vap --explain [--markdown] [same options]\n"
            "\n"
            "Prints ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding objects\n"
            "(admissionregistration.k8s.io/v1) that make the API server enforce, in-process,\n"
            "the rules CEL can express, for every target row (built-in and the policy's):\n"
            "managedBy format and length, immutability, keyed nested copies, delegation\n"
            "unsupported, Policy-AllowedControllers and Policy-StatusWriters. One policy per row\n"
            "and mode: deny -> [Deny], warn -> [Warn], audit -> [Audit], off -> none. The Job\n"
            "status rules stay with the webhook. docs/vap.md lists what each rule becomes.\n"
            "\n"
            "Options:\n"
            "  --policy-file FILE        the policy (modes, controllers, targets)\n"
            "  --output yaml|json        yaml (default): documents separated by ---;\n"
            "                            json: one v1 List\n"
            "  --kubernetes-version V    the cluster's minor version, 1.30 (the first with\n"
            "                            VAP v1) to 1.37 (default 1.35); below 1.32 the Job and\n"
            "                            CronJob format, length and immutability are emitted\n"
            "                            too (from 1.32 the API server checks them itself)\n"
            "  --job-rules               emit those Job and CronJob rules whatever the version\n"
            "  --name-prefix P           object names start with P- (default jobguard)\n"
            "  --mode ID=MODE            a rule's mode, over the policy file's (as check)\n"
            "  --explain                 print, instead of the objects, every rule and target:\n"
            "                            enforced by the VAP (validationActions, how) or not\n"
            "                            (why); --markdown as a Markdown table (docs/vap.md)\n"
            "  --help                    this text\n"
            "\n"
            "Exit status: 0 printed, 2 bad arguments or policy (reason on stderr).\n");
}

/* A readable YAML of a JSON tree: block mappings and sequences, strings double-quoted in JSON
 * syntax (a JSON string is a YAML double-quoted scalar). */
static void yaml(FILE *f, const json_t *v, int indent, bool in_seq);

static void yaml_scalar(FILE *f, const json_t *v) {
    char *s = json_dumps(v, JSON_ENCODE_ANY);
    fputs(s ? s : "null", f);
    free(s);
}

static bool is_container(const json_t *v) {
    return (json_is_object(v) && json_object_size(v)) || (json_is_array(v) && json_array_size(v));
}

static void yaml(FILE *f, const json_t *v, int indent, bool in_seq) {
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        bool first = true;
        json_object_foreach((json_t *)v, k, x) {
            if (!(first && in_seq)) fprintf(f, "%*s", indent, "");
            first = false;
            fprintf(f, "%s:", k);
            if (is_container(x)) {
                fputc('\n', f);
                yaml(f, x, json_is_array(x) ? indent : indent + 2, false);
            } else {
                fputc(' ', f);
                yaml_scalar(f, x);
                fputc('\n', f);
            }
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            fprintf(f, "%*s- ", indent, "");
            if (json_is_object(x) && json_object_size(x)) {
                yaml(f, x, indent + 2, true);
            } else {
                yaml_scalar(f, x);
                fputc('\n', f);
            }
        }
    }
}

/* The rows of jg_vap_explain: a Markdown table, or one block per row. */
static void print_explain(const json_t *rows, bool markdown) {
    size_t i;
    json_t *r;
    if (markdown) puts("| Rule | Targets | VAP | How, or why not |\n|---|---|---|---|");
    json_array_foreach(rows, i, r) {
        const char *f[4];
        static const char *const keys[4] = {"rule", "target", "vap", "how"};
        for (int k = 0; k < 4; k++)
            f[k] = json_string_value(json_object_get(r, keys[k]));
        if (markdown)
            printf("| %s | %s | %s | %s |\n", f[0], f[1], f[2], f[3]);
        else
            printf("%s\n  targets: %s\n  vap: %s\n  %s\n", f[0], f[1], f[2], f[3]);
    }
}

int jg_cmd_vap(int argc, char **argv) {
    const char *policy_file = NULL, *output = "yaml";
    struct jg_vap_options o = {.prefix = "jobguard"};
    int minor = 35;
    bool explain = false, markdown = false;
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_config_modes_unset(&cfg);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--job-rules") == 0) {
            o.job_rules = true;
            continue;
        }
        if (strcmp(a, "--explain") == 0 || strcmp(a, "--markdown") == 0) {
            *(a[2] == 'e' ? &explain : &markdown) = true;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "jobguard vap: %s needs a value (or is unknown)\n\n", a);
            usage(stderr);
            return 2;
        }
        const char *v = argv[++i];
        if (strcmp(a, "--policy-file") == 0) {
            policy_file = v;
        } else if (strcmp(a, "--output") == 0 && (!strcmp(v, "yaml") || !strcmp(v, "json"))) {
            output = v;
        } else if (strcmp(a, "--kubernetes-version") == 0) {
            char *end;
            long m = strncmp(v, "1.", 2) == 0 ? strtol(v + 2, &end, 10) : 0;
            if (m < 30 || m > 37 || *end) {
                fprintf(stderr, "jobguard vap: --kubernetes-version: %s is not 1.30 to 1.37\n", v);
                return 2;
            }
            minor = (int)m;
        } else if (strcmp(a, "--name-prefix") == 0 && v[0] && strlen(v) <= 63) {
            o.prefix = v;
        } else if (strcmp(a, "--mode") == 0) {
            char err[300];
            if (!jg_mode_set(v, strlen(v), cfg.mode, err, sizeof err)) {
                fprintf(stderr, "jobguard vap: --mode: %s\n", err);
                return 2;
            }
        } else {
            fprintf(stderr, "jobguard vap: bad option %s %s\n\n", a, v);
            usage(stderr);
            return 2;
        }
    }
    for (const char *c = o.prefix; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '.')) {
            fprintf(stderr, "jobguard vap: --name-prefix: \"%s\" is not lowercase a-z, 0-9, '-', '.'\n",
                    o.prefix);
            return 2;
        }
    if (markdown && !explain) {
        fprintf(stderr, "jobguard vap: --markdown goes with --explain\n");
        return 2;
    }
    if (minor < 32) o.job_rules = true;
    struct jg_policy *p = NULL;
    if (policy_file) {
        char err[1024];
        p = jg_policy_load_file(policy_file, err, sizeof err);
        if (!p) {
            fprintf(stderr, "jobguard vap: %s\n", err);
            return 2;
        }
    }
    jg_policy_apply(p, &cfg);
    char err[600];
    json_t *objs = (explain ? jg_vap_explain : jg_vap_build)(&cfg, &o, err, sizeof err);
    int rc = 0;
    if (!objs) {
        fprintf(stderr, "jobguard vap: %s\n", err);
        rc = 2;
    } else if (explain) {
        print_explain(objs, markdown);
    } else if (strcmp(output, "json") == 0) {
        json_t *list = json_pack("{s:s, s:s, s:O}", "apiVersion", "v1", "kind", "List", "items",
                                 objs);
        json_dumpf(list, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
        json_decref(list);
    } else {
        size_t i;
        json_t *x;
        json_array_foreach(objs, i, x) {
            fputs("---\n", stdout);
            yaml(stdout, x, 0, false);
        }
    }
    json_decref(objs);
    jg_policy_free(p);
    return rc;
}
