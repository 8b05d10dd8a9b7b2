#ifndef JOBGUARD_DECODE_INDEX_H
#define JOBGUARD_DECODE_INDEX_H
/* The structural pass (docs/decoder.md, "The structural pass"): validates a whole body at a few
 * instructions per byte, 64 bytes at a time, in the manner of simdjson's stage 1 (quotes,
 * backslashes and escape runs, structural characters, control bytes classified per block; the
 * in-string mask by prefix-xor; UTF-8 by the lookup-table method under AVX2), checks the grammar
 * once per structural character, and leaves an index with which the scanner (scan.h) skips any
 * object, array or string in O(log n) instead of byte by byte.
 *
 * It only ever says "valid": on any problem (or out of memory) it gives up and the byte scanner
 * runs alone as before, so every message, limit and decision stays the byte scanner's. Internal to
 * src/engine/decode/. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How the structural pass classifies bytes: the best the CPU has, unless jg_scanner_force
 * (decode.h) named one. SCAN_SCALAR is no pass at all: the byte scanner alone. */
enum scan_level { SCAN_SCALAR, SCAN_PORTABLE, SCAN_SSE2, SCAN_AVX2 };

struct sindex {
    const char *body;
    size_t len;
    uint64_t *quotes;       /* unescaped '"' bit per byte, one word per 64 bytes */
    uint32_t *open, *close; /* offsets of every '{' and '[' in order, and of its closer */
    size_t n_open, cap_open;
    size_t hint; /* where the last lookup ended: readers mostly move forward */
};

/* The level in force (jg_scanner_force, then the CPU). */
enum scan_level scan_level_default(void);
/* Below this many bytes the byte scanner alone is cheaper (bench/README.md: on the 3.9 KB
 * review the pass costs more than the skipping saves, since the readers read most of it). */
#define SCAN_INDEX_MIN_BYTES 6144
/* The level for a body of len bytes: SCAN_SCALAR below SCAN_INDEX_MIN_BYTES unless
 * jg_scanner_force named a level, else scan_level_default(). */
enum scan_level scan_level_for(size_t len);
/* The best level this CPU and build can run that is at most `want`. */
enum scan_level scan_level_supported(enum scan_level want);

/* Validates body[0..len) as one JSON value (exactly what scan_validate accepts) and indexes it.
 * True: valid, index built (free it with sindex_free). False: invalid, out of memory or level
 * SCAN_SCALAR; nothing to free. */
bool sindex_build(struct sindex *ix, const char *body, size_t len, enum scan_level level);
void sindex_free(struct sindex *ix);

/* The matching closer of the '{' or '[' at p, or NULL if p is not an indexed opener. */
const char *sindex_close(struct sindex *ix, const char *p);
/* The closing quote of the string whose opening quote is at p. */
const char *sindex_string_end(const struct sindex *ix, const char *p);

/* Only UTF-8 (the pass's first part), for tests: whether body[0..len) is valid UTF-8. */
bool sindex_utf8_valid(const char *body, size_t len, enum scan_level level);

#endif
