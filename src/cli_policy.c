/* jobguard policy check|show: lint a policy file, print the effective policy (docs/policy.md). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobguard/buf.h"
#include "jobguard/cli.h"
#include "jobguard/policy.h"
#include "jobguard/targets.h"
#include "jobguard/verdict.h"

enum { EXIT_OK = 0, EXIT_INVALID = 2 };

static void usage(FILE *f) {
    fprintf(f, "Usage: jobguard policy check FILE\n"
               "       jobguard policy show [FILE]\n"
               "\n"
               "check: validates a policy file; prints a one-line summary (exit 0) or the first\n"
               "       problem with the file, its position and what is wrong (exit 2). A\n"
               "       controller name that fails the managedBy format gets a note naming the\n"
               "       kinds that can carry it (those whose row has checkFormat false).\n"
               "show:  prints the effective policy as JSON: every default filled in, the\n"
               "       built-in targets included, the mode of every rule. Without FILE, the\n"
               "       policy in effect when no policy file is given.\n"
               "\n"
               "The file's shape, defaults and limits: docs/policy.md.\n");
}

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

static int cmd_check(const char *file) {
    char err[1024];
    struct jg_policy *p = jg_policy_load_file(file, err, sizeof err);
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
    jg_policy_free(p);
    if (!ok) {
        fprintf(stderr, "jobguard policy check: out of memory\n");
        return EXIT_INVALID;
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

int jg_cmd_policy(int argc, char **argv) {
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return EXIT_OK;
    }
    if (argc == 3 && strcmp(argv[1], "check") == 0) return cmd_check(argv[2]);
    if ((argc == 2 || argc == 3) && strcmp(argv[1], "show") == 0)
        return cmd_show(argc == 3 ? argv[2] : NULL);
    fprintf(stderr, "jobguard policy: expected 'check FILE' or 'show [FILE]'\n\n");
    usage(stderr);
    return EXIT_INVALID;
}
