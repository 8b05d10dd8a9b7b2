/* jobguard rules: prints the rule table (the same table the engine runs). */
#include "jobguard/cli.h"
#include "jobguard/rules.h"

#include <stdio.h>
#include <string.h>

int jg_cmd_rules(int argc, char **argv) {
    bool markdown = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--markdown") == 0) {
            markdown = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("Usage: jobguard rules [--markdown]\n\n"
                   "Prints every rule in evaluation order: its stable ID (used in logs, metrics,\n"
                   "--disable-rule and --mode), the field path of its errors, when it is active, and\n"
                   "its message (Kubernetes v1.35 wording). --markdown prints a Markdown table.\n");
            return 0;
        } else {
            fprintf(stderr, "jobguard rules: unknown option %s\n", argv[i]);
            return 2;
        }
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
    return 0;
}
