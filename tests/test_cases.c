/* Data-driven suite: tests/cases/<name>/{review.json,expected.json[,args][,policy.json]}. Each
 * case runs the review through jg_admit (the path the CLI and the server share), under the case's
 * policy file when it has one, and compares the response with expected.json as JSON values.
 * Adding a case means adding a folder. */
#include "jobguard/admit.h"
#include "jobguard/decode.h"
#include "jobguard/policy.h"

#include <check.h>

#include "run_suite.h"
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *cases_dir;
static char **names;
static int ncases;

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void discover(void) {
    DIR *d = opendir(cases_dir);
    if (!d) {
        perror(cases_dir);
        exit(2);
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[8192];
        snprintf(p, sizeof p, "%.4000s/%.256s/review.json", cases_dir, e->d_name);
        FILE *f = fopen(p, "r");
        if (!f) continue;
        fclose(f);
        names = realloc(names, sizeof *names * (size_t)(ncases + 1));
        names[ncases++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)ncases, sizeof *names, cmp_names);
}

/* args: "--parity 1.36" (or 1.37), "--disable-rule ID" and/or "--mode ID=MODE" tokens. */
static void read_args(const char *dir, struct jg_config *cfg) {
    char p[4200];
    snprintf(p, sizeof p, "%.4000s/args", dir);
    size_t len;
    char *a = slurp(p, &len);
    if (!a) return;
    char *save = NULL;
    for (char *tok = strtok_r(a, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
        if (strcmp(tok, "--parity") == 0) {
            char *v = strtok_r(NULL, " \t\n", &save);
            ck_assert_ptr_nonnull(v);
            ck_assert_msg(jg_parity_parse(v, &cfg->parity), "unknown parity %s in %s", v, p);
        } else if (strcmp(tok, "--disable-rule") == 0) {
            char *v = strtok_r(NULL, " \t\n", &save);
            ck_assert_ptr_nonnull(v);
            const struct jg_rule *r = jg_rule_find(v);
            ck_assert_msg(r != NULL, "unknown rule %s in %s", v, p);
            cfg->disabled |= UINT64_C(1) << r->id;
        } else if (strcmp(tok, "--mode") == 0) {
            char *v = strtok_r(NULL, " \t\n", &save), err[300];
            ck_assert_ptr_nonnull(v);
            ck_assert_msg(jg_mode_set(v, strlen(v), cfg->mode, err, sizeof err), "%s in %s", err,
                          p);
        } else {
            ck_abort_msg("unknown token %s in %s", tok, p);
        }
    }
    free(a);
}

/* Each case at every decoder level this CPU and build run, each level once: the automatic choice
 * reads a body with the byte scanner (under 6 KiB) or the CPU's best level, both among these, so
 * forcing each level covers it; levels the CPU lacks fall back to one already run and are left out
 * (docs/decoder.md). */
static const char *levels[4];
static int nlevels;

static void find_levels(void) {
    static const char *const all[] = {"scalar", "portable", "sse2", "avx2"};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        if (!jg_scanner_force(all[i])) {
            fprintf(stderr, "the decoder does not know its level %s\n", all[i]);
            exit(1);
        }
        const char *got = jg_scanner_level_name();
        bool seen = false;
        for (int j = 0; j < nlevels; j++)
            seen = seen || strcmp(levels[j], got) == 0;
        if (!seen) levels[nlevels++] = got;
    }
    jg_scanner_force(NULL);
}

START_TEST(test_case) {
    const char *name = names[_i / nlevels], *level = levels[_i % nlevels];
    ck_assert(jg_scanner_force(level));
    char dir[4400], p[4600];
    snprintf(dir, sizeof dir, "%.4000s/%.256s", cases_dir, name);
    size_t rlen, elen;
    snprintf(p, sizeof p, "%.4400s/review.json", dir);
    char *review = slurp(p, &rlen);
    ck_assert_ptr_nonnull(review);
    snprintf(p, sizeof p, "%.4400s/expected.json", dir);
    char *expected_text = slurp(p, &elen);
    ck_assert_msg(expected_text != NULL, "%s: expected.json missing", name);
    json_error_t je;
    json_t *expected = json_loadb(expected_text, elen, 0, &je);
    ck_assert_msg(expected != NULL, "%s: expected.json: %s", name, je.text);

    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_config_modes_unset(&cfg); /* as the CLI: --mode, then the file */
    read_args(dir, &cfg);
    struct jg_policy *policy = NULL;
    snprintf(p, sizeof p, "%.4400s/policy.json", dir);
    if (access(p, F_OK) == 0) {
        char why[1024];
        policy = jg_policy_load_file(p, why, sizeof why);
        ck_assert_msg(policy != NULL, "%s: %s", name, why);
    }
    jg_policy_apply(policy, &cfg);
    jg_buf out = JG_BUF_INIT;
    jg_admit(review, rlen, &cfg, &out, NULL);
    jg_policy_free(policy);
    json_t *got = json_loadb(out.data, out.len, 0, &je);
    ck_assert_msg(got != NULL, "%s: response is not JSON (%s): %s", name, je.text, out.data);
    if (!json_equal(got, expected)) {
        char *g = json_dumps(got, JSON_INDENT(1) | JSON_SORT_KEYS);
        char *x = json_dumps(expected, JSON_INDENT(1) | JSON_SORT_KEYS);
        ck_abort_msg("%s (%s level): response differs\n--- expected\n%s\n--- got\n%s", name, level,
                     x, g);
    }
    json_decref(got);
    json_decref(expected);
    jg_buf_free(&out);
    free(review);
    free(expected_text);
}
END_TEST

int main(int argc, char **argv) {
    cases_dir = argc > 1 ? argv[1] : "tests/cases";
    json_object_seed(42);
    discover();
    if (ncases == 0) {
        fprintf(stderr, "no cases found under %s\n", cases_dir);
        return 1;
    }
    Suite *s = suite_create("cases");
    TCase *tc = tcase_create("cases");
    find_levels();
    printf("cases: %d cases at the levels", ncases);
    for (int j = 0; j < nlevels; j++)
        printf(" %s", levels[j]);
    printf("\n");
    tcase_add_loop_test(tc, test_case, 0, ncases * nlevels);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
