/* libFuzzer target: the one reader (src/files/reader.c, yaml.c; docs/input.md) on one file.
 *
 * The input is written to a memfd and read with jg_reader as the file /proc/self/fd/N, to the
 * end. Asserted (beyond no sanitizer report, no leak, no hang):
 *  - every call ends: a document, the end, or an error "<path>:..." after which reading goes on;
 *    fewer calls than 2 bytes of input each (plus a few);
 *  - a document is non-empty, within JG_READER_MAX_DOC, names the file, counts its Lists' items
 *    0, 1, 2... ;
 *  - YAML (the first byte after white space is not '{' or '['): every document is JSON jansson
 *    reads (integers as reals: kubectl writes 1e20 as 100000000000000000000, past jansson's
 *    int64; a key holding "\u0000", which jansson cannot hold, is let through), with no duplicate
 *    keys (the conversion keeps the last one);
 *  - JSON, differential: when jansson reads the input as a sequence of objects and arrays (no
 *    duplicate keys, no NUL byte: both ambiguous, see below), the reader yields, for each value,
 *    the elements of its "items" array when it is an object that has one (kubectl's List rule),
 *    else the value itself: the same values (json_equal), in order, with no error.
 * Duplicate keys are left out of the differential because jansson keeps the last "items" while
 * the reader refuses a second one (docs/input.md); a raw NUL ends jansson's input. */
#include "jobguard/reader.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_check.h"

static int memfd = -1;
static char path[64];

static bool is_ws(uint8_t c) {
    return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* As the reader decides: JSON when the first byte after white space (and a UTF-8 byte order
 * mark) is '{' or '[', or there is none. */
static bool json_format(const uint8_t *d, size_t n) {
    size_t i = 0;
    while (i < n && is_ws(d[i]))
        i++;
    if (n - i >= 3 && memcmp(d + i, "\xEF\xBB\xBF", 3) == 0) {
        i += 3;
        while (i < n && is_ws(d[i]))
            i++;
    }
    return i == n || d[i] == '{' || d[i] == '[';
}

/* The documents the reader must yield from a JSON input, as jansson reads it; NULL when jansson
 * does not read it as a sequence of objects and arrays. */
static json_t *expected_json(const uint8_t *d, size_t n) {
    if (memchr(d, '\0', n)) return NULL;
    json_t *want = json_array();
    size_t off = 0;
    for (;;) {
        while (off < n && is_ws(d[off]))
            off++;
        if (off == n) return want;
        if (d[off] != '{' && d[off] != '[') break;
        json_error_t e;
        json_t *v = json_loadb((const char *)d + off, n - off,
                               JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &e);
        if (!v) break;
        off += (size_t)e.position;
        json_t *items = json_is_object(v) ? json_object_get(v, "items") : NULL;
        if (json_is_array(items))
            json_array_extend(want, items);
        else
            json_array_append(want, v);
        json_decref(v);
    }
    json_decref(want);
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (memfd < 0) {
        memfd = memfd_create("fuzz_reader", MFD_CLOEXEC);
        CHECK(memfd >= 0);
        snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
    }
    CHECK(ftruncate(memfd, 0) == 0);
    CHECK(pwrite(memfd, data, size, 0) == (ssize_t)size);

    bool json = json_format(data, size);
    json_t *want = json ? expected_json(data, size) : NULL;

    const char *paths[] = {path};
    jg_reader *r = jg_reader_open(paths, 1);
    CHECK(r != NULL);
    char err[1024];
    struct jg_doc d;
    size_t calls = 0, got = 0, errors = 0;
    size_t doc = 0;
    long next_item = 0;
    for (;;) {
        CHECK(++calls <= 2 * size + 8);
        int s = jg_reader_next(r, &d, err, sizeof err);
        CHECK(s >= -1 && s <= 1);
        if (s == 0) break;
        if (s < 0) {
            CHECK(strncmp(err, path, strlen(path)) == 0 && strchr(err, '\n') == NULL);
            errors++;
            continue;
        }
        CHECK(d.json != NULL && d.len > 0 && d.len <= JG_READER_MAX_DOC);
        CHECK(strcmp(d.source, path) == 0 && d.line >= 1);
        /* items are numbered from 0 within their document */
        if (d.doc != doc) {
            CHECK(d.doc > doc);
            doc = d.doc;
            next_item = 0;
        }
        if (d.item >= 0) {
            CHECK(d.item >= next_item); /* an item that failed to convert leaves a gap */
            next_item = d.item + 1;
        }
        if (!json) {
            json_error_t e;
            json_t *v = json_loadb(d.json, d.len,
                                   JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES |
                                       JSON_DECODE_INT_AS_REAL,
                                   &e);
            /* jansson cannot hold a key with a NUL (valid JSON: "\u0000") */
            bool nul_key = !v && strstr(e.text, "NUL byte in object key") != NULL;
            if (!v && !nul_key)
                fprintf(stderr, "YAML document not read by jansson: %s: %.*s\n", e.text,
                        (int)(d.len > 300 ? 300 : d.len), d.json);
            CHECK(v != NULL || nul_key);
            json_decref(v);
        } else if (want) {
            CHECK(got < json_array_size(want));
            json_error_t e;
            json_t *v = json_loadb(d.json, d.len, JSON_DECODE_ANY, &e);
            CHECK(v != NULL);
            CHECK(json_equal(v, json_array_get(want, got)));
            json_decref(v);
        }
        got++;
    }
    if (want) {
        CHECK(errors == 0);
        CHECK(got == json_array_size(want));
        json_decref(want);
    }
    jg_reader_close(r);
    return 0;
}
