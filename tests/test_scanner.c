/* The structural pass (src/engine/decode/index.c, docs/decoder.md) against the byte scanner, at
 * every level this CPU runs (portable, SSE2, AVX2): the same valid/invalid answer on the vector
 * edges (a quote, a backslash run, a control byte or a multibyte character at every position
 * around the 64-byte blocks, every length 0-300, every byte of a document replaced by each byte
 * that matters to the grammar, nesting at the limit), and on valid bodies an index that agrees
 * with the byte scanner: each bracket's closer and each string's end are where scan_skip ends. */
#include "decode/index.h"
#include "decode/scan.h"
#include "jobguard/utf8.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_suite.h"

static const enum scan_level levels[] = {SCAN_PORTABLE, SCAN_SSE2, SCAN_AVX2};
static const char *const level_names[] = {"scalar", "portable", "sse2", "avx2"};
static size_t n_checked, n_valid;

/* The byte scanner alone, from p: where a value ends. */
static const char *scalar_skip(const char *body, size_t len, const char *p) {
    jg_decode_error err;
    struct scanner sc = {body, p, body + len, 0, NULL, &err, "test", NULL};
    ck_assert_int_eq(scan_skip(&sc), JG_DECODE_OK);
    return sc.p;
}

static void check_index(const struct sindex *ix, const char *body, size_t len) {
    for (size_t i = 0; i < ix->n_open; i++) {
        const char *p = body + ix->open[i];
        ck_assert(*p == '{' || *p == '[');
        ck_assert_ptr_eq(scalar_skip(body, len, p), body + ix->close[i] + 1);
    }
    /* unescaped quotes come in pairs, opening and closing */
    size_t prev = SIZE_MAX;
    for (size_t pos = 0; pos < len; pos++) {
        if (!(ix->quotes[pos / 64] >> (pos % 64) & 1)) continue;
        if (prev == SIZE_MAX) {
            prev = pos;
            continue;
        }
        ck_assert_ptr_eq(sindex_string_end(ix, body + prev), body + pos);
        ck_assert_ptr_eq(scalar_skip(body, len, body + prev), body + pos + 1);
        prev = SIZE_MAX;
    }
    ck_assert(prev == SIZE_MAX);
}

/* Every level says what the byte scanner says about body[0..len); the index of a valid body
 * agrees with the byte scanner. The body is copied to a buffer of exactly len bytes so that
 * ASan and valgrind see any read past it. */
static void same(const char *src, size_t len) {
    char *body = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(body);
    memcpy(body, src, len);
    jg_decode_error err;
    bool want = scan_validate_at(body, len, "test", &err, SCAN_SCALAR) == JG_DECODE_OK;
    bool utf8_want = true;
    for (size_t i = 0; i < len;) { /* the reference UTF-8 answer: the scalar decoder */
        uint32_t r;
        size_t w = jg_utf8_decode((const unsigned char *)body + i, len - i, &r);
        if (!w) {
            utf8_want = false;
            break;
        }
        i += w;
    }
    for (size_t l = 0; l < sizeof levels / sizeof *levels; l++) {
        enum scan_level lv = scan_level_supported(levels[l]);
        struct sindex ix;
        bool got = sindex_build(&ix, body, len, lv);
        ck_assert_msg(got == want, "%s says %s, the byte scanner %s, on %zu bytes: %.*s",
                      level_names[lv], got ? "valid" : "invalid", want ? "valid" : "invalid", len,
                      (int)(len > 300 ? 300 : len), body);
        ck_assert_msg(sindex_utf8_valid(body, len, lv) == utf8_want, "%s UTF-8 on %.*s",
                      level_names[lv], (int)len, body);
        if (got) {
            check_index(&ix, body, len);
            sindex_free(&ix);
        }
    }
    n_checked++;
    n_valid += want;
    free(body);
}

static void same_str(const char *s) {
    same(s, strlen(s));
}

/* "[" + pad filler bytes + middle + "]" for every pad from 0 to 140: the middle crosses
 * every position of two and a half blocks. */
static void every_offset(const char *head, const char *middle, const char *tail) {
    char buf[512];
    for (int pad = 0; pad <= 140; pad++) {
        int n = snprintf(buf, sizeof buf, "%s%*s%s%s", head, pad, "", middle, tail);
        for (int i = (int)strlen(head); i < (int)strlen(head) + pad; i++)
            buf[i] = 'a';
        same(buf, (size_t)n);
    }
}

START_TEST(quotes_and_backslashes_at_every_position) {
    static const char *const middles[] = {
        "",
        "\\\"",
        "\\\\",
        "\\\\\\\"",
        "\\\\\\\\",
        "\\\\\\",
        "\\",
        "\\n",
        "\\/",
        "\\b\\f\\r\\t",
        "\\u00e9",
        "\\u00E9x",
        "\\u12",
        "\\u12g4",
        "\\ud83d\\ude00",
        "\\ud83d",
        "\\ude00",
        "\\ud83d\\u0041",
        "\\ud83dx",
        "\\x",
        "\\'",
        "\"",
        "\"\"",
        "\\\\\"",
        "\\\"\\\"\\\"",
    };
    for (size_t i = 0; i < sizeof middles / sizeof *middles; i++) {
        every_offset("[\"", middles[i], "\"]");
        every_offset("{\"", middles[i], "\":1}");
        every_offset(" \"", middles[i], "\" ");
    }
}
END_TEST

START_TEST(escape_runs_across_blocks) {
    char buf[600];
    for (int pad = 50; pad <= 140; pad++)
        for (int run = 1; run <= 70; run++)
            for (int close = 0; close < 2; close++) {
                int n = 0;
                buf[n++] = '[';
                buf[n++] = '"';
                for (int i = 0; i < pad; i++)
                    buf[n++] = 'a';
                for (int i = 0; i < run; i++)
                    buf[n++] = '\\';
                buf[n++] = close ? '"' : 'n';
                buf[n++] = '"';
                buf[n++] = ']';
                same(buf, (size_t)n);
            }
}
END_TEST

START_TEST(utf8_split_across_blocks) {
    static const char *const seqs[] = {
        "\xc3\xa9",
        "\xe2\x82\xac",
        "\xf0\x9f\x98\x80",
        "\xf4\x8f\xbf\xbf",
        "\xdf\xbf",
        "\xef\xbf\xbf",
        "\xed\x9f\xbf",
        "\xee\x80\x80",
        /* invalid: */
        "\xc3",
        "\xe2\x82",
        "\xf0\x9f\x98",
        "\x80",
        "\xbf\xbf",
        "\xc0\x80",
        "\xc1\xbf",
        "\xe0\x80\x80",
        "\xe0\x9f\xbf",
        "\xed\xa0\x80",
        "\xed\xbf\xbf",
        "\xf0\x80\x80\x80",
        "\xf0\x8f\xbf\xbf",
        "\xf4\x90\x80\x80",
        "\xf5\x80\x80\x80",
        "\xff",
        "\xfe",
        "\xc3\xa9\xa9",
        "\xe2\x82\xac\x80",
        "\xc3\x41",
        "\xe2\x41\x82",
    };
    for (size_t i = 0; i < sizeof seqs / sizeof *seqs; i++) {
        every_offset("[\"", seqs[i], "\"]");
        every_offset("[", seqs[i], "]");  /* outside a string: never valid */
        every_offset("[\"", seqs[i], ""); /* at the end of the body */
    }
}
END_TEST

/* UTF-8 is validated from the first block with a byte >= 0x80: a valid sequence early and an
 * invalid one blocks later, or ASCII blocks then an invalid one, at every offset of a block. */
START_TEST(utf8_after_ascii_blocks) {
    char buf[600];
    static const char *const bad[] = {"\xc3", "\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80"};
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++)
        for (int pad = 0; pad < 64; pad++) {
            int n = snprintf(buf, sizeof buf, "[\"\xc3\xa9\",\"%*s%s\",\"%*s\xe2\x82\xac\"]",
                             130 + pad, "", bad[b], 200, "");
            same(buf, (size_t)n);
            n = snprintf(buf, sizeof buf, "[\"%*s%s\"]", 190 + pad, "", bad[b]);
            same(buf, (size_t)n);
            n = snprintf(buf, sizeof buf, "[\"%*s\xc3\xa9\",\"%*s\xe2\x82\xac\"]", 190 + pad, "",
                         100, "");
            same(buf, (size_t)n);
        }
}
END_TEST

START_TEST(controls_and_bytes_outside_strings) {
    for (int c = 1; c < 256; c++) {
        char mid[2] = {(char)c, 0};
        every_offset("[\"", mid, "\"]");
        if (c < 0x20 || c % 8 == 0 || strchr("{}[]:,\" \t\n\r0tfn-\\", c))
            every_offset("[1,", mid, "2]");
    }
}
END_TEST

static const char sample[] =
    "{\"a\":[1,-2.5e+3,0,true,false,null,\"x\\\"y\\u00e9\"],\"b\":{\"c\":{},\"d\":[]},"
    "\"e\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\",\"f\":-0.0E-1,\"g\":[[{\"h\":[]}]],"
    "\"i\":123456789012345678901234567890,\"j\" : [ 1 , 2 ] ,\t\"k\"\n:\r\"\\/\"}";

START_TEST(every_length_0_to_300) {
    char buf[301];
    /* prefixes of a valid document, and the document padded with whitespace or garbage */
    size_t n = sizeof sample - 1;
    for (size_t len = 0; len <= 300; len++) {
        size_t k = len < n ? len : n;
        memcpy(buf, sample, k);
        same(buf, k);
        memset(buf + k, ' ', len - k);
        same(buf, len);
        if (len > k) {
            buf[len - 1] = 'x';
            same(buf, len);
        }
        /* a string of every length */
        buf[0] = '"';
        memset(buf + 1, 'q', len > 2 ? len - 2 : 0);
        if (len >= 2) buf[len - 1] = '"';
        same(buf, len);
    }
    ck_assert_uint_gt(n_checked, 1000);
    ck_assert_uint_gt(n_valid, 300);
}
END_TEST

START_TEST(every_byte_replaced) {
    static const char subs[] = "{}[]:,\" \t\\0159-+.eEtfnuxa/\x01\x0c\x1a\x1f\x7f\x80\xc3";
    size_t n = sizeof sample - 1;
    char buf[sizeof sample];
    for (size_t i = 0; i < n; i++)
        for (size_t s = 0; s < sizeof subs - 1; s++) {
            memcpy(buf, sample, n);
            buf[i] = subs[s];
            same(buf, n);
        }
    for (size_t i = 0; i < n; i++) { /* a byte removed */
        memcpy(buf, sample, i);
        memcpy(buf + i, sample + i + 1, n - i - 1);
        same(buf, n - 1);
    }
}
END_TEST

START_TEST(scalars) {
    static const char *const docs[] = {
        "0",
        "-0",
        "1",
        "-",
        "01",
        "-01",
        "1.",
        "1.5",
        ".5",
        "1e",
        "1e+",
        "1e5",
        "1E-5",
        "1.5e",
        "true",
        "tru",
        "truex",
        "true1",
        "false",
        "null",
        "nul",
        "nulll",
        "[true,false,null]",
        "[1true]",
        "[1\"a\"]",
        "[1 2]",
        "[1,]",
        "[,1]",
        "{\"a\"}",
        "{\"a\":}",
        "{\"a\":1,}",
        "{,}",
        "{1:2}",
        "{\"a\" 1}",
        "[]]",
        "[[]",
        "{}}",
        "{]",
        "[}",
        "\"\"",
        "",
        " ",
        "  1  ",
        "1 1",
        "{} {}",
        "[\"a\":1]",
        "{\"a\",1}",
        "[-]",
        "[--1]",
        "[1e1.5]",
        "[0x10]",
        "[Infinity]",
        "[NaN]",
        "[+1]",
        "[1.0e+01]",
        "\xef\xbb\xbf{}",
        "{\"\":\"\"}",
        "[\"\\u0000\"]",
        "1,2",
        "{},{}",
        "[] , []",
        "\"a\",\"b\"",
        "{}:",
        "1:2",
        "[1]]",
        "{\"a\":1}}",
        ",",
        ":",
        "{\"a\":{\"b\":[1,{\"c\":2},3]},\"d\":[]}",
        "{\"a\":[1,\"b\":2]}",
        "[{\"a\":1,2}]",
        "[1\x0c"
        "2]",
        "[1\x1a"
        "2]",
        "{\"a\"\x1a"
        "1}",
        "[\"a\"\x0c\"b\"]",
    };
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++)
        same_str(docs[i]);
}
END_TEST

/* Every document of up to 6 bytes over the bytes that make JSON's grammar: whatever the bit
 * masks accept, the byte scanner must accept, and the other way round. */
START_TEST(every_short_document) {
    static const char alphabet[] = "{}[]:,\"1 ";
    enum { K = sizeof alphabet - 1, MAXLEN = 6 };
    char buf[MAXLEN];
    size_t before = n_valid;
    for (int len = 1; len <= MAXLEN; len++) {
        int idx[MAXLEN] = {0};
        for (;;) {
            for (int i = 0; i < len; i++)
                buf[i] = alphabet[idx[i]];
            same(buf, (size_t)len);
            int i = 0;
            while (i < len && ++idx[i] == K)
                idx[i++] = 0;
            if (i == len) break;
        }
    }
    ck_assert_uint_gt(n_valid - before, 1000); /* many of them are valid: the test sees both */
}
END_TEST

START_TEST(depth_limit) {
    for (int depth = 2040; depth <= 2050; depth++) {
        size_t n = 0;
        char *buf = malloc((size_t)depth * 2 + 2);
        for (int i = 0; i < depth; i++)
            buf[n++] = '[';
        for (int i = 0; i < depth; i++)
            buf[n++] = ']';
        same(buf, n);
        buf[depth] = '1'; /* a value in the innermost array: unbalanced */
        same(buf, n);
        free(buf);
    }
}
END_TEST

/* Every case's review and a pseudo-random set of one-byte mutations of it. */
static const char *cases_dir;

START_TEST(case_reviews_and_mutations) {
    DIR *d = opendir(cases_dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    unsigned seed = 12345;
    int files = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s/review.json", cases_dir, e->d_name);
        size_t len;
        char *body = slurp(path, &len);
        if (!body) continue;
        files++;
        same(body, len);
        static const char subs[] = "{}[]:,\"\\ 0a\x01\x80";
        for (int m = 0; m < 8 && len; m++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            char was = body[at];
            body[at] = subs[(seed >> 4) % (sizeof subs - 1)];
            same(body, len);
            body[at] = was;
        }
        free(body);
    }
    closedir(d);
    ck_assert_int_gt(files, 50);
}
END_TEST

START_TEST(levels_fall_back_to_what_the_cpu_has) {
    ck_assert_int_eq(scan_level_supported(SCAN_SCALAR), SCAN_SCALAR);
    ck_assert_int_eq(scan_level_supported(SCAN_PORTABLE), SCAN_PORTABLE);
    ck_assert_int_le(scan_level_supported(SCAN_AVX2), SCAN_AVX2);
}
END_TEST

int main(int argc, char **argv) {
    cases_dir = argc > 1 ? argv[1] : "tests/cases";
    Suite *s = suite_create("scanner");
    TCase *tc = tcase_create("scanner");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, quotes_and_backslashes_at_every_position);
    tcase_add_test(tc, escape_runs_across_blocks);
    tcase_add_test(tc, utf8_split_across_blocks);
    tcase_add_test(tc, utf8_after_ascii_blocks);
    tcase_add_test(tc, controls_and_bytes_outside_strings);
    tcase_add_test(tc, every_length_0_to_300);
    tcase_add_test(tc, every_byte_replaced);
    tcase_add_test(tc, scalars);
    tcase_add_test(tc, every_short_document);
    tcase_add_test(tc, depth_limit);
    tcase_add_test(tc, case_reviews_and_mutations);
    tcase_add_test(tc, levels_fall_back_to_what_the_cpu_has);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
