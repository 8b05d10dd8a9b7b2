/* In-process engine benchmark: decode + validate + encode of each review, many times.
 * Prints input size, reviews/s and µs per review. Not a test: it prints figures.
 * Usage: bench_engine [-n ITERATIONS] [-t SECONDS] FILE... */
#include "jobguard/admit.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

int main(int argc, char **argv) {
    long iterations = 0;
    double seconds = 1.0;
    int first = 1;
    while (first < argc && argv[first][0] == '-') {
        if (strcmp(argv[first], "-n") == 0 && first + 1 < argc)
            iterations = atol(argv[++first]);
        else if (strcmp(argv[first], "-t") == 0 && first + 1 < argc)
            seconds = atof(argv[++first]);
        else {
            fprintf(stderr, "usage: bench_engine [-n ITERATIONS] [-t SECONDS] FILE...\n");
            return 2;
        }
        first++;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: bench_engine [-n ITERATIONS] [-t SECONDS] FILE...\n");
        return 2;
    }
    json_object_seed(42); /* deterministic hashing for callgrind runs */
    struct jg_config cfg = JG_CONFIG_DEFAULT;
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
            const char *end = base - 1, *start = end;
            while (start > argv[f] && start[-1] != '/')
                start--;
            snprintf(name, sizeof name, "%.*s", (int)(end - start), start);
        } else {
            snprintf(name, sizeof name, "%s", base);
        }
        static const char *const verdicts[] = {"allowed", "denied", "bad", "error"};
        printf("%-34s %8zu %10s %12.0f %10.2f %8.1f\n", name, len, verdicts[v], n / elapsed,
               elapsed / n * 1e6, (double)len * n / elapsed / 1e6);
        free(body);
    }
    jg_buf_free(&out);
    return 0;
}
