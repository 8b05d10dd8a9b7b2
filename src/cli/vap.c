/* jobguard vap: the policy as ValidatingAdmissionPolicies and bindings (docs/vap.md). */
#include "../vap/vap.h"
#include "cli.h"
#include "jobguard/buf.h"
#include "jobguard/policy.h"
#include "jobguard/values.h"

#include "flags.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* A DNS label's length: a namespace name, and the prefix of the objects' names. */
#define LABEL_MAX 63

enum {
    F_POLICY,
    F_VALUES,
    F_OUTPUT,
    F_KUBE_VERSION,
    F_JOB_RULES,
    F_NAME_PREFIX,
    F_MODE,
    F_EXCLUDE_NS,
    F_NS_EXPRESSION,
    F_EXPLAIN,
    F_MARKDOWN,
    F_COUNT
};

static const struct jg_flag flags[F_COUNT] = {
    [F_POLICY] = JG_FLAG_POLICY_FILE,
    [F_VALUES] = JG_FLAG_VALUES,
    [F_OUTPUT] = {"output", 'o', "yaml|json",
                  "yaml (default): documents separated by ---;\n"
                  "json: one v1 List"},
    [F_KUBE_VERSION] = {"kubernetes-version", 0, "V",
                        "the cluster's minor version, 1.30 (the first with\n"
                        "VAP v1) to 1.37 (default 1.35); below 1.32 the Job and\n"
                        "CronJob format, length and immutability are emitted\n"
                        "too (from 1.32 the API server checks them itself)"},
    [F_JOB_RULES] = {"job-rules", 0, NULL, "emit those Job and CronJob rules whatever the version"},
    [F_NAME_PREFIX] = {"name-prefix", 0, "P", "object names start with P- (default jobguard)"},
    [F_MODE] = JG_FLAG_MODE,
    [F_EXCLUDE_NS] = {"exclude-namespace", 0, "NS",
                      "a namespace the bindings skip, as the chart's webhooks\n"
                      "(repeatable; default kube-system; the chart puts its\n"
                      "own exemptions on the bindings)"},
    [F_NS_EXPRESSION] = {"namespace-selector-expression", 0, "JSON",
                         "one more namespaceSelector matchExpressions entry,\n"
                         "e.g. '{\"key\":\"jobguard.io/ignore\",\"operator\":\n"
                         "\"DoesNotExist\"}' (repeatable)"},
    [F_EXPLAIN] = {"explain", 0, NULL,
                   "print, instead of the objects, every rule and target:\n"
                   "enforced by the VAP (validationActions, how) or not\n"
                   "(why)"},
    [F_MARKDOWN] = {"markdown", 0, NULL, "with --explain: as a Markdown table (docs/vap.md)"},
};

static const struct jg_flags spec = {
    .cmd = "vap",
    .head = "Usage: jobguard vap [--policy-file FILE | --values FILE] [--output yaml|json]\n"
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
            "Options:\n",
    .tail = "\n"
            "Exit status: 0 printed, 2 bad arguments or policy, or an object over 1 MiB\n"
            "(reason on stderr).\n",
    .flag = flags,
    .n = F_COUNT,
    .no_operands = true,
    .indent = 28,
};

/* A JSON tree as YAML events: block mappings and sequences (empty ones in flow style), keys
 * plain where libyaml can, strings double-quoted (so that "true" or "1.35" stay strings), other
 * scalars plain as JSON writes them. In a double-quoted scalar libyaml escapes what YAML would
 * fold or refuses raw: the line breaks NEL (U+0085), U+2028 and U+2029, DEL, the C1 controls,
 * the BOM and U+FFFE/U+FFFF. False when the emitter fails (out of memory). */
static bool emit(yaml_emitter_t *em, const json_t *v) {
    yaml_event_t ev;
    const char *k;
    json_t *x;
    size_t i;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                            json_object_size(v) ? YAML_BLOCK_MAPPING_STYLE
                                                                : YAML_FLOW_MAPPING_STYLE);
        if (!yaml_emitter_emit(em, &ev)) return false;
        json_object_foreach((json_t *)v, k, x) {
            yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)k, (int)strlen(k), 1, 1,
                                         YAML_ANY_SCALAR_STYLE);
            if (!yaml_emitter_emit(em, &ev) || !emit(em, x)) return false;
        }
        yaml_mapping_end_event_initialize(&ev);
        return yaml_emitter_emit(em, &ev);
    case JSON_ARRAY:
        yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
                                             json_array_size(v) ? YAML_BLOCK_SEQUENCE_STYLE
                                                                : YAML_FLOW_SEQUENCE_STYLE);
        if (!yaml_emitter_emit(em, &ev)) return false;
        json_array_foreach(v, i, x) if (!emit(em, x)) return false;
        yaml_sequence_end_event_initialize(&ev);
        return yaml_emitter_emit(em, &ev);
    case JSON_STRING:
        yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)json_string_value(v),
                                     (int)json_string_length(v), 0, 1,
                                     YAML_DOUBLE_QUOTED_SCALAR_STYLE);
        return yaml_emitter_emit(em, &ev);
    default: {
        char *s = json_dumps(v, JSON_ENCODE_ANY);
        if (!s) return false;
        yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 0,
                                     YAML_PLAIN_SCALAR_STYLE);
        free(s);
        return yaml_emitter_emit(em, &ev);
    }
    }
}

/* The objects as YAML documents, each starting with ---, lines never folded. */
static bool print_yaml(const json_t *objs) {
    yaml_emitter_t em;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&em)) return false;
    yaml_emitter_set_output_file(&em, stdout);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    bool ok = yaml_emitter_emit(&em, &ev);
    size_t i;
    json_t *x;
    json_array_foreach(objs, i, x) {
        if (!ok) break;
        yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0);
        ok = yaml_emitter_emit(&em, &ev) && emit(&em, x);
        yaml_document_end_event_initialize(&ev, 1);
        ok = ok && yaml_emitter_emit(&em, &ev);
    }
    yaml_stream_end_event_initialize(&ev);
    ok = ok && yaml_emitter_emit(&em, &ev) && yaml_emitter_flush(&em);
    yaml_emitter_delete(&em);
    return ok;
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
    const char *output = "yaml";
    struct jg_cli_policy_files pf = {0};
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
    struct jg_args it;
    jg_args_init(&it, &spec, argc, argv);
    const char *v;
    for (int f; (f = jg_args_next(&it, &v)) != JG_ARGS_END;) {
        switch (f) {
        case JG_ARGS_STOP:
            rc = it.status;
            goto out;
        case F_JOB_RULES:
            o.job_rules = true;
            break;
        case F_EXPLAIN:
            explain = true;
            break;
        case F_MARKDOWN:
            markdown = true;
            break;
        case F_EXCLUDE_NS:
        case F_NAME_PREFIX:
            if (!v[0] || strlen(v) > LABEL_MAX) {
                fprintf(stderr, "jobguard vap: --%s: \"%s\" is not 1 to %d characters\n",
                        flags[f].name, v, LABEL_MAX);
                goto out;
            }
            if (f == F_EXCLUDE_NS)
                excluded[n_excluded++] = v;
            else
                o.prefix = v;
            break;
        case F_NS_EXPRESSION: {
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
            break;
        }
        case F_OUTPUT:
            if (strcmp(v, "yaml") != 0 && strcmp(v, "json") != 0) {
                fprintf(stderr, "jobguard vap: %.*s: unsupported %s (yaml or json)\n",
                        it.spelled_len, it.spelled, v);
                goto out;
            }
            output = v;
            break;
        case F_KUBE_VERSION: {
            char *end;
            long m = JG_STARTS_WITH(v, "1.") ? strtol(v + JG_LIT_LEN("1."), &end, 10) : 0;
            if (m < 30 || m > 37 || *end) {
                fprintf(stderr, "jobguard vap: --kubernetes-version: %s is not 1.30 to 1.37\n", v);
                goto out;
            }
            minor = (int)m;
            break;
        }
        case F_MODE:
            if (!jg_cli_config_flag("vap", "mode", v, &cfg, &pf)) goto out;
            jg_buf_printf(&modes, "%s%s", modes.len ? "," : "", v); /* for the annotation */
            break;
        default: /* --policy-file, --values */
            if (!jg_cli_config_flag("vap", flags[f].name, v, &cfg, &pf)) goto out;
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
    if (!jg_cli_load_policy("vap", pf.policy, pf.values, &p)) goto out;
    /* the digest the chart computes of .Values.policy (`toJson`): with --values, the loaded
     * policy's; of a policy file, its tree written as Helm writes it */
    char sha[65] = "", err[1024];
    if (pf.values && p)
        memcpy(sha, p->sha256, sizeof sha);
    else if (!jg_policy_chart_sha256(pf.policy, sha, err, sizeof err)) {
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
        if (!print_yaml(objs)) {
            fprintf(stderr, "jobguard vap: writing YAML: out of memory\n");
            rc = 2;
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
