/* jobguard rules: prints the rule table (the same table the engine runs). */
#include "cli.h"
#include "jobguard/rules.h"
#include "jobguard/targets.h"

#include "flags.h"

#include <stdio.h>
#include <string.h>

enum { F_MARKDOWN, F_COUNT };

static const struct jg_flag flags[F_COUNT] = {
    [F_MARKDOWN] = {"markdown", 0, NULL, "print the rules as a Markdown table"},
};

static const struct jg_flags spec = {
    .cmd = "rules",
    .head = "Usage: jobguard rules [--markdown]\n\n"
            "Prints every rule in evaluation order: its stable ID (used in logs, metrics,\n"
            "--disable-rule, --mode and the policy file's modes), the field path of its\n"
            "errors, when it is active, and its message (Kubernetes v1.35 wording), then\n"
            "the built-in targets.\n"
            "\n"
            "Options:\n",
    .flag = flags,
    .n = F_COUNT,
    .no_operands = true,
    .indent = 17,
};

int jg_cmd_rules(int argc, char **argv) {
    bool markdown = false;
    struct jg_args it;
    jg_args_init(&it, &spec, argc, argv);
    const char *v;
    for (int f; (f = jg_args_next(&it, &v)) != JG_ARGS_END;) {
        if (f == JG_ARGS_STOP) return it.status;
        markdown = true; /* F_MARKDOWN */
    }
    if (markdown) {
        printf("| # | ID | field | active when | message | spec |\n|---|---|---|---|---|---|\n");
        for (size_t i = 0; i < JG_RULE_COUNT; i++) {
            const struct jg_rule *r = &jg_rules[i];
            printf("| %zu | `%s` | `%s` | %s | `%s` | %s |\n", i + 1, r->name, r->field, r->when,
                   r->message, r->section);
        }
        return 0;
    }
    for (size_t i = 0; i < JG_RULE_COUNT; i++) {
        const struct jg_rule *r = &jg_rules[i];
        printf("%-46s %s\n  field:   %s\n  when:    %s\n  message: %s\n\n", r->name, r->section,
               r->field, r->when, r->message);
    }
    /* a policy file's row with the same group and kind replaces one (docs/policy.md) */
    printf("Targets (built-in; 'jobguard policy show FILE' prints them with a policy's rows;\n"
           "docs/targets.md). batch/v1 Job and CronJob get the API server's own rules; every\n"
           "other row gets the CRD checks (docs/rules.md §12):\n");
    for (size_t i = 0; i < jg_builtin_target_count; i++) {
        const struct jg_policy_target *t = &jg_builtin_targets[i];
        printf("  %s/%s %s (%s)\n    managedBy:      %s\n    reserved value: %s\n", t->group,
               t->versions.v[0], t->kind, t->resource, t->managed_by_path, t->reserved_value);
        for (size_t vi = 1; vi < t->versions.n; vi++)
            printf("    also served as: %s/%s\n", t->group, t->versions.v[vi]);
        for (size_t k = 0; k < t->n_nested; k++) {
            const struct jg_policy_nested *nd = &t->nested[k];
            printf("    nested copy:    %s (%s)\n", nd->path,
                   nd->reserved_value[0] ? nd->reserved_value : "must be absent");
            /* each keyed list: its path up to "[*]", and the key */
            const char *q = nd->path;
            for (size_t j = 0; (q = strstr(q, "[*]")) != NULL; j++) {
                q += 3;
                if (j < nd->list_keys.n && nd->list_keys.v[j][0])
                    printf("    list key:       %.*s by %s\n", (int)(q - nd->path), nd->path,
                           nd->list_keys.v[j]);
            }
        }
        if (!t->check_format) printf("    format check:   off (free-form values)\n");
        if (!t->delegation_supported)
            printf("    delegation:     unsupported (its controller ignores managedBy)\n");
    }
    return 0;
}
