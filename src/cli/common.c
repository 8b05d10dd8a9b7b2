/* What the check, scan and vap commands share: the rule options, the policy (--policy-file or
 * --values) and how a document is named. */
#include "cli.h"
#include "jobguard/reader.h"
#include "jobguard/rules.h"
#include "jobguard/values.h"

#include <stdio.h>
#include <string.h>

bool jg_cli_config_flag(const char *cmd, const char *flag, const char *value, struct jg_config *cfg,
                        struct jg_cli_policy_files *files) {
    char err[300];
    if (strcmp(flag, "policy-file") == 0 || strcmp(flag, "values") == 0) {
        *(flag[0] == 'p' ? &files->policy : &files->values) = value;
        return true;
    }
    if (strcmp(flag, "mode") == 0) {
        if (jg_mode_set(value, strlen(value), cfg->mode, err, sizeof err)) return true;
        fprintf(stderr, "jobguard %s: --mode: %s\n", cmd, err);
        return false;
    }
    if (strcmp(flag, "parity") == 0) {
        if (jg_parity_parse(value, &cfg->parity)) return true;
        fprintf(stderr, "jobguard %s: --parity: unsupported %s (" JG_PARITY_VALUES ")\n", cmd,
                value);
        return false;
    }
    const struct jg_rule *r = jg_rule_find(value);
    if (!r) {
        fprintf(stderr, "jobguard %s: --disable-rule: unknown rule %s (see 'jobguard rules')\n",
                cmd, value);
        return false;
    }
    cfg->disabled |= UINT64_C(1) << r->id;
    return true;
}

bool jg_cli_fail_on(const char *cmd, const char *value, unsigned *fail_on) {
    if (strcmp(value, "warn") == 0) {
        *fail_on = 1u << JG_MODE_WARN;
    } else if (strcmp(value, "audit") == 0) {
        *fail_on = 1u << JG_MODE_WARN | 1u << JG_MODE_AUDIT;
    } else {
        fprintf(stderr, "jobguard %s: --fail-on: unsupported %s (warn or audit)\n", cmd, value);
        return false;
    }
    return true;
}

int jg_cli_exit_status(size_t unreadable, const size_t broken_by_mode[], unsigned fail_on) {
    if (unreadable) return 2;
    for (int m = JG_MODE_DENY; m < JG_MODE_OFF; m++)
        if (broken_by_mode[m] && (m == JG_MODE_DENY || (fail_on >> m & 1))) return 1;
    return 0;
}

void jg_cli_where(const struct jg_doc *d, char *out, size_t cap) {
    const char *src = strcmp(d->source, "-") == 0 ? "stdin" : d->source;
    if (d->item >= 0)
        snprintf(out, cap, "%s:%u items[%ld]", src, d->line, d->item);
    else
        snprintf(out, cap, "%s:%u", src, d->line);
}

void jg_cli_json_compact(jg_buf *out, const char *json, size_t len) {
    if (!jg_buf_reserve(out, len)) return;
    const char *p = json, *end = json + len, *run = p;
    while (p < end) {
        char c = *p;
        if (c == '"') { /* copy the string whole: it holds no raw newline, only escapes */
            for (p++; p < end && *p != '"'; p++)
                if (*p == '\\') p++;
            p++;
        } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            jg_buf_put(out, run, (size_t)(p - run));
            while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
                p++;
            run = p;
        } else {
            p++;
        }
    }
    if (p > end) p = end;
    jg_buf_put(out, run, (size_t)(p - run));
}

bool jg_cli_load_policy(const char *cmd, const char *policy_file, const char *values_file,
                        struct jg_policy **out) {
    char err[1024];
    *out = NULL;
    if (policy_file && values_file) {
        fprintf(stderr, "jobguard %s: give --policy-file or --values, not both\n", cmd);
        return false;
    }
    if (policy_file) {
        *out = jg_policy_load_file(policy_file, err, sizeof err);
        if (!*out) fprintf(stderr, "jobguard %s: --policy-file: %s\n", cmd, err);
        return *out != NULL;
    }
    if (!values_file) return true;
    bool absent;
    *out = jg_policy_load_values(values_file, &absent, err, sizeof err);
    if (!*out && !absent) fprintf(stderr, "jobguard %s: --values: %s\n", cmd, err);
    return *out != NULL || absent; /* no .policy: the defaults, as the chart runs jobguard */
}
