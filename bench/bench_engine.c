/* In-process engine benchmark: decode + validate + encode of each review, many times.
 * Prints input size, reviews/s and µs per review. Not a test: it prints figures.
 * Usage: bench_engine [-n ITERATIONS] [-t SECONDS] FILE...
 *        bench_engine --scaling [-t SECONDS] [-m ELEMENTS] [SHAPE...]
 *                     (µs per request against input size, sizes up to ELEMENTS)
 *        bench_engine --policy-scaling [-t SECONDS] [writers|globs]
 *                     (the policy rules' cost against policy and request size) */
#include "jobguard/admit.h"
#include "jobguard/decode.h"
#include "jobguard/policy.h"
#include "shapes.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
static double now(void) {
    return clock_s(CLOCK_MONOTONIC);
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

static const char *const verdicts[] = {"allowed", "denied", "bad", "error"};

/* CPU time of the fastest jg_admit of body among those made in `seconds` (at least 3): the
 * thread's CPU clock leaves out the time other processes hold the core, and the minimum the
 * rest of their disturbance (caches, frequency). */
static double time_admit(const char *body, size_t len, const struct jg_config *cfg, jg_buf *out,
                         double seconds, enum jg_verdict *v) {
    *v = jg_admit(body, len, cfg, out, NULL); /* warm-up */
    double best = 1e9, start = now();
    for (long n = 0; now() - start < seconds || n < 3; n++) {
        double t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        jg_admit(body, len, cfg, out, NULL);
        double t = clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
        if (t < best) best = t;
    }
    return best;
}

/* Every shape at 1k, 10k and 100k elements and at the most that fits the limits: µs per request
 * and per element, and the per-element cost relative to the shape's smallest size (a linear
 * shape stays near 1 or falls as fixed costs spread; a quadratic one grows tenfold per row). */
static int scaling(int argc, char **argv, double seconds, size_t up_to, const struct jg_config *cfg,
                   jg_buf *out) {
    printf("%-20s %-9s %9s %9s %8s %12s %11s %8s\n", "shape", "element", "elements", "bytes",
           "verdict", "us/request", "us/element", "vs first");
    jg_buf body = JG_BUF_INIT;
    for (size_t s = 0; s < shape_count; s++) {
        const struct shape *sh = &shapes[s];
        bool wanted = argc == 0;
        for (int a = 0; a < argc; a++)
            wanted |= strcmp(argv[a], sh->name) == 0;
        if (!wanted) continue;
        size_t sizes[] = {1000, 10000, 100000, sh->max};
        if (sh->max < 10000) /* the depth limit */
            sizes[0] = 100, sizes[1] = 1000;
        double first_cost = 0;
        size_t last = 0;
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t n = sizes[k] < sh->max ? sizes[k] : sh->max;
            if (n <= last || n > up_to) continue;
            last = n;
            sh->build(&body, n, false);
            if (body.oom) {
                fprintf(stderr, "bench_engine: out of memory building %s\n", sh->name);
                return 1;
            }
            enum jg_verdict v;
            double t = time_admit(body.data, body.len, cfg, out, seconds, &v);
            double per = t * 1e6 / (double)n;
            if (first_cost == 0) first_cost = per;
            printf("%-20s %-9s %9zu %9zu %8s %12.1f %11.4f %8.2f\n", sh->name, sh->element, n,
                   body.len, verdicts[v], t * 1e6, per, per / first_cost);
            fflush(stdout);
        }
    }
    jg_buf_free(&body);
    return 0;
}

/* One row of --policy-scaling: the review under the policy (both JSON), CPU time per request. */
static int policy_row(const char *what, const char *policy_json, size_t policy_len,
                      const jg_buf *body, double seconds, jg_buf *out) {
    char err[1024];
    struct jg_policy *p = jg_policy_load_buffer("policy", policy_json, policy_len, err, sizeof err);
    if (!p) {
        fprintf(stderr, "bench_engine: %s: %s\n", what, err);
        return 1;
    }
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_config_modes_unset(&cfg);
    jg_policy_apply(p, &cfg);
    enum jg_verdict v;
    double t = time_admit(body->data, body->len, &cfg, out, seconds, &v);
    printf("%-44s %9zu %9zu %8s %12.1f\n", what, policy_len, body->len, verdicts[v], t * 1e6);
    fflush(stdout);
    jg_policy_free(p);
    return 0;
}

/* The status-writer check (exempt and writer groups, 500-byte names, 600,000 request groups:
 * the body limit) and the allow-list's namespace globs (a policy of 1 MiB, and one at the limit
 * of general glob tokens made of the matcher's worst glob; a refused request). `which`: "writers",
 * "globs" or NULL for both. */
static bool want(const char *which, const char *part) {
    return !which || strcmp(which, part) == 0;
}

static int policy_scaling(const char *which, double seconds, jg_buf *out) {
    printf("%-44s %9s %9s %8s %12s\n", "policy / request", "policy", "bytes", "verdict",
           "us/request");
    jg_buf pol = JG_BUF_INIT, body = JG_BUF_INIT, name = JG_BUF_INIT;
    int rc = 0;
    static const size_t sizes[] = {64, 256, 1024};
    for (size_t i = 0; i < 3 && rc == 0 && want(which, "writers"); i++) {
        char what[96];
        policy_writers(&pol, sizes[i], sizes[i], 500);
        review_writers(&body, 600000, NULL);
        snprintf(what, sizeof what, "writers %zu+%zu x 500 B, 600000 groups", sizes[i], sizes[i]);
        rc = policy_row(what, pol.data, pol.len, &body, seconds, out);
        jg_buf_reset(&name);
        writers_group_name(&name, 'w', sizes[i] - 1, 500);
        review_writers(&body, 600000, name.data);
        snprintf(what, sizeof what, "  same, the last group a writer");
        if (rc == 0) rc = policy_row(what, pol.data, pol.len, &body, seconds, out);
    }
    static const size_t ns_lens[] = {63, 255};
    for (int worst = 0; worst < 2 && want(which, "globs"); worst++) {
        size_t n = worst ? 16384 / GLOB_WORST_TOKENS : policy_globs(&pol, 1u << 20);
        if (worst) policy_globs_worst(&pol, n);
        for (size_t i = 0; i < 2 && rc == 0; i++) {
            char what[96], ns[256];
            memset(ns, 'a', ns_lens[i]);
            if (!worst) memcpy(ns, "team-", 5);
            ns[ns_lens[i]] = '\0';
            review_namespace(&body, ns, "x.io/unlisted");
            snprintf(what, sizeof what, "globs %zu x %d%s, namespace %zu B", n,
                     worst ? 1 : GLOBS_PER_CONTROLLER, worst ? " worst" : "", ns_lens[i]);
            rc = policy_row(what, pol.data, pol.len, &body, seconds, out);
        }
    }
    jg_buf_free(&pol);
    jg_buf_free(&body);
    jg_buf_free(&name);
    return rc;
}

static int usage(void) {
    fprintf(stderr,
            "usage: bench_engine [-n ITERATIONS] [-t SECONDS] [--policy-file FILE] FILE...\n"
            "       bench_engine --scaling [-t SECONDS] [-m ELEMENTS] [SHAPE...]\n"
            "       bench_engine --policy-scaling [-t SECONDS] [writers|globs]\n");
    return 2;
}

int main(int argc, char **argv) {
    long iterations = 0;
    double seconds = 0; /* default: 1 s per file, 0.2 s per scaling row */
    bool scale = false, policy_scale = false;
    size_t up_to = SIZE_MAX;
    int first = 1;
    const char *policy_path = NULL;
    while (first < argc && argv[first][0] == '-') {
        if (strcmp(argv[first], "-n") == 0 && first + 1 < argc)
            iterations = atol(argv[++first]);
        else if (strcmp(argv[first], "-t") == 0 && first + 1 < argc)
            seconds = atof(argv[++first]);
        else if (strcmp(argv[first], "-m") == 0 && first + 1 < argc)
            up_to = (size_t)atol(argv[++first]);
        else if (strcmp(argv[first], "--policy-file") == 0 && first + 1 < argc)
            policy_path = argv[++first];
        else if (strcmp(argv[first], "--scaling") == 0)
            scale = true;
        else if (strcmp(argv[first], "--policy-scaling") == 0)
            policy_scale = true;
        else
            return usage();
        first++;
    }
    if (seconds <= 0) seconds = scale || policy_scale ? 0.2 : 1.0;
    /* JOBGUARD_SCANNER forces the decoder's level, as for the jobguard program (docs/decoder.md).
     */
    const char *level = getenv("JOBGUARD_SCANNER");
    if (level && *level && !jg_scanner_force(level)) {
        fprintf(stderr, "bench_engine: JOBGUARD_SCANNER=%s is not scalar, portable, sse2 or avx2\n",
                level);
        return 2;
    }
    if (policy_scale) {
        jg_buf out = JG_BUF_INIT;
        int rc = policy_scaling(first < argc ? argv[first] : NULL, seconds, &out);
        jg_buf_free(&out);
        return rc;
    }
    if (scale) {
        struct jg_config cfg = JG_CONFIG_DEFAULT;
        jg_buf out = JG_BUF_INIT;
        int rc = scaling(argc - first, argv + first, seconds, up_to, &cfg, &out);
        jg_buf_free(&out);
        return rc;
    }
    if (first >= argc) return usage();
    json_object_seed(42); /* deterministic hashing for callgrind runs */
    /* decided as `jobguard check --policy-file` decides: the file's modes, controllers, writers */
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_config_modes_unset(&cfg);
    struct jg_policy *policy = NULL;
    if (policy_path) {
        char why[1024];
        if (!(policy = jg_policy_load_file(policy_path, why, sizeof why))) {
            fprintf(stderr, "bench_engine: --policy-file: %s\n", why);
            return 2;
        }
    }
    jg_policy_apply(policy, &cfg);
    jg_buf out = JG_BUF_INIT;
    printf("%-34s %8s %10s %12s %10s %8s\n", "review", "bytes", "verdict", "reviews/s", "us/review",
           "MB/s");
    for (int f = first; f < argc; f++) {
        size_t len;
        char *body = slurp(argv[f], &len);
        enum jg_verdict v = jg_admit(body, len, &cfg, &out, NULL); /* warm-up */
        long n = 0;
        double start = now(), elapsed;
        do {
            for (int k = 0; k < 100; k++)
                jg_admit(body, len, &cfg, &out, NULL);
            n += 100;
            elapsed = now() - start;
        } while (iterations ? n < iterations : elapsed < seconds);
        /* tests/cases/<name>/review.json is named by its folder */
        char name[64];
        const char *base = strrchr(argv[f], '/') ? strrchr(argv[f], '/') + 1 : argv[f];
        if (strcmp(base, "review.json") == 0 && base - argv[f] >= 2) {
            const char *end = base - 1, *folder = end;
            while (folder > argv[f] && folder[-1] != '/')
                folder--;
            snprintf(name, sizeof name, "%.*s", (int)(end - folder), folder);
        } else {
            snprintf(name, sizeof name, "%s", base);
        }
        printf("%-34s %8zu %10s %12.0f %10.2f %8.1f\n", name, len, verdicts[v], n / elapsed,
               elapsed / n * 1e6, (double)len * n / elapsed / 1e6);
        free(body);
    }
    jg_buf_free(&out);
    jg_policy_free(policy);
    return 0;
}
