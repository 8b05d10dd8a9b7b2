/* Chaos: fail the Nth allocation, for every N along a whole review, until a run completes
 * without reaching N (jansson's test_chaos.c, applied to decode -> rules -> encode).
 *
 * Every allocation of the engine, jansson's included, goes through jg_alloc_set's hooks. Ours
 * put a header in front of each block that links it into a list of live blocks, so a leak names
 * the allocation (its sequence number and size) and a foreign or double free is caught.
 *
 * For each N, two modes: only the Nth allocation fails ("single", the engine must recover or
 * give up cleanly and carry on), or the Nth and all later ones fail ("persistent", even the 500
 * cannot be built). Each run asserts: jg_admit returns; the verdict is the normal one with the
 * normal bytes, or JG_VERDICT_ERROR with code 500 and either the canned 500 response or
 * response.oom set; once the response and the outcome are freed, no block is live.
 *
 * usage: test_chaos CASES_DIR   (tests/cases: the reviews come from the data-driven corpus) */
#include "jobguard/admit.h"
#include "jobguard/alloc.h"
#include "jobguard/policy.h"

#include <check.h>

#include "run_suite.h"
#include <jansson.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- counting, failing, tracking allocator ---- */

#define MAGIC_LIVE 0x6a676c697665UL /* "jglive" */
#define MAGIC_DEAD 0x6a6764656164UL /* "jgdead" */

struct block {
    unsigned long magic;
    struct block *prev, *next;
    size_t size;
    long seq; /* which allocation made it: the N that would fail it */
    alignas(max_align_t) char data[];
};

static struct {
    long count;   /* allocations (malloc and realloc) since chaos_reset */
    long fail_at; /* -1: none */
    bool persistent;
    bool hit; /* an allocation was failed */
    struct block head;
    long live;
    long bad_frees;
} chaos;

static void chaos_reset(long fail_at, bool persistent) {
    chaos.count = 0;
    chaos.fail_at = fail_at;
    chaos.persistent = persistent;
    chaos.hit = false;
}

static bool should_fail(void) {
    long n = chaos.count++;
    bool fail =
        chaos.fail_at >= 0 && (n == chaos.fail_at || (chaos.persistent && n > chaos.fail_at));
    if (fail) chaos.hit = true;
    return fail;
}

static void link_block(struct block *b) {
    b->magic = MAGIC_LIVE;
    b->prev = &chaos.head;
    b->next = chaos.head.next;
    chaos.head.next->prev = b;
    chaos.head.next = b;
    chaos.live++;
}

static void unlink_block(struct block *b) {
    b->prev->next = b->next;
    b->next->prev = b->prev;
    b->magic = MAGIC_DEAD;
    chaos.live--;
}

static struct block *block_of(void *p) {
    struct block *b = (struct block *)((char *)p - offsetof(struct block, data));
    if (b->magic != MAGIC_LIVE) {
        chaos.bad_frees++;
        return NULL;
    }
    return b;
}

static void *chaos_malloc(size_t n) {
    long seq = chaos.count;
    if (should_fail()) return NULL;
    struct block *b = malloc(sizeof *b + n);
    if (!b) return NULL;
    b->size = n;
    b->seq = seq;
    link_block(b);
    return b->data;
}

static void *chaos_realloc(void *p, size_t n) {
    if (!p) return chaos_malloc(n);
    long seq = chaos.count;
    struct block *old = block_of(p);
    if (!old) return NULL;
    if (should_fail()) return NULL; /* p stays valid and live, as with realloc */
    unlink_block(old);
    struct block *b = realloc(old, sizeof *b + n);
    if (!b) {
        link_block(old);
        return NULL;
    }
    b->size = n;
    b->seq = seq;
    link_block(b);
    return b->data;
}

static void chaos_free(void *p) {
    if (!p) return;
    struct block *b = block_of(p);
    if (!b) return;
    unlink_block(b);
    free(b);
}

static void chaos_install(void) {
    chaos.head.next = chaos.head.prev = &chaos.head;
    chaos.live = chaos.bad_frees = 0;
    chaos_reset(-1, false);
    jg_alloc_set(chaos_malloc, chaos_realloc, chaos_free);
}

static void chaos_uninstall(void) {
    jg_alloc_set(NULL, NULL, NULL);
}

/* Fails the test naming every live block. */
static void assert_no_leak(const char *what, long n, const char *mode) {
    if (chaos.live != 0) {
        char list[512] = "";
        size_t off = 0;
        for (struct block *b = chaos.head.next; b != &chaos.head && off < sizeof list - 40;
             b = b->next)
            off += (size_t)snprintf(list + off, sizeof list - off, " #%ld(%zu B)", b->seq, b->size);
        ck_abort_msg("%s: failing allocation %ld (%s): %ld block(s) leaked:%s", what, n, mode,
                     chaos.live, list);
    }
    ck_assert_msg(chaos.bad_frees == 0, "%s: failing allocation %ld (%s): %ld foreign/double frees",
                  what, n, mode, chaos.bad_frees);
}

/* ---- inputs ---- */

static const char *cases_dir = "tests/cases";

/* A case's review, read with libc before the hooks are installed; freed with libc after. */
static char *read_case(const char *name, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/review.json", cases_dir, name);
    char *buf = slurp(path, len);
    ck_assert_msg(buf != NULL, "cannot read %s", path);
    return buf;
}

/* Replaces the first `from` with `to` (the 400 reviews are small edits of good ones). */
static char *edit(char *s, size_t *len, const char *from, const char *to) {
    char *at = strstr(s, from);
    ck_assert_msg(at != NULL, "edit: %s not found", from);
    size_t fl = strlen(from), tl = strlen(to), pre = (size_t)(at - s);
    char *out = malloc(*len - fl + tl + 1);
    ck_assert_ptr_nonnull(out);
    memcpy(out, s, pre);
    memcpy(out + pre, to, tl);
    memcpy(out + pre + tl, at + fl, *len - pre - fl + 1);
    *len = *len - fl + tl;
    free(s);
    return out;
}

enum edit_kind { AS_IS, WRONG_TYPE, TRUNCATED };

struct review_case {
    const char *name; /* tests/cases folder */
    enum edit_kind edit;
    enum jg_verdict expect;
    const char *why;
};

static const struct review_case reviews[] = {
    {"x-create-indexed-realistic", AS_IS, JG_VERDICT_ALLOWED, "CREATE allowed"},
    {"r-status-update-realistic", AS_IS, JG_VERDICT_ALLOWED, "16.7 KB status update, allowed"},
    {"x-status-many-rules-order", AS_IS, JG_VERDICT_DENIED, "status update, 10 causes"},
    {"x-status-uncounted-interleave", AS_IS, JG_VERDICT_DENIED, "uncounted lists, 5 causes"},
    {"e53b-finished-uncounted-empty", AS_IS, JG_VERDICT_ALLOWED, "uncounted lists, allowed"},
    {"e26-update-json-escaping", AS_IS, JG_VERDICT_DENIED, "escaped strings"},
    {"x-cronjob-update-invalid", AS_IS, JG_VERDICT_DENIED, "CronJob UPDATE"},
    {"e01-create-managedby-absent", WRONG_TYPE, JG_VERDICT_BAD_REQUEST, "400: wrong type"},
    {"r-create-job", TRUNCATED, JG_VERDICT_BAD_REQUEST, "400: truncated JSON"},
};
#define N_REVIEWS ((int)(sizeof reviews / sizeof reviews[0]))

static char *load_review(const struct review_case *c, size_t *len) {
    char *s = read_case(c->name, len);
    if (c->edit == WRONG_TYPE) s = edit(s, len, "\"completions\": 5", "\"completions\": \"5\"");
    if (c->edit == TRUNCATED) *len = *len * 3 / 5;
    return s;
}

/* ---- the walk ---- */

struct normal {
    enum jg_verdict verdict;
    int code;
    char *response; /* libc copy */
    size_t len;
    long allocations;
};

/* The configuration every run uses: the default, or modes and a policy (test_modes_chaos). */
static struct jg_config run_cfg = JG_CONFIG_DEFAULT;

/* One run with the current chaos settings; checks the outcome against the normal one. */
typedef enum jg_verdict (*run_fn)(const void *input, const struct jg_config *cfg, jg_buf *response,
                                  struct jg_outcome *o);

static void check_run(const char *what, run_fn run, const void *input, const struct normal *nm,
                      long n, bool persistent) {
    const char *mode = persistent ? "persistent" : "single";
    struct jg_config cfg = run_cfg;
    jg_buf response = JG_BUF_INIT;
    struct jg_outcome o;
    jg_outcome_init(&o);
    enum jg_verdict v = run(input, &cfg, &response, &o);
    ck_assert_msg(v == o.verdict, "%s: N=%ld (%s): returned %d, outcome says %d", what, n, mode, v,
                  o.verdict);
    if (v == nm->verdict && !response.oom) {
        ck_assert_msg(o.code == nm->code, "%s: N=%ld (%s): code %d, normally %d", what, n, mode,
                      o.code, nm->code);
        ck_assert_msg(response.len == nm->len && memcmp(response.data, nm->response, nm->len) == 0,
                      "%s: N=%ld (%s): verdict %d as normal but different bytes:\n%.*s", what, n,
                      mode, v, (int)response.len, response.data ? response.data : "");
    } else {
        ck_assert_msg(v == JG_VERDICT_ERROR,
                      "%s: N=%ld (%s): verdict %d, expected %d or ERROR; response:\n%.*s", what, n,
                      mode, v, nm->verdict, (int)response.len, response.data ? response.data : "");
        ck_assert_msg(o.code == 500, "%s: N=%ld (%s): ERROR with code %d", what, n, mode, o.code);
        ck_assert_msg(response.oom || (response.len == strlen(jg_oom_response) &&
                                       memcmp(response.data, jg_oom_response, response.len) == 0),
                      "%s: N=%ld (%s): ERROR without the canned 500 nor response.oom:\n%.*s", what,
                      n, mode, (int)response.len, response.data ? response.data : "");
    }
    jg_buf_free(&response);
    jg_outcome_free(&o);
    assert_no_leak(what, n, mode);
}

/* Runs once normally, then fails allocation N for N = 0, 1, ... until a run does not reach N.
 * Returns the number of allocation points walked. */
static long walk(const char *what, run_fn run, const void *input, enum jg_verdict expect) {
    struct normal nm = {0};
    struct jg_config cfg = run_cfg;
    jg_buf response = JG_BUF_INIT;
    struct jg_outcome o;
    jg_outcome_init(&o);
    chaos_reset(-1, false);
    nm.verdict = run(input, &cfg, &response, &o);
    nm.allocations = chaos.count;
    nm.code = o.code;
    ck_assert_msg(nm.verdict == expect, "%s: normal verdict %d, expected %d", what, nm.verdict,
                  expect);
    ck_assert_msg(!response.oom && response.data, "%s: no normal response", what);
    nm.len = response.len;
    nm.response = malloc(nm.len + 1);
    ck_assert_ptr_nonnull(nm.response);
    memcpy(nm.response, response.data, nm.len + 1);
    jg_buf_free(&response);
    jg_outcome_free(&o);
    assert_no_leak(what, -1, "none");

    long points[2] = {0, 0};
    for (int mode = 0; mode < 2; mode++) {
        for (long n = 0;; n++) {
            chaos_reset(n, mode == 1);
            check_run(what, run, input, &nm, n, mode == 1);
            if (!chaos.hit) {
                points[mode] = n;
                break;
            }
            ck_assert_msg(n <= nm.allocations, "%s: more failing runs than allocations", what);
        }
        ck_assert_msg(points[mode] == nm.allocations,
                      "%s: %s walk stopped at %ld, a normal run makes %ld allocations", what,
                      mode ? "persistent" : "single", points[mode], nm.allocations);
    }
    chaos_reset(-1, false);
    free(nm.response);
    printf("chaos: %-64s %4ld allocation points, each failed alone and from there on\n", what,
           nm.allocations);
    return nm.allocations;
}

/* ---- jg_admit over whole reviews ---- */

struct body {
    const char *p;
    size_t n;
};

static enum jg_verdict run_admit(const void *input, const struct jg_config *cfg, jg_buf *response,
                                 struct jg_outcome *o) {
    const struct body *b = input;
    return jg_admit(b->p, b->n, cfg, response, o);
}

/* Walks one review through jg_admit under run_cfg. */
static void walk_review(const struct review_case *c) {
    size_t len;
    char *s = load_review(c, &len);
    chaos_install();
    struct body b = {s, len};
    char what[128];
    snprintf(what, sizeof what, "%s (%s)", c->name, c->why);
    long points = walk(what, run_admit, &b, c->expect);
    ck_assert_int_gt(points, 0);
    chaos_uninstall();
    free(s);
}

START_TEST(test_admit_chaos) {
    walk_review(&reviews[_i]);
}
END_TEST

/* ---- jg_decode_objects + jg_admit_review (what `jobguard check --old/--new` does) ---- */

struct objects {
    char *old_json, *new_json; /* libc */
    size_t old_len, new_len;
    const char *sub_resource;
};

static enum jg_verdict run_objects(const void *input, const struct jg_config *cfg, jg_buf *response,
                                   struct jg_outcome *o) {
    const struct objects *in = input;
    jg_review r;
    jg_decode_error err;
    enum jg_decode_status st = jg_decode_objects(in->old_json, in->old_len, in->new_json,
                                                 in->new_len, in->sub_resource, NULL, &r, &err);
    enum jg_verdict v;
    if (st == JG_DECODE_OK) {
        v = jg_admit_review(&r, cfg, response, o);
    } else {
        /* A refusal of objects that decode normally can only be the allocation failure. */
        ck_assert_msg(st == JG_DECODE_NO_MEMORY, "decode_objects: status %d under chaos: %s", st,
                      err.message);
        jg_buf_reset(response);
        jg_buf_put(response, jg_oom_response, strlen(jg_oom_response));
        o->verdict = v = JG_VERDICT_ERROR;
        o->code = 500;
    }
    jg_review_free(&r);
    return v;
}

struct objects_case {
    const char *name;
    bool update; /* else CREATE from the new object alone */
    const char *sub_resource;
    enum jg_verdict expect;
};

static const struct objects_case objects_cases[] = {
    {"x-status-uncounted-interleave", true, "status", JG_VERDICT_DENIED},
    {"r-status-update-realistic", true, "status", JG_VERDICT_ALLOWED},
    {"e26-update-json-escaping", true, "", JG_VERDICT_DENIED},
    {"r-create-job-bad-managedby", false, NULL, JG_VERDICT_DENIED},
};
#define N_OBJECTS ((int)(sizeof objects_cases / sizeof objects_cases[0]))

/* request.object / request.oldObject of a case, as compact JSON (libc memory). */
static char *extract(const char *review, size_t len, const char *member, size_t *out_len) {
    json_error_t je;
    json_t *root = json_loadb(review, len, 0, &je);
    ck_assert_msg(root != NULL, "review does not parse: %s", je.text);
    json_t *obj = json_object_get(json_object_get(root, "request"), member);
    ck_assert_msg(json_is_object(obj), "review has no request.%s", member);
    char *s = json_dumps(obj, JSON_COMPACT);
    ck_assert_ptr_nonnull(s);
    *out_len = strlen(s);
    json_decref(root);
    return s;
}

START_TEST(test_objects_chaos) {
    const struct objects_case *c = &objects_cases[_i];
    size_t len;
    char *review = read_case(c->name, &len);
    struct objects in = {NULL, NULL, 0, 0, c->sub_resource};
    in.new_json = extract(review, len, "object", &in.new_len);
    if (c->update) in.old_json = extract(review, len, "oldObject", &in.old_len);
    chaos_install();
    char what[128];
    const char *sub = c->sub_resource ? c->sub_resource : "";
    snprintf(what, sizeof what, "objects %s (%s%s%s)", c->name, c->update ? "UPDATE" : "CREATE",
             *sub ? " " : "", sub);
    long points = walk(what, run_objects, &in, c->expect);
    ck_assert_int_gt(points, 0);
    chaos_uninstall();
    free(in.new_json);
    free(in.old_json);
    free(review);
}
END_TEST

/* ---- modes and policy rules: warnings, annotations, NotSupported lists ---- */

static const struct review_case mode_reviews[] = {
    {"x-status-many-rules-order", AS_IS, JG_VERDICT_DENIED, "deny, warn and audit in one review"},
    {"x-cronjob-update-invalid", AS_IS, JG_VERDICT_DENIED, "allow-list of 20, format warned"},
    {"r-create-job-bad-managedby", AS_IS, JG_VERDICT_ALLOWED, "warned and audited, allowed"},
};
#define N_MODE_REVIEWS ((int)(sizeof mode_reviews / sizeof mode_reviews[0]))

START_TEST(test_modes_chaos) {
    static char names[20][16];
    static struct jg_policy_controller ctls[20];
    for (int i = 0; i < 20; i++) {
        snprintf(names[i], sizeof names[i], "c%02d.io/ctl", 19 - i);
        ctls[i] = (struct jg_policy_controller){.name = names[i], .name_len = strlen(names[i])};
    }
    struct jg_policy pol = {.controllers = ctls, .n_controllers = 20};
    ck_assert(jg_policy_build_lookups(&pol)); /* before the chaos: a snapshot is built at load */
    run_cfg = (struct jg_config)JG_CONFIG_DEFAULT;
    run_cfg.policy = &pol;
    run_cfg.mode[JG_R_MANAGED_BY_FORMAT] = JG_MODE_WARN;
    run_cfg.mode[JG_R_MANAGED_BY_LENGTH] = JG_MODE_AUDIT;
    run_cfg.mode[JG_R_UNCOUNTED_EMPTY] = JG_MODE_WARN;
    run_cfg.mode[JG_R_MORE_READY_THAN_ACTIVE] = JG_MODE_AUDIT;
    run_cfg.mode[JG_R_DECREASING_FAILED] = JG_MODE_AUDIT;
    if (_i == 2) pol.allow_unlisted_controllers = true; /* its value would be refused */
    walk_review(&mode_reviews[_i]);
    run_cfg = (struct jg_config)JG_CONFIG_DEFAULT;
    jg_policy_free_lookups(&pol);
}
END_TEST

int main(int argc, char **argv) {
    if (argc > 1) cases_dir = argv[1];
    Suite *s = suite_create("chaos");
    TCase *tc = tcase_create("allocation failure");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_admit_chaos, 0, N_REVIEWS);
    tcase_add_loop_test(tc, test_objects_chaos, 0, N_OBJECTS);
    tcase_add_loop_test(tc, test_modes_chaos, 0, N_MODE_REVIEWS);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
