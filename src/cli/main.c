/* jobguard: parses the subcommand and hands over. No rule or transport logic here. */
#include "cli.h"
#include "jobguard/decode.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"check", jg_cmd_check, "decide AdmissionReviews (or raw objects, JSON or YAML) offline"},
    {"convert", jg_cmd_convert, "print the JSON documents jobguard reads from files (YAML too)"},
    {"policy", jg_cmd_policy, "validate a policy file, or print the effective policy"},
    {"replay", jg_cmd_replay, "decide the writes of an API server's audit log (old object, user)"},
    {"rules", jg_cmd_rules, "print the rule table"},
    {"scan", jg_cmd_scan, "check stored objects (kubectl get -o json) against the rules"},
    {"serve", jg_cmd_serve, "run the HTTPS admission webhook server"},
    {"vap", jg_cmd_vap, "print the policy as ValidatingAdmissionPolicies (no webhook)"},
};

static void usage(FILE *f) {
    fprintf(f,
            "Usage: jobguard <command> [options]\n\n"
            "Kubernetes validating admission webhook for the managedBy field of batch workloads:\n"
            "Job and CronJob (format, length, immutability and the Job status rules of\n"
            "Kubernetes v1.35, KEP-4368), the batch CRDs (JobSet, TrainJob and the Kubeflow\n"
            "jobs, MPIJob, KubeRay, AppWrapper, Tekton) and your own target kinds, and a policy:\n"
            "which controllers may be named where, who may write a delegated object's status,\n"
            "and per rule deny, warn, audit or off.\n\nCommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nOptions:\n  --version  print the version\n  --help     this text\n\n"
               "Run 'jobguard <command> --help' for the options of a command.\n");
}

int main(int argc, char **argv) {
    /* The heap policy, the only one: blocks of 1 MiB and more (large bodies, long decoded lists)
     * get their own mappings, so growing one remaps instead of copying (a 7 MiB review peaked
     * 12 MB higher) and freeing one returns it (glibc's default threshold rises to 32 MiB once
     * such a block is freed). The server's memory cgroup after 20 reviews of 3 MB and 2,000 of
     * 3.9 KB (bench/cgmem.sh): working set 2.6 MiB with it, 14.0 MiB without; a malloc_trim
     * whenever traffic paused saved 0.3 MiB more and was dropped. Buffers of a request are freed
     * when it ends, so an idle keep-alive connection holds none. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    /* The decoder's level, forced for measurements and tests (docs/decoder.md); the engine reads
     * no environment of its own. */
    const char *level = getenv("JOBGUARD_SCANNER");
    if (level && *level && !jg_scanner_force(level))
        fprintf(stderr,
                "jobguard: JOBGUARD_SCANNER=%s is not scalar, portable, sse2 or avx2; "
                "ignored\n",
                level);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("jobguard %s (Kubernetes v1.35 rules)\n", JG_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "jobguard: unknown command %s\n\n", argv[1]);
    usage(stderr);
    return 2;
}
