/* jobguard policy check|show: lint a policy file, print the effective policy (docs/policy.md). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jobguard/buf.h"
#include "jobguard/names.h"
#include "jobguard/policy.h"
#include "jobguard/reader.h"
#include "jobguard/targets.h"
#include "jobguard/values.h"
#include "jobguard/verdict.h"

#include "flags.h"

enum { EXIT_OK = 0, EXIT_WARNINGS = 1, EXIT_INVALID = 2 };

enum { F_STRICT, F_VALUES, F_COUNT };

static const struct jg_flag flags[F_COUNT] = {
    [F_STRICT] = {"strict", 0, NULL,
                  "exit 1 when there is a warning (the file is still\n"
                  "valid: jobguard serve loads it)"},
    [F_VALUES] = {"values", 0, "VALUES",
                  "the policy block of a Helm values file for the chart\n"
                  "(charts/jobguard), checked as the chart's install hook\n"
                  "checks the policy file it renders from it"},
};

/* What policy --help, policy check --help and policy show --help print before the options. */
#define ABOUT                                                                                      \
    "Usage: jobguard policy check [--strict] FILE|--values VALUES\n"                               \
    "       jobguard policy show [FILE]\n"                                                         \
    "\n"                                                                                           \
    "check: validates a policy file; prints a one-line summary (exit 0) or the first\n"            \
    "       problem with the file, its position and what is wrong (exit 2). A\n"                   \
    "       controller name that fails the managedBy format gets a note naming the\n"              \
    "       kinds that can carry it (those whose row has checkFormat false). Mistakes\n"           \
    "       that leave the file valid but do not do what they seem to get a\n"                     \
    "       'warning:' line each: a controller entry with no effect because\n"                     \
    "       allowUnlistedControllers is true, a statusWriters user that is a bare\n"               \
    "       name or a malformed service account. FILE is JSON or YAML.\n"                          \
    "show:  prints the effective policy as JSON: every default filled in, the\n"                   \
    "       built-in targets included, the mode of every rule. Without FILE, the\n"                \
    "       policy in effect when no policy file is given.\n"                                      \
    "\n"
#define TAIL "\nThe file's shape, defaults, limits and warnings: docs/policy.md.\n"

static const struct jg_flags check_spec = {
    .cmd = "policy check",
    .head = ABOUT "Options of check:\n",
    .tail = TAIL,
    .flag = flags,
    .n = F_COUNT,
    .indent = 22,
};

static const struct jg_flags show_spec = {
    .cmd = "policy show",
    .head = ABOUT "Options of show:\n",
    .tail = TAIL,
    .flag = flags,
    .n = 0,
    .indent = 22,
};

static json_t *strv_json(const struct jg_strv *v) {
    json_t *a = json_array();
    for (size_t i = 0; a && i < v->n; i++)
        json_array_append_new(a, json_string(v->v[i]));
    return a;
}

/* A nested path's list keys with the default filled in: one per "[*]", "" for by index. */
static json_t *list_keys_json(const struct jg_policy_nested *nd) {
    json_t *a = json_array();
    size_t k = 0;
    for (const char *q = nd->path; a && (q = strstr(q, "[*]")) != NULL; q += 3, k++)
        json_array_append_new(a, json_string(k < nd->list_keys.n ? nd->list_keys.v[k] : ""));
    return a;
}

static json_t *target_json(const struct jg_policy_target *t, const char *source) {
    json_t *nested = json_array();
    for (size_t i = 0; nested && i < t->n_nested; i++)
        json_array_append_new(nested, json_pack("{s:s, s:s, s:o}", "path", t->nested[i].path,
                                                "reservedValue", t->nested[i].reserved_value,
                                                "listKeys", list_keys_json(&t->nested[i])));
    return json_pack("{s:s, s:s, s:o, s:s, s:s, s:s, s:s, s:o, s:b, s:b}", "source", source,
                     "group", t->group, "versions", strv_json(&t->versions), "kind", t->kind,
                     "resource", t->resource, "managedByPath", t->managed_by_path, "reservedValue",
                     t->reserved_value, "nestedPaths", nested, "checkFormat", t->check_format,
                     "delegationSupported", t->delegation_supported);
}

static json_t *effective_json(const struct jg_policy *p) {
    json_t *root = json_object(), *targets = json_array(), *controllers = json_array(),
           *modes = json_object();
    for (size_t i = 0; i < jg_builtin_target_count; i++)
        if (!jg_target_builtin_replaced(p, i))
            json_array_append_new(targets, target_json(&jg_builtin_targets[i], "built-in"));
    for (size_t i = 0; p && i < p->n_targets; i++) {
        /* a file row whose group and kind name a built-in one replaces it */
        bool replaces = jg_target_find(NULL, p->targets[i].group, p->targets[i].kind) != NULL;
        json_array_append_new(
            targets,
            target_json(&p->targets[i], replaces ? "policy (replaces built-in)" : "policy"));
    }
    for (size_t i = 0; p && i < p->n_controllers; i++) {
        const struct jg_policy_controller *k = &p->controllers[i];
        json_t *c =
            json_pack("{s:s, s:o}", "name", k->name, "namespaces", strv_json(&k->namespaces));
        if (c && k->has_status_writers)
            json_object_set_new(c, "statusWriters",
                                json_pack("{s:o, s:o}", "users", strv_json(&k->writer_users),
                                          "groups", strv_json(&k->writer_groups)));
        json_array_append_new(controllers, c);
    }
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_config_modes_unset(&cfg);
    jg_policy_apply(p, &cfg);
    for (size_t r = 0; r < JG_RULE_COUNT; r++)
        json_object_set_new(modes, jg_rules[r].name,
                            json_string(jg_mode_name((enum jg_mode)cfg.mode[r])));
    json_t *exempt = p ? strv_json(&p->status_writer_exempt) : json_pack("[s]", "system:masters");
    json_object_set_new(root, "source", json_string(p ? "file" : "defaults (no policy file)"));
    json_object_set_new(root, "sha256", json_string(p ? p->sha256 : ""));
    json_object_set_new(root, "targets", targets);
    json_object_set_new(root, "controllers", controllers);
    json_object_set_new(root, "allowUnlistedControllers",
                        json_boolean(p ? p->allow_unlisted_controllers : true));
    json_object_set_new(root, "statusWriterExemptGroups", exempt);
    json_object_set_new(root, "modes", modes);
    return root;
}

/* "Kind.group" (or "Kind" for the core group) into b after a ", " if b is not empty, unless it is
 * the last one written (MPIJob has two built-in rows). */
static void put_kind(jg_buf *b, const struct jg_policy_target *t, char *last, size_t cap) {
    char label[320];
    snprintf(label, sizeof label, "%s%s%s", t->kind, t->group[0] ? "." : "", t->group);
    if (strcmp(label, last) == 0) return;
    snprintf(last, cap, "%s", label);
    jg_buf_printf(b, "%s%s", b->len ? ", " : "", label);
}

/* A note per controller whose name fails the managedBy format: the policy accepts it because some
 * row does not check the format (docs/policy.md), but only those rows' kinds can carry it. */
static bool free_form_notes(const struct jg_policy *p) {
    bool ok = true;
    for (size_t i = 0; i < p->n_controllers; i++) {
        const struct jg_policy_controller *k = &p->controllers[i];
        struct jg_errors e;
        jg_errors_init(&e);
        jg_check_managed_by((jg_str){k->name, k->name_len}, "name", &e);
        bool fails = e.n > 0 || e.oom;
        jg_errors_free(&e);
        if (!fails) continue;
        jg_buf can = JG_BUF_INIT, never = JG_BUF_INIT;
        char last_can[320] = "", last_never[320] = "";
        for (size_t r = 0; r < jg_builtin_target_count; r++) {
            const struct jg_policy_target *t = &jg_builtin_targets[r];
            if (jg_target_builtin_replaced(p, r)) continue;
            if (t->check_format)
                put_kind(&never, t, last_never, sizeof last_never);
            else
                put_kind(&can, t, last_can, sizeof last_can);
        }
        for (size_t r = 0; r < p->n_targets; r++) {
            const struct jg_policy_target *t = &p->targets[r];
            if (t->check_format)
                put_kind(&never, t, last_never, sizeof last_never);
            else
                put_kind(&can, t, last_can, sizeof last_can);
        }
        ok = ok && !can.oom && !never.oom;
        printf("note: controllers[%zu].name \"%s\" is not a valid managedBy value: only %s can "
               "carry it (checkFormat false); the format check refuses it on %s\n",
               i, k->name, can.data ? can.data : "", never.data ? never.data : "no kind");
        jg_buf_free(&can);
        jg_buf_free(&never);
    }
    return ok;
}

/* A DNS label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 bytes. */
static bool is_label(const char *s, size_t n) {
    return n <= 63 && memchr(s, '.', n) == NULL && jg_is_dns1123_subdomain((jg_str){s, n});
}

/* s %q-quoted, so that a control byte in a name cannot break the line. */
static void print_quoted(const char *s) {
    jg_buf b = JG_BUF_INIT;
    jg_buf_go_quote(&b, s, strlen(s));
    fputs(b.data && !b.oom ? b.data : "\"?\"", stdout);
    jg_buf_free(&b);
}

/* Whether a statusWriters user name is a bare DNS label (a service account authenticates as
 * system:serviceaccount:NS:NAME, never as NAME), or a system:serviceaccount: name that is not
 * NS:NAME (the API server authenticates nobody as that): docs/policy.md "Lint warnings". */
static bool bare_user(const char *u) {
    return is_label(u, strlen(u));
}
static bool malformed_service_account(const char *u) {
    static const char sa[] = "system:serviceaccount:";
    if (strncmp(u, sa, sizeof sa - 1) != 0) return false;
    const char *ns = u + sizeof sa - 1, *colon = strchr(ns, ':');
    const char *name = colon ? colon + 1 : "";
    return !colon || !is_label(ns, (size_t)(colon - ns)) || strlen(name) > 253 ||
           !jg_is_dns1123_subdomain((jg_str){name, strlen(name)});
}

/* The lint warnings of docs/policy.md ("Lint warnings"), one 'warning:' line each on stdout.
 * Returns how many. */
static size_t lint_warnings(const struct jg_policy *p) {
    size_t n = 0;
    for (size_t i = 0; i < p->n_controllers; i++) {
        const struct jg_policy_controller *k = &p->controllers[i];
        if (p->allow_unlisted_controllers && !k->has_status_writers) {
            printf("warning: controllers[%zu] ", i);
            print_quoted(k->name);
            printf(" has no effect: allowUnlistedControllers is true, so the controllers list is "
                   "not an allow-list and every managedBy value is allowed; set "
                   "\"allowUnlistedControllers\": false to allow only the listed controllers (and "
                   "each kind's own value)\n");
            n++;
        }
        for (size_t u = 0; u < k->writer_users.n; u++) {
            const char *user = k->writer_users.v[u];
            bool bare = bare_user(user);
            if (!bare && !malformed_service_account(user)) continue;
            printf("warning: controllers[%zu].statusWriters.users[%zu] ", i, u);
            print_quoted(user);
            if (bare)
                printf(" is a bare name: it matches only a user authenticated as exactly that "
                       "name; a service account authenticates as "
                       "system:serviceaccount:<namespace>:%s\n",
                       user);
            else
                printf(" can never match: a service account's user name is "
                       "system:serviceaccount:<namespace>:<name>\n");
            n++;
        }
    }
    return n;
}

/* The policy a Helm values file gives the chart: jg_policy_load_values (src/policy/values.c), whose
 * digest is the chart's (`toJson .Values.policy`). */
struct jg_policy *jg_cli_load_values(const char *file, bool *absent, char *err, size_t errlen) {
    return jg_policy_load_values(file, absent, err, errlen);
}

static int cmd_check(const char *file, bool strict, bool values) {
    char err[1024];
    bool absent = false;
    struct jg_policy *p = values ? jg_policy_load_values(file, &absent, err, sizeof err)
                                 : jg_policy_load_file(file, err, sizeof err);
    if (absent) {
        printf("%s: no policy block (.policy is absent or empty): the chart installs no policy "
               "file, and jobguard runs with its built-in defaults (every rule in deny mode)\n",
               file);
        return EXIT_OK;
    }
    if (!p) {
        fprintf(stderr, "jobguard policy check: %s\n", err);
        return EXIT_INVALID;
    }
    size_t replacing = 0, overrides = 0;
    for (size_t t = 0; t < p->n_targets; t++) /* a row for MPIJob replaces two: counted once */
        replacing += jg_target_find(NULL, p->targets[t].group, p->targets[t].kind) != NULL;
    for (size_t r = 0; r < JG_RULE_COUNT; r++)
        overrides += p->mode[r] != JG_MODE_DENY;
    printf("%s: valid: %zu target row%s (%zu replacing a built-in), %zu controller%s, "
           "allowUnlistedControllers %s, %zu rule%s not in deny mode, sha256 %s\n",
           file, p->n_targets, p->n_targets == 1 ? "" : "s", replacing, p->n_controllers,
           p->n_controllers == 1 ? "" : "s", p->allow_unlisted_controllers ? "true" : "false",
           overrides, overrides == 1 ? "" : "s", p->sha256);
    bool ok = free_form_notes(p);
    size_t warnings = lint_warnings(p);
    jg_policy_free(p);
    if (!ok) {
        fprintf(stderr, "jobguard policy check: out of memory\n");
        return EXIT_INVALID;
    }
    if (strict && warnings) {
        fprintf(stderr, "jobguard policy check: --strict: %zu warning%s\n", warnings,
                warnings == 1 ? "" : "s");
        return EXIT_WARNINGS;
    }
    return EXIT_OK;
}

static int cmd_show(const char *file) {
    struct jg_policy *p = NULL;
    if (file) {
        char err[1024];
        if (!(p = jg_policy_load_file(file, err, sizeof err))) {
            fprintf(stderr, "jobguard policy show: %s\n", err);
            return EXIT_INVALID;
        }
    }
    json_t *j = effective_json(p);
    char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    jg_policy_free(p);
    if (!s) {
        fprintf(stderr, "jobguard policy show: out of memory\n");
        return EXIT_INVALID;
    }
    puts(s);
    free(s);
    return EXIT_OK;
}

/* The operands of `policy check` or `policy show` (argv[0] is the subcommand): at most one FILE,
 * or --values VALUES for check. 0 with *file set (NULL: none), 1 after --help, 2 on an error. */
static int subcommand_args(const struct jg_flags *spec, int argc, char **argv, const char **file,
                           bool *strict, bool *values) {
    struct jg_args it;
    jg_args_init(&it, spec, argc, argv);
    const char *v;
    for (int f; (f = jg_args_next(&it, &v)) != JG_ARGS_END;) {
        if (f == JG_ARGS_STOP) return it.status == 0 ? 1 : 2;
        if (f == F_STRICT) {
            *strict = true;
            continue;
        }
        if (*file) {
            fprintf(stderr, "jobguard %s: give one %s\n", spec->cmd,
                    spec == &check_spec ? "FILE or --values VALUES" : "FILE");
            return 2;
        }
        *file = v;
        *values = f == F_VALUES;
    }
    return 0;
}

int jg_cmd_policy(int argc, char **argv) {
    const char *file = NULL;
    bool strict = false, values = false;
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        jg_flags_usage(&check_spec, stdout);
        return EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "check") == 0) {
        int st = subcommand_args(&check_spec, argc - 1, argv + 1, &file, &strict, &values);
        if (st == 0 && file) return cmd_check(file, strict, values);
        if (st) return st == 1 ? EXIT_OK : EXIT_INVALID;
    } else if (argc >= 2 && strcmp(argv[1], "show") == 0) {
        int st = subcommand_args(&show_spec, argc - 1, argv + 1, &file, &strict, &values);
        if (st == 0) return cmd_show(file);
        return st == 1 ? EXIT_OK : EXIT_INVALID;
    }
    fprintf(
        stderr,
        "jobguard policy: expected 'check [--strict] FILE|--values VALUES' or 'show [FILE]'\n\n");
    jg_flags_usage(&check_spec, stderr);
    return EXIT_INVALID;
}
