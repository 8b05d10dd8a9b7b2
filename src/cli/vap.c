/* jobguard vap: the policy as ValidatingAdmissionPolicies and bindings (docs/vap.md). */
#include "../vap/vap.h"
#include "cli.h"
#include "jobguard/buf.h"
#include "jobguard/policy.h"
#include "jobguard/values.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f) {
    fprintf(f,
            "Usage: jobguard vap [--policy-file FILE | --values FILE] [--output yaml|json]\n"
            "                    [--kubernetes-version 1.30..1.37] [--job-rules]\n"
            "                    [--name-prefix P] [--mode ID=MODE]...\n"
            "                    [--exclude-namespace NS]... [--namespace-selector-expression "
            "JSON]...\n"
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
            "  --values FILE             the policy of a Helm values file (.policy, as the chart\n"
            "                            writes it); instead of --policy-file\n"
            "  -o, --output yaml|json    yaml (default): documents separated by ---;\n"
            "                            json: one v1 List\n"
            "  --kubernetes-version V    the cluster's minor version, 1.30 (the first with\n"
            "                            VAP v1) to 1.37 (default 1.35); below 1.32 the Job and\n"
            "                            CronJob format, length and immutability are emitted\n"
            "                            too (from 1.32 the API server checks them itself)\n"
            "  --job-rules               emit those Job and CronJob rules whatever the version\n"
            "  --name-prefix P           object names start with P- (default jobguard)\n"
            "  --mode ID=MODE            a rule's mode, over the policy file's (as check)\n"
            "  --exclude-namespace NS    a namespace the bindings skip, as the chart's webhooks\n"
            "                            (repeatable; default kube-system; the chart puts its\n"
            "                            own exemptions on the bindings)\n"
            "  --namespace-selector-expression JSON\n"
            "                            one more namespaceSelector matchExpressions entry,\n"
            "                            e.g. '{\"key\":\"jobguard.io/ignore\",\"operator\":\n"
            "                            \"DoesNotExist\"}' (repeatable)\n"
            "  --explain                 print, instead of the objects, every rule and target:\n"
            "                            enforced by the VAP (validationActions, how) or not\n"
            "                            (why); --markdown as a Markdown table (docs/vap.md)\n"
            "  --help                    this text\n"
            "\n"
            "Exit status: 0 printed, 2 bad arguments or policy, or an object over 1 MiB\n"
            "(reason on stderr).\n");
}

/* A readable YAML of a JSON tree: block mappings and sequences, strings double-quoted in JSON
 * syntax (a JSON string is a YAML double-quoted scalar). */
static void yaml(FILE *f, const json_t *v, int indent, bool in_seq);

/* A JSON scalar as a YAML double-quoted one: what JSON leaves raw but YAML folds or refuses is
 * escaped, so that a YAML reader gets the same string: the line breaks NEL (U+0085), U+2028 and
 * U+2029 (YAML folds them into a space or a newline), DEL and the other C1 controls, the BOM and
 * U+FFFE/U+FFFF (not printable in YAML). */
static void yaml_scalar(FILE *f, const json_t *v) {
    char *s = json_dumps(v, JSON_ENCODE_ANY);
    if (!s) {
        fputs("null", f);
        return;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned cp = 0;
        size_t n = 0;
        if (*p == 0x7f)
            cp = 0x7f, n = 1;
        else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
            cp = p[1], n = 2;
        else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
            cp = 0x2000u | (p[2] - 0x80u), n = 3;
        else if (p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
            cp = 0xfeff, n = 3;
        else if (p[0] == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf))
            cp = 0xffc0u | (p[2] & 0x3fu), n = 3;
        if (n) {
            fprintf(f, "\\u%04x", cp);
            p += n - 1;
        } else {
            fputc(*p, f);
        }
    }
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

/* The objects the API server stores: etcd refuses a value over 1.5 MiB, the API server a request
 * over 3 MiB; jobguard refuses to print any object over 1 MiB (compact JSON) rather than leave
 * enforcement partial. */
#define MAX_OBJECT_BYTES ((size_t)1 << 20)

static bool sizes_ok(const json_t *objs) {
    size_t i;
    json_t *x;
    bool ok = true;
    json_array_foreach(objs, i, x) {
        char *s = json_dumps(x, JSON_COMPACT);
        size_t n = s ? strlen(s) : 0;
        free(s);
        if (n > MAX_OBJECT_BYTES) {
            fprintf(stderr,
                    "jobguard vap: %s %s is %zu bytes, more than 1 MiB (etcd stores at most "
                    "1.5 MiB): the policy's tables are too large for admission policies; "
                    "keep the webhook for it (docs/vap.md \"Size\")\n",
                    json_string_value(json_object_get(x, "kind")),
                    json_string_value(json_object_get(json_object_get(x, "metadata"), "name")), n);
            ok = false;
        }
    }
    return ok;
}

/* The bindings' namespaceSelector: the excluded names (NotIn on kubernetes.io/metadata.name),
 * then the extra expressions, as the chart builds its webhooks' (jobguard.namespaceSelector). */
static json_t *selector(const char **excluded, size_t n_excluded, json_t *exprs) {
    json_t *all = json_array();
    if (n_excluded) {
        json_t *vals = json_array();
        for (size_t i = 0; i < n_excluded; i++)
            json_array_append_new(vals, json_string(excluded[i]));
        json_array_append_new(all,
                              json_pack("{s:s, s:s, s:o}", "key", "kubernetes.io/metadata.name",
                                        "operator", "NotIn", "values", vals));
    }
    json_array_extend(all, exprs);
    if (json_array_size(all) == 0) {
        json_decref(all);
        return NULL;
    }
    return json_pack("{s:o}", "matchExpressions", all);
}

/* One matchExpressions entry: {key, operator In|NotIn|Exists|DoesNotExist, values}. */
static bool expression_ok(const json_t *e) {
    const char *op = json_string_value(json_object_get(e, "operator"));
    const json_t *vals = json_object_get(e, "values");
    if (!json_is_object(e) || !json_is_string(json_object_get(e, "key")) || !op) return false;
    bool set = !strcmp(op, "In") || !strcmp(op, "NotIn");
    bool exists = !strcmp(op, "Exists") || !strcmp(op, "DoesNotExist");
    if (!set && !exists) return false;
    if (exists) return !vals || (json_is_array(vals) && json_array_size(vals) == 0);
    if (!json_is_array(vals) || json_array_size(vals) == 0) return false;
    size_t i;
    json_t *v;
    json_array_foreach(vals, i, v) if (!json_is_string(v)) return false;
    const char *k;
    json_object_foreach((json_t *)e, k, v) if (strcmp(k, "key") && strcmp(k, "operator") &&
                                               strcmp(k, "values")) return false;
    return true;
}

int jg_cmd_vap(int argc, char **argv) {
    const char *policy_file = NULL, *values_file = NULL, *output = "yaml";
    const char **excluded = calloc((size_t)argc + 1, sizeof *excluded);
    size_t n_excluded = 0;
    json_t *exprs = json_array();
    jg_buf modes = JG_BUF_INIT;
    int rc = 2;
    struct jg_vap_options o = {.prefix = "jobguard"};
    int minor = 35;
    bool explain = false, markdown = false;
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_config_modes_unset(&cfg);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            rc = 0;
            goto out;
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
            goto out;
        }
        const char *v = argv[++i];
        if (strcmp(a, "--policy-file") == 0) {
            policy_file = v;
        } else if (strcmp(a, "--values") == 0) {
            values_file = v;
        } else if (strcmp(a, "--exclude-namespace") == 0 && v[0] && strlen(v) <= 63) {
            excluded[n_excluded++] = v;
        } else if (strcmp(a, "--namespace-selector-expression") == 0) {
            json_t *e = json_loads(v, 0, NULL);
            if (!expression_ok(e)) {
                fprintf(stderr,
                        "jobguard vap: --namespace-selector-expression: %s is not a "
                        "matchExpressions entry (key, operator In, NotIn, Exists or "
                        "DoesNotExist, values for In and NotIn only)\n",
                        v);
                json_decref(e);
                goto out;
            }
            json_array_append_new(exprs, e);
        } else if ((!strcmp(a, "--output") || !strcmp(a, "-o")) &&
                   (!strcmp(v, "yaml") || !strcmp(v, "json"))) {
            output = v;
        } else if (strcmp(a, "--kubernetes-version") == 0) {
            char *end;
            long m = strncmp(v, "1.", 2) == 0 ? strtol(v + 2, &end, 10) : 0;
            if (m < 30 || m > 37 || *end) {
                fprintf(stderr, "jobguard vap: --kubernetes-version: %s is not 1.30 to 1.37\n", v);
                goto out;
            }
            minor = (int)m;
        } else if (strcmp(a, "--name-prefix") == 0 && v[0] && strlen(v) <= 63) {
            o.prefix = v;
        } else if (strcmp(a, "--mode") == 0) {
            char err[300];
            if (!jg_mode_set(v, strlen(v), cfg.mode, err, sizeof err)) {
                fprintf(stderr, "jobguard vap: --mode: %s\n", err);
                goto out;
            }
            jg_buf_printf(&modes, "%s%s", modes.len ? "," : "", v);
        } else {
            fprintf(stderr, "jobguard vap: bad option %s %s\n\n", a, v);
            usage(stderr);
            goto out;
        }
    }
    for (const char *c = o.prefix; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '.')) {
            fprintf(stderr,
                    "jobguard vap: --name-prefix: \"%s\" is not lowercase a-z, 0-9, '-', '.'\n",
                    o.prefix);
            goto out;
        }
    if (markdown && !explain) {
        fprintf(stderr, "jobguard vap: --markdown goes with --explain\n");
        goto out;
    }
    if (minor < 32) o.job_rules = true;
    struct jg_policy *p = NULL;
    if (!jg_cli_load_policy("vap", policy_file, values_file, &p)) goto out;
    /* the digest the chart computes of .Values.policy (`toJson`): with --values, the loaded
     * policy's; of a policy file, its tree written as Helm writes it */
    char sha[65] = "", err[1024];
    if (values_file && p)
        memcpy(sha, p->sha256, sizeof sha);
    else if (!jg_policy_chart_sha256(policy_file, sha, err, sizeof err)) {
        fprintf(stderr, "jobguard vap: %s\n", err);
        jg_policy_free(p);
        goto out;
    }
    o.policy_sha256 = sha;
    o.mode_overrides = modes.data;
    if (!n_excluded) excluded[n_excluded++] = "kube-system";
    json_t *sel = selector(excluded, n_excluded, exprs);
    o.namespace_selector = sel;
    jg_policy_apply(p, &cfg);
    json_t *objs = (explain ? jg_vap_explain : jg_vap_build)(&cfg, &o, err, sizeof err);
    json_decref(sel);
    rc = 0;
    if (!objs) {
        fprintf(stderr, "jobguard vap: %s\n", err);
        rc = 2;
    } else if (!explain && !sizes_ok(objs)) {
        rc = 2;
    } else if (explain) {
        print_explain(objs, markdown);
    } else if (strcmp(output, "json") == 0) {
        json_t *list =
            json_pack("{s:s, s:s, s:O}", "apiVersion", "v1", "kind", "List", "items", objs);
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
out:
    free(excluded);
    json_decref(exprs);
    jg_buf_free(&modes);
    return rc;
}
