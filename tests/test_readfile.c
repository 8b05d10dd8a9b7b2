/* jg_read_regular_file: what the server reads its certificate, key and CA files with. Every kind
 * of non-regular file is refused with its name and without blocking (a FIFO nobody writes to,
 * a socket, a device, a directory), and size and emptiness are checked. */
#include "jobguard/readfile.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "run_suite.h"

static char dir[64];

static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/jobguard-readfile.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* dir/name; four rotating buffers, so that two results can be used in one call */
static const char *at(const char *name) {
    static char p[4][128];
    static unsigned i;
    char *r = p[i++ % 4];
    snprintf(r, sizeof p[0], "%s/%s", dir, name);
    return r;
}

static void write_file(const char *path, const char *data, size_t n) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* Reads path with limit max; expects failure with exactly "<path><suffix>", or success (NULL). */
static void expect(const char *path, size_t max, const char *suffix) {
    jg_buf b = JG_BUF_INIT;
    char err[512] = "";
    bool ok = jg_read_regular_file(path, max, &b, err, sizeof err);
    if (!suffix) {
        ck_assert_msg(ok, "%s: %s", path, err);
    } else {
        char want[512];
        snprintf(want, sizeof want, "%s%s", path, suffix);
        ck_assert_msg(!ok, "%s should be refused", path);
        ck_assert_str_eq(err, want);
    }
    jg_buf_free(&b);
}

START_TEST(regular_file_read_whole) {
    char data[20000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)('a' + i % 26);
    write_file(at("f.pem"), data, sizeof data);
    jg_buf b = JG_BUF_INIT;
    char err[256];
    ck_assert(jg_read_regular_file(at("f.pem"), sizeof data, &b, err, sizeof err));
    ck_assert_uint_eq(b.len, sizeof data);
    ck_assert(memcmp(b.data, data, sizeof data) == 0);
    /* through a symlink, as a Kubernetes Secret volume presents it */
    ck_assert_int_eq(symlink(at("f.pem"), at("link.pem")), 0);
    ck_assert(jg_read_regular_file(at("link.pem"), sizeof data, &b, err, sizeof err));
    ck_assert_uint_eq(b.len, sizeof data);
    jg_buf_free(&b);
}
END_TEST

START_TEST(non_regular_refused) {
    /* a FIFO without a writer: a blocking open(2) would never return (the test would time out) */
    ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
    expect(at("fifo"), 1024, " is a FIFO (named pipe), not a regular file");
    expect(dir, 1024, " is a directory, not a regular file");
    expect("/dev/null", 1024, " is a character device, not a regular file");
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(s, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    const char *sock = at("sock");
    ck_assert_uint_lt(strlen(sock), sizeof a.sun_path);
    memcpy(a.sun_path, sock, strlen(sock) + 1);
    ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    expect(at("sock"), 1024, " is a socket, not a regular file");
    close(s);
    /* a symlink to a FIFO is judged by its target */
    ck_assert_int_eq(symlink(at("fifo"), at("fifo-link")), 0);
    expect(at("fifo-link"), 1024, " is a FIFO (named pipe), not a regular file");
}
END_TEST

START_TEST(size_and_emptiness) {
    write_file(at("big"), "0123456789", 10);
    expect(at("big"), 10, NULL);
    expect(at("big"), 9, " is larger than 9 bytes");
    write_file(at("empty"), "", 0);
    expect(at("empty"), 10, " is empty");
    jg_buf b = JG_BUF_INIT;
    char err[256], want[256];
    ck_assert(!jg_read_regular_file(at("missing"), 10, &b, err, sizeof err));
    snprintf(want, sizeof want, "cannot open %s: No such file or directory", at("missing"));
    ck_assert_str_eq(err, want);
    jg_buf_free(&b);
}
END_TEST

int main(void) {
    Suite *s = suite_create("readfile");
    TCase *tc = tcase_create("readfile");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, regular_file_read_whole);
    tcase_add_test(tc, non_regular_refused);
    tcase_add_test(tc, size_and_emptiness);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
