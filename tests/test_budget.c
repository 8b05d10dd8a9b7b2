/* The memory budget (docs/memory.md): what a request reserves covers what its decision allocates,
 * for every request shape at every size; the reservation arithmetic; and the cgroup reader on
 * folders laid out as cgroup v2, v1 and hybrid hosts show them to a container. */
#include "jobguard/admit.h"
#include "jobguard/alloc.h"
#include "jobguard/decode.h"
#include "jobguard/policy.h"
#include "jobguard/server/budget.h"
#include "jobguard/server/cgroup.h"
#include "shapes.h"

#include <check.h>

#include "run_suite.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- the engine's peak heap against the reservation --- */

/* Every allocation carries its size in a header, so the bytes live at any moment are known. */
#define HDR 16
static size_t live, peak;

static void *count_malloc(size_t n) {
    size_t *p = malloc(n + HDR);
    if (!p) return NULL;
    *p = n;
    live += n;
    if (live > peak) peak = live;
    return (char *)p + HDR;
}

static void count_free(void *q) {
    if (!q) return;
    size_t *p = (size_t *)(void *)((char *)q - HDR);
    live -= *p;
    free(p);
}

static void *count_realloc(void *q, size_t n) {
    if (!q) return count_malloc(n);
    size_t *p = (size_t *)(void *)((char *)q - HDR), old = *p;
    /* a moving realloc holds both blocks for a moment */
    if (live + n > peak) peak = live + n;
    size_t *np = realloc(p, n + HDR);
    if (!np) return NULL;
    *np = n;
    live = live - old + n;
    if (live > peak) peak = live;
    return (char *)np + HDR;
}

/* Decides `body` under the counting allocator; returns what the decision held at its peak plus
 * the copy libmicrohttpd makes of the response (the transport holds both until completion). */
static size_t decision_bytes(const jg_buf *body, const struct jg_config *cfg) {
    jg_alloc_set(count_malloc, count_realloc, count_free);
    live = peak = 0;
    jg_buf out = JG_BUF_INIT;
    struct jg_outcome o;
    jg_outcome_init(&o);
    jg_admit(body->data, body->len, cfg, &out, &o);
    size_t response = out.len;
    jg_buf_free(&out);
    jg_outcome_free(&o);
    size_t held = peak;
    jg_alloc_set(NULL, NULL, NULL);
    ck_assert_uint_eq(live, 0);
    return held + response;
}

/* The reservation minus the buffered body: what the decision may use. */
static uint64_t decision_share(size_t len) {
    return jg_budget_request_cost(len) - (len + 1);
}

START_TEST(reservation_covers_every_shape) {
    jg_buf body = JG_BUF_INIT;
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    double worst_ratio = 0;
    const char *worst = "";
    for (size_t s = 0; s < shape_count; s++) {
        const struct shape *sh = &shapes[s];
        for (size_t n = 1;; n *= 4) {
            if (n > sh->max) n = sh->max;
            for (int spoil = 0; spoil < 2; spoil++) {
                sh->build(&body, n, spoil);
                ck_assert(!body.oom);
                size_t used = decision_bytes(&body, &cfg);
                uint64_t share = decision_share(body.len);
                if (used > share)
                    ck_abort_msg("%s with %zu %ss (%zu bytes): the decision held %zu bytes, the "
                                 "reservation allows %llu",
                                 sh->name, n, sh->element, body.len, used,
                                 (unsigned long long)share);
                if ((double)used / (double)share > worst_ratio)
                    worst_ratio = (double)used / (double)share, worst = sh->name;
            }
            if (n == sh->max) break;
        }
    }
    /* a figure, not an assertion: how close the tightest shape comes to its reservation */
    printf("# the tightest shape, %s, uses %.0f%% of its reservation\n", worst, 100 * worst_ratio);
    jg_buf_free(&body);
}
END_TEST

/* A status update whose user is in `groups` groups, under a policy binding status writers, as
 * large as the body limit allows: the status-writer lookup's allocations stay in the share. */
START_TEST(reservation_covers_status_writer_groups) {
    static const char policy_json[] =
        "{\"controllers\":[{\"name\":\"example.com/mk\",\"statusWriters\":{\"groups\":"
        "[\"writers\"]}}],\"statusWriterExemptGroups\":[\"system:masters\"]}";
    char err[512];
    struct jg_policy *p =
        jg_policy_load_buffer("test", policy_json, sizeof policy_json - 1, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_policy_apply(p, &cfg);
    jg_buf b = JG_BUF_INIT;
    jg_buf_puts(&b, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                    "\"request\":{\"uid\":\"u\",\"kind\":{\"group\":\"batch\",\"version\":\"v1\","
                    "\"kind\":\"Job\"},\"resource\":{\"group\":\"batch\",\"version\":\"v1\","
                    "\"resource\":\"jobs\"},\"subResource\":\"status\",\"name\":\"j\","
                    "\"namespace\":\"default\",\"operation\":\"UPDATE\",\"userInfo\":{"
                    "\"username\":\"u\",\"groups\":[");
    size_t tail = 400;
    for (size_t i = 0; b.len + tail < JG_MAX_BODY_BYTES; i++)
        jg_buf_printf(&b, "%s\"g%zx\"", i ? "," : "", i);
    jg_buf_puts(&b, "]},\"object\":{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":"
                    "{\"name\":\"j\"},\"spec\":{\"managedBy\":\"example.com/mk\"},\"status\":"
                    "{\"active\":1}},\"oldObject\":{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
                    "\"metadata\":{\"name\":\"j\"},\"spec\":{\"managedBy\":\"example.com/mk\"},"
                    "\"status\":{}}}}");
    ck_assert(!b.oom);
    ck_assert_uint_le(b.len, JG_MAX_BODY_BYTES);
    size_t used = decision_bytes(&b, &cfg);
    ck_assert_msg(used <= decision_share(b.len), "%zu bytes held, %llu allowed", used,
                  (unsigned long long)decision_share(b.len));
    jg_buf_free(&b);
    jg_policy_free(p);
}
END_TEST

/* --- the arithmetic --- */

START_TEST(default_budget_arithmetic) {
    const uint64_t MiB = 1 << 20;
    /* the chart: 160 MiB, 1024 connections of 16 KiB pools */
    ck_assert_uint_eq(jg_budget_default(160 * MiB, 1024, 16 << 10), 80 * MiB);
    ck_assert_uint_eq(jg_budget_limit_for(80 * MiB, 1024, 16 << 10), 160 * MiB);
    ck_assert_uint_eq(jg_budget_default(0, 1024, 16 << 10), JG_BUDGET_UNLIMITED_DEFAULT);
    /* too small a limit leaves nothing: serve refuses to start */
    ck_assert_uint_eq(jg_budget_default(64 * MiB, 1024, 16 << 10), 0);
    ck_assert_uint_eq(jg_budget_default(jg_budget_limit_for(JG_BUDGET_MIN, 10, 8192), 10, 8192),
                      JG_BUDGET_MIN);
    ck_assert_uint_eq(jg_budget_default(jg_budget_limit_for(JG_BUDGET_MIN, 10, 8192) - 1, 10, 8192),
                      0);
}
END_TEST

START_TEST(take_busy_never_give) {
    const uint64_t MiB = 1 << 20;
    jg_budget_init(80 * MiB);
    size_t max = jg_budget_max_body();
    /* the largest body fits the large share; one more byte does not */
    ck_assert_uint_gt(max, JG_BUDGET_LARGE_BODY);
    ck_assert_uint_le(jg_budget_request_cost(max), 60 * MiB);
    ck_assert_uint_gt(jg_budget_request_cost(max + 1), 60 * MiB);
    uint64_t big, small, c;
    ck_assert_int_eq(jg_budget_take(max, &big), JG_BUDGET_TAKEN);
    /* a second large one must wait; the last quarter stays for small reviews */
    ck_assert_int_eq(jg_budget_take(2 * JG_BUDGET_LARGE_BODY, &c), JG_BUDGET_BUSY);
    ck_assert_int_eq(jg_budget_take(16 << 10, &small), JG_BUDGET_TAKEN);
    ck_assert_uint_eq(jg_budget_held(), big + small);
    ck_assert_uint_eq(jg_budget_refused(), 1);
    ck_assert_int_eq(jg_budget_take(max + 1, &c), JG_BUDGET_NEVER);
    jg_budget_give(max, big);
    ck_assert_int_eq(jg_budget_take(2 * JG_BUDGET_LARGE_BODY, &c), JG_BUDGET_TAKEN);
    jg_budget_give(2 * JG_BUDGET_LARGE_BODY, c);
    jg_budget_give(16 << 10, small);
    ck_assert_uint_eq(jg_budget_held(), 0);
    /* small reviews alone may fill the whole budget, then wait */
    size_t n = 0;
    while (jg_budget_take(4096, &c) == JG_BUDGET_TAKEN)
        n++;
    ck_assert_uint_eq(n, 80 * MiB / (jg_budget_request_cost(4096) - 4097));
    while (n--)
        jg_budget_give(4096, c);
    ck_assert_uint_eq(jg_budget_held(), 0);
    /* a budget that holds the body limit */
    jg_budget_init(1024 * MiB);
    ck_assert_uint_eq(jg_budget_max_body(), JG_MAX_BODY_BYTES);
}
END_TEST

/* --- holds: what clients make the server hold while they take their time --- */

static struct jg_budget_hold hold_at(uint64_t seq) {
    return (struct jg_budget_hold){.seq = seq, .fd = -1};
}

START_TEST(holds_share_and_eviction) {
    const uint64_t MiB = 1 << 20;
    jg_budget_init(80 * MiB);
    /* clients hold at most three quarters: 60 MiB of 2 MiB holds, then a large request must wait */
    struct jg_budget_hold h[32];
    size_t n = 0;
    for (; n < 32; n++) {
        h[n] = hold_at(n);
        if (!jg_budget_hold_grow(&h[n], 2 * MiB, false)) break;
    }
    ck_assert_uint_eq(n, 30);
    ck_assert_uint_eq(jg_budget_held(), 60 * MiB);
    ck_assert(!h[30].listed && h[30].bytes == 0);
    ck_assert_uint_eq(jg_budget_evicted(), 0);
    /* a small request evicts the oldest holds it needs, and only older ones */
    struct jg_budget_hold small = hold_at(100);
    ck_assert(jg_budget_hold_grow(&small, 64 << 10, true));
    ck_assert(h[0].evicted && !h[1].evicted);
    ck_assert_uint_eq(jg_budget_evicted(), 1);
    ck_assert_uint_eq(jg_budget_held(), 58 * MiB + (64 << 10));
    /* an evicted hold cannot grow again */
    ck_assert(!jg_budget_hold_grow(&h[0], 4 * MiB, true));
    /* a hold older than all others evicts nothing */
    struct jg_budget_hold oldest = hold_at(0);
    jg_budget_hold_release(&h[0]);
    ck_assert(!jg_budget_hold_grow(&oldest, 4 * MiB, true));
    ck_assert(!h[1].evicted);
    /* decisions: a small one fits in the last quarter whatever clients hold */
    uint64_t c;
    ck_assert_int_eq(jg_budget_take(16 << 10, &c), JG_BUDGET_TAKEN);
    ck_assert_uint_eq(c, jg_budget_request_cost(16 << 10) - ((16 << 10) + 1));
    /* a large one does not fit beside the holds */
    uint64_t big;
    ck_assert_int_eq(jg_budget_take(2 * JG_BUDGET_LARGE_BODY, &big), JG_BUDGET_BUSY);
    jg_budget_give(16 << 10, c);
    /* the answer replaces the body: the hold is set to its size, whatever the room */
    jg_budget_hold_set(&small, 3 * MiB);
    ck_assert_uint_eq(jg_budget_held(), 61 * MiB);
    jg_budget_hold_release(&small);
    for (size_t i = 1; i < n; i++)
        jg_budget_hold_release(&h[i]);
    ck_assert_uint_eq(jg_budget_held(), 0);
    /* growing never shrinks; releasing twice is harmless */
    struct jg_budget_hold g = hold_at(200);
    ck_assert(jg_budget_hold_grow(&g, MiB, false));
    ck_assert(jg_budget_hold_grow(&g, 1024, false));
    ck_assert_uint_eq(jg_budget_held(), MiB);
    jg_budget_hold_release(&g);
    jg_budget_hold_release(&g);
    ck_assert_uint_eq(jg_budget_held(), 0);
}
END_TEST

/* --- the cgroup reader on files --- */

static char root[256];

static void put(const char *rel, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s", path);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static void setup_root(void) {
    snprintf(root, sizeof root, "/tmp/jobguard-cgroup.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
}

static void teardown_root(void) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}

static void expect_file(const char *got, const char *rel) {
    char want[512];
    snprintf(want, sizeof want, "%s/%s", root, rel);
    ck_assert_str_eq(got, want);
}

#define V2_MOUNT "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"

START_TEST(v2_pod_without_namespace) {
    /* a v2 host, the container sees the host's paths: the pod level holds the limit */
    put("proc/self/mountinfo", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n" V2_MOUNT);
    put("proc/self/cgroup", "0::/kubepods.slice/pod1.slice/cri-abc.scope\n");
    put("sys/fs/cgroup/kubepods.slice/memory.max", "max\n");
    put("sys/fs/cgroup/kubepods.slice/pod1.slice/memory.max", "167772160\n");
    put("sys/fs/cgroup/kubepods.slice/pod1.slice/cri-abc.scope/memory.max", "max\n");
    put("sys/fs/cgroup/kubepods.slice/pod1.slice/cri-abc.scope/cpu.max", "150000 100000\n");
    put("sys/fs/cgroup/kubepods.slice/pod1.slice/cpu.max", "max 100000\n");
    struct jg_cgroup_limits l;
    jg_cgroup_read(root, &l);
    ck_assert_uint_eq(l.memory_bytes, 167772160);
    expect_file(l.memory_file, "sys/fs/cgroup/kubepods.slice/pod1.slice/memory.max");
    ck_assert_uint_eq(l.cpus, 2);
    expect_file(l.cpu_file, "sys/fs/cgroup/kubepods.slice/pod1.slice/cri-abc.scope/cpu.max");
}
END_TEST

START_TEST(v2_cgroup_namespace) {
    /* with a cgroup namespace the container's own cgroup is the mount's root */
    put("proc/self/mountinfo", V2_MOUNT);
    put("proc/self/cgroup", "0::/\n");
    put("sys/fs/cgroup/memory.max", "134217728\n");
    put("sys/fs/cgroup/cpu.max", "50000 100000\n");
    struct jg_cgroup_limits l;
    jg_cgroup_read(root, &l);
    ck_assert_uint_eq(l.memory_bytes, 134217728);
    expect_file(l.memory_file, "sys/fs/cgroup/memory.max");
    ck_assert_uint_eq(l.cpus, 1);
}
END_TEST

START_TEST(v2_the_lowest_level_wins) {
    put("proc/self/mountinfo", V2_MOUNT);
    put("proc/self/cgroup", "0::/a/b\n");
    put("sys/fs/cgroup/a/memory.max", "100000000\n");
    put("sys/fs/cgroup/a/b/memory.max", "200000000\n");
    put("sys/fs/cgroup/a/cpu.max", "400000 100000\n");
    put("sys/fs/cgroup/a/b/cpu.max", "250000 100000\n");
    struct jg_cgroup_limits l;
    jg_cgroup_read(root, &l);
    ck_assert_uint_eq(l.memory_bytes, 100000000);
    expect_file(l.memory_file, "sys/fs/cgroup/a/memory.max");
    ck_assert_uint_eq(l.cpus, 3); /* 2.5 CPUs round up */
}
END_TEST

START_TEST(v2_no_limit) {
    put("proc/self/mountinfo", V2_MOUNT);
    put("proc/self/cgroup", "0::/a\n");
    put("sys/fs/cgroup/a/memory.max", "max\n");
    put("sys/fs/cgroup/a/cpu.max", "max 100000\n");
    struct jg_cgroup_limits l;
    jg_cgroup_read(root, &l);
    ck_assert_uint_eq(l.memory_bytes, 0);
    ck_assert_str_eq(l.memory_file, "");
    ck_assert_uint_eq(l.cpus, 0);
}
END_TEST

#define V1_MOUNTS                                                                                  \
    "31 23 0:28 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n"                                   \
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"                  \
    "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"

START_TEST(v1_kubernetes) {
    put("proc/self/mountinfo", V1_MOUNTS);
    put("proc/self/cgroup", "9:memory:/kubepods/burstable/pod1/ctr\n"
                            "3:cpu,cpuacct:/kubepods/burstable/pod1/ctr\n");
    put("sys/fs/cgroup/memory/kubepods/memory.limit_in_bytes", "9223372036854771712\n");
    put("sys/fs/cgroup/memory/kubepods/burstable/pod1/memory.limit_in_bytes", "268435456\n");
    put("sys/fs/cgroup/memory/kubepods/burstable/pod1/ctr/memory.limit_in_bytes",
        "9223372036854771712\n");
    put("sys/fs/cgroup/cpu,cpuacct/kubepods/burstable/pod1/ctr/cpu.cfs_quota_us", "-1\n");
    put("sys/fs/cgroup/cpu,cpuacct/kubepods/burstable/pod1/ctr/cpu.cfs_period_us", "100000\n");
    put("sys/fs/cgroup/cpu,cpuacct/kubepods/burstable/pod1/cpu.cfs_quota_us", "200000\n");
    put("sys/fs/cgroup/cpu,cpuacct/kubepods/burstable/pod1/cpu.cfs_period_us", "100000\n");
    struct jg_cgroup_limits l;
    jg_cgroup_read(root, &l);
    ck_assert_uint_eq(l.memory_bytes, 268435456);
    expect_file(l.memory_file,
                "sys/fs/cgroup/memory/kubepods/burstable/pod1/memory.limit_in_bytes");
    ck_assert_uint_eq(l.cpus, 2);
    expect_file(l.cpu_file, "sys/fs/cgroup/cpu,cpuacct/kubepods/burstable/pod1/cpu.cfs_quota_us");
}
END_TEST

START_TEST(v1_container_root_is_mount_root) {
    /* docker without a cgroup namespace: the mount's root is the container's own cgroup */
    put("proc/self/mountinfo",
        "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n");
    put("proc/self/cgroup", "4:memory:/docker/abc\n");
    put("sys/fs/cgroup/memory/memory.limit_in_bytes", "104857600\n");
    struct jg_cgroup_limits l;
    jg_cgroup_read(root, &l);
    ck_assert_uint_eq(l.memory_bytes, 104857600);
    expect_file(l.memory_file, "sys/fs/cgroup/memory/memory.limit_in_bytes");
}
END_TEST

START_TEST(hybrid_prefers_v1_memory) {
    /* a hybrid host: v2 is mounted without the memory controller, v1 has it */
    put("proc/self/mountinfo",
        V1_MOUNTS "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
    put("proc/self/cgroup", "9:memory:/job\n0::/job\n");
    put("sys/fs/cgroup/memory/job/memory.limit_in_bytes", "167772160\n");
    put("sys/fs/cgroup/unified/job/cgroup.controllers", "pids\n");
    struct jg_cgroup_limits l;
    jg_cgroup_read(root, &l);
    ck_assert_uint_eq(l.memory_bytes, 167772160);
    expect_file(l.memory_file, "sys/fs/cgroup/memory/job/memory.limit_in_bytes");
    ck_assert_uint_eq(l.cpus, 0);
}
END_TEST

START_TEST(odd_files_mean_no_limit) {
    /* escaped mount points are decoded; unparsable values and missing files are no limit */
    put("proc/self/mountinfo", "30 23 0:26 / /sys/fs/cg\\040roup rw - cgroup2 cgroup2 rw\n");
    put("proc/self/cgroup", "0::/x/y\n");
    put("sys/fs/cg roup/x/y/memory.max", "12abc\n");
    put("sys/fs/cg roup/x/memory.max", "50000000\n");
    put("sys/fs/cg roup/x/y/cpu.max", "garbage\n");
    put("sys/fs/cg roup/x/cpu.max", "0 100000\n");
    struct jg_cgroup_limits l;
    jg_cgroup_read(root, &l);
    ck_assert_uint_eq(l.memory_bytes, 50000000);
    expect_file(l.memory_file, "sys/fs/cg roup/x/memory.max");
    ck_assert_uint_eq(l.cpus, 0);
}
END_TEST

START_TEST(nothing_mounted) {
    put("proc/self/mountinfo", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n");
    put("proc/self/cgroup", "0::/\n");
    struct jg_cgroup_limits l;
    jg_cgroup_read(root, &l);
    ck_assert_uint_eq(l.memory_bytes, 0);
    ck_assert_uint_eq(l.cpus, 0);
    jg_cgroup_read("/nonexistent-root", &l);
    ck_assert_uint_eq(l.memory_bytes, 0);
}
END_TEST

int main(void) {
    Suite *s = suite_create("budget");
    TCase *tc = tcase_create("reservation");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, reservation_covers_every_shape);
    tcase_add_test(tc, reservation_covers_status_writer_groups);
    tcase_add_test(tc, default_budget_arithmetic);
    tcase_add_test(tc, take_busy_never_give);
    tcase_add_test(tc, holds_share_and_eviction);
    suite_add_tcase(s, tc);
    TCase *cg = tcase_create("cgroup");
    tcase_add_checked_fixture(cg, setup_root, teardown_root);
    tcase_add_test(cg, v2_pod_without_namespace);
    tcase_add_test(cg, v2_cgroup_namespace);
    tcase_add_test(cg, v2_the_lowest_level_wins);
    tcase_add_test(cg, v2_no_limit);
    tcase_add_test(cg, v1_kubernetes);
    tcase_add_test(cg, v1_container_root_is_mount_root);
    tcase_add_test(cg, hybrid_prefers_v1_memory);
    tcase_add_test(cg, odd_files_mean_no_limit);
    tcase_add_test(cg, nothing_mounted);
    suite_add_tcase(s, cg);
    return run_suite(s);
}
