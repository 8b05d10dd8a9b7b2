/* decode/index: the structural pass (index.h). One pass over the body, 64 bytes at a time:
 *   1. classify: bit masks of quotes, backslashes, whitespace, structural characters ({}[]:,) and
 *      control bytes (SSE2 or AVX2 compares and movemask; a table per byte elsewhere), and
 *      whether the block has a byte >= 0x80;
 *   2. escapes: the characters escaped by an odd run of backslashes (carried across blocks), so
 *      that the unescaped quotes are known; each escape in a string is checked where it is;
 *   3. the in-string mask: prefix-xor of the unescaped quotes (carried across blocks; one
 *      carry-less multiply under AVX2); a control byte in it is an error;
 *   4. indexed positions: structural characters outside strings, opening quotes and the first byte
 *      of every literal or number; the grammar is checked once per indexed position by one load
 *      from a table indexed by state and byte (quotes, colons and commas, most positions, need
 *      nothing else; brackets use a stack of open brackets, literals and numbers are checked
 *      where they start);
 *   5. UTF-8 from the first block with a byte >= 0x80 (nothing for an ASCII body): the
 *      lookup-table method (Keiser and Lemire) 32 bytes at a time under AVX2, else an ASCII test
 *      16 or 8 bytes at a time and the scalar decoder on the rest.
 * Non-ASCII or any other byte outside strings is part of a literal or number and fails there. */
#include "index.h"

#include "jobguard/alloc.h"
#include "jobguard/buf.h"
#include "jobguard/decode.h"
#include "jobguard/utf8.h"

#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#if defined(__SSE2__) && !defined(JG_NO_SIMD)
#define HAVE_X86 1
#include <immintrin.h>
#endif
#endif
#ifndef HAVE_X86
#define HAVE_X86 0
#endif

/* ---- levels ---- */

#if HAVE_X86
static bool cpu_has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul") &&
           __builtin_cpu_supports("bmi");
}
#endif

enum scan_level scan_level_supported(enum scan_level want) {
#if HAVE_X86
    if (want == SCAN_AVX2 && !cpu_has_avx2()) want = SCAN_SSE2;
    return want;
#else
    return want > SCAN_PORTABLE ? SCAN_PORTABLE : want;
#endif
}

static int forced = -1; /* the level jg_scanner_force named, or -1: the CPU's choice */

static const char *const level_names[] = {"scalar", "portable", "sse2", "avx2"};

bool jg_scanner_force(const char *level) {
    int want = -1;
    if (level) {
        for (int i = 0; i < (int)(sizeof level_names / sizeof *level_names); i++)
            if (!strcmp(level, level_names[i])) want = i;
        if (want < 0) return false;
        want = (int)scan_level_supported((enum scan_level)want);
    }
    __atomic_store_n(&forced, want, __ATOMIC_RELAXED);
    return true;
}

const char *jg_scanner_level_name(void) {
    return level_names[scan_level_default()];
}

enum scan_level scan_level_default(void) {
    int f = __atomic_load_n(&forced, __ATOMIC_RELAXED);
    if (f >= 0) return (enum scan_level)f;
    static int cached = -1; /* benign race: every thread computes the same value */
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v >= 0) return (enum scan_level)v;
    enum scan_level want = scan_level_supported(SCAN_AVX2);
    /* Without SSE2/AVX2 (arm64, -Dsimd=false) the byte scanner alone is the automatic choice: the
     * portable pass costs three times as much on the 16.7 KB review (595,670 engine instructions
     * against 197,968, callgrind; 60 against 31 µs). It stays for tests and forced runs. */
    if (want == SCAN_PORTABLE) want = SCAN_SCALAR;
    __atomic_store_n(&cached, (int)want, __ATOMIC_RELAXED);
    return want;
}

enum scan_level scan_level_for(size_t len) {
    enum scan_level l = scan_level_default();
    return len < SCAN_INDEX_MIN_BYTES && __atomic_load_n(&forced, __ATOMIC_RELAXED) < 0
               ? SCAN_SCALAR
               : l;
}

/* ---- bits ---- */

struct blockbits {
    uint64_t quote, bslash, ws, op, ctrl;
    bool high; /* a byte >= 0x80 (UTF-8 is validated from the first block that has one) */
};

/* Bit i of the result is the xor of bits 0..i of x: 1 from an opening quote up to (not
 * including) its closing quote. (A carry-less multiply by all ones computes the same.) */
static inline uint64_t prefix_xor(uint64_t x) {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

#if HAVE_X86
/* The same as one carry-less multiply by all ones (every CPU with AVX2 has PCLMULQDQ). */
__attribute__((target("pclmul,sse2"))) static inline uint64_t prefix_xor_clmul(uint64_t x) {
    __m128i r = _mm_clmulepi64_si128(_mm_set_epi64x(0, (long long)x), _mm_set1_epi8(-1), 0);
    return (uint64_t)_mm_cvtsi128_si64(r);
}
#endif

/* The bytes escaped by a backslash: those right after an odd-length run of backslashes. Runs
 * are told apart by the parity of their start; adding the run's start to the run carries past
 * its end, and the end's parity says whether the run was odd. *odd_carry: a run of odd length
 * ended the previous block (so bit 0 is escaped, or a run continuing there flips parity). */
static inline uint64_t escaped_bits(uint64_t bs, uint64_t *odd_carry) {
    const uint64_t even = 0x5555555555555555ULL, odd = ~even;
    uint64_t starts = bs & ~(bs << 1);
    uint64_t even_start_mask = even ^ *odd_carry;
    uint64_t even_starts = starts & even_start_mask, odd_starts = starts & ~even_start_mask;
    uint64_t even_carries = bs + even_starts;
    uint64_t odd_carries;
    bool ends_odd = __builtin_add_overflow(bs, odd_starts, &odd_carries);
    odd_carries |= *odd_carry;
    *odd_carry = ends_odd;
    uint64_t even_carry_ends = even_carries & ~bs, odd_carry_ends = odd_carries & ~bs;
    return (even_carry_ends & odd) | (odd_carry_ends & even);
}

/* ---- the grammar, once per indexed position ---- */

/* States: where the last indexed position left the parser. A value's state says what follows
 * the value (AFTER_OBJ, AFTER_ARR or DONE), so the table alone decides every transition but a
 * closing bracket's, which returns to the state saved when the bracket opened. */
enum {
    S_VROOT,         /* the root value */
    S_VOBJ,          /* a member's value, after ':' */
    S_VARR,          /* an element, after ',' */
    S_VARR_OR_CLOSE, /* after '[' */
    S_KEY_OR_CLOSE,  /* after '{' */
    S_KEY,           /* after ',' in an object */
    S_COLON,         /* after a key */
    S_AFTER_OBJ,     /* after a member's value */
    S_AFTER_ARR,     /* after an element */
    S_DONE,          /* after the root value */
    S_ERR = 15
};
/* Classes of the byte at an indexed position. */
enum { K_QUOTE, K_COLON, K_COMMA, K_SCALAR, K_OBJ, K_ARR, K_CLOSE_OBJ, K_CLOSE_ARR };

static unsigned char kind_of[256] = {
    ['"'] = K_QUOTE, [':'] = K_COLON,     [','] = K_COMMA,     ['{'] = K_OBJ,
    ['['] = K_ARR,   ['}'] = K_CLOSE_OBJ, [']'] = K_CLOSE_ARR, /* every other byte: K_SCALAR (3) set
                                                                  below */
};

#define V3(after) after, S_ERR, S_ERR, after, after, after, S_ERR, S_ERR /* a value's row */
/* next[state][kind]: the next state; for an opening bracket, the state after its value (pushed);
 * for a closing bracket, 0 when it may close here (the state is popped). */
static const unsigned char next_state[10][8] = {
    [S_VROOT] = {V3(S_DONE)},
    [S_VOBJ] = {V3(S_AFTER_OBJ)},
    [S_VARR] = {V3(S_AFTER_ARR)},
    [S_VARR_OR_CLOSE] = {S_AFTER_ARR, S_ERR, S_ERR, S_AFTER_ARR, S_AFTER_ARR, S_AFTER_ARR, S_ERR,
                         0},
    [S_KEY_OR_CLOSE] = {S_COLON, S_ERR, S_ERR, S_ERR, S_ERR, S_ERR, 0, S_ERR},
    [S_KEY] = {S_COLON, S_ERR, S_ERR, S_ERR, S_ERR, S_ERR, S_ERR, S_ERR},
    [S_COLON] = {S_ERR, S_VOBJ, S_ERR, S_ERR, S_ERR, S_ERR, S_ERR, S_ERR},
    [S_AFTER_OBJ] = {S_ERR, S_ERR, S_KEY, S_ERR, S_ERR, S_ERR, 0, S_ERR},
    [S_AFTER_ARR] = {S_ERR, S_ERR, S_VARR, S_ERR, S_ERR, S_ERR, S_ERR, 0},
    [S_DONE] = {S_ERR, S_ERR, S_ERR, S_ERR, S_ERR, S_ERR, S_ERR, S_ERR},
};
#undef V3

struct grammar {
    unsigned state;
    int depth;
    size_t u_done;    /* position of the 'u' of a low surrogate already checked with its pair */
    size_t high_from; /* the first block with a byte >= 0x80 (SIZE_MAX: none) */
    uint32_t stack[JG_MAX_JSON_DEPTH + 1]; /* open index << 4 | the state after the value */
};

static bool is_hex(unsigned char c) {
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static bool hex4(const unsigned char *p, uint32_t *v) {
    *v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = p[i];
        if (!is_hex(c)) return false;
        *v = *v << 4 | (uint32_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return true;
}

/* Every escaped character in a string: one of "\/bfnrt, or u with four hex digits, surrogates
 * paired as the byte scanner requires. */
static bool check_escapes(struct grammar *g, const struct sindex *ix, uint64_t esc, size_t base) {
    const unsigned char *b = (const unsigned char *)ix->body;
    size_t len = ix->len;
    while (esc) {
        size_t pos = base + (size_t)__builtin_ctzll(esc);
        esc &= esc - 1;
        if (pos >= len) return false;
        switch (b[pos]) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
            continue;
        case 'u':
            break;
        default:
            return false;
        }
        if (pos == g->u_done) continue;
        uint32_t u, lo;
        if (len - pos < 5 || !hex4(b + pos + 1, &u)) return false;
        if (u >= 0xDC00 && u <= 0xDFFF) return false;
        if (u >= 0xD800 && u <= 0xDBFF) {
            if (len - pos < 11 || b[pos + 5] != '\\' || b[pos + 6] != 'u' ||
                !hex4(b + pos + 7, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                return false;
            g->u_done = pos + 6;
        }
    }
    return true;
}

static inline bool is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}

/* The end of the literal or number at p, or NULL. */
static const unsigned char *scalar_end(const unsigned char *p, const unsigned char *end) {
    size_t n = (size_t)(end - p);
    switch (*p) {
    case 't':
        return JG_LIT_PREFIX(p, n, "true") ? p + JG_LIT_LEN("true") : NULL;
    case 'f':
        return JG_LIT_PREFIX(p, n, "false") ? p + JG_LIT_LEN("false") : NULL;
    case 'n':
        return JG_LIT_PREFIX(p, n, "null") ? p + JG_LIT_LEN("null") : NULL;
    default:
        break;
    }
    if (p < end && *p == '-') p++;
    if (p >= end || !is_digit(*p)) return NULL;
    if (*p == '0') {
        p++;
    } else {
        while (p < end && is_digit(*p))
            p++;
    }
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !is_digit(*p)) return NULL;
        while (p < end && is_digit(*p))
            p++;
    }
    if (p < end && (*p | 0x20) == 'e') {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || !is_digit(*p)) return NULL;
        while (p < end && is_digit(*p))
            p++;
    }
    return p;
}

/* A byte that may follow a literal or number: whitespace, a structural character or a quote
 * (then the grammar refuses the two values in a row). */
static inline bool ends_scalar(unsigned char c) {
    switch (c) {
    case ' ':
    case '\t':
    case '\n':
    case '\r':
    case ',':
    case ':':
    case '[':
    case ']':
    case '{':
    case '}':
    case '"':
        return true;
    default:
        return false;
    }
}

/* Grows the index when it is full (one more opener must fit). */
static bool grow(struct sindex *ix) {
    size_t cap = ix->cap_open * 2;
    uint32_t *o = jg_realloc(ix->open, cap * sizeof *o);
    if (!o) return false;
    ix->open = o;
    uint32_t *c = jg_realloc(ix->close, cap * sizeof *c);
    if (!c) return false;
    ix->close = c;
    ix->cap_open = cap;
    return true;
}

/* The grammar's table, by state and byte: trans[state << 8 | byte]. An entry below T_SLOW is
 * the next state << 8 (a quote, colon or comma: most positions). Above: T_SCALAR | the state after
 * the literal or number; T_OPEN | the state inside the bracket << 4 | the state after its value
 * (pushed); T_CLOSE (the state is popped); T_ERR refuses the byte there. Built from next_state and
 * kind_of by init_classes. */
enum { T_SLOW = 0x1000, T_SCALAR = 0x1000, T_OPEN = 0x2000, T_CLOSE = 0x4000, T_ERR = 0xF000 };
static uint16_t trans[10 << 8];

/* Whether the literal or number at pos is well formed and ends where a value may end. The other
 * positions are the pass's own (index_pass.h). */
static inline bool scalar_ok(const struct sindex *ix, size_t pos) {
    const unsigned char *b = (const unsigned char *)ix->body, *end = b + ix->len,
                        *e = scalar_end(b + pos, end);
    return e && (e == end || ends_scalar(*e));
}

/* ---- classifiers, one per level ---- */

enum { C_QUOTE = 1, C_BSLASH = 2, C_WS = 4, C_OP = 8, C_CTRL = 16 };
static unsigned char byte_class[256];

static void init_classes(void) {
    static int done;
    if (__atomic_load_n(&done, __ATOMIC_ACQUIRE)) return;
    unsigned char t[256] = {0};
    for (int c = 0; c < 0x20; c++)
        t[c] |= C_CTRL;
    t['"'] |= C_QUOTE;
    t['\\'] |= C_BSLASH;
    t[' '] |= C_WS, t['\t'] |= C_WS, t['\n'] |= C_WS, t['\r'] |= C_WS;
    t['{'] |= C_OP, t['}'] |= C_OP, t['['] |= C_OP, t[']'] |= C_OP, t[':'] |= C_OP, t[','] |= C_OP;
    memcpy(byte_class, t, sizeof t); /* every thread writes the same bytes */
    for (int c = 0; c < 256; c++)
        if (!strchr("\":,{[}]", c) || c == 0) kind_of[c] = K_SCALAR;
    for (unsigned st = 0; st < 10; st++)
        for (unsigned c = 0; c < 256; c++) {
            unsigned k = kind_of[c], nx = next_state[st][k], v;
            if (nx == S_ERR)
                v = T_ERR;
            else if (k < K_SCALAR)
                v = nx << 8;
            else if (k == K_SCALAR)
                v = T_SCALAR | nx;
            else if (k == K_OBJ)
                v = T_OPEN | S_KEY_OR_CLOSE << 4 | nx;
            else if (k == K_ARR)
                v = T_OPEN | S_VARR_OR_CLOSE << 4 | nx;
            else
                v = T_CLOSE;
            trans[st << 8 | c] = (uint16_t)v;
        }
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}

static inline void classify_portable(const unsigned char *p, struct blockbits *m) {
    uint64_t q = 0, bs = 0, ws = 0, op = 0, ct = 0;
    for (int i = 0; i < 64; i++) {
        uint64_t c = byte_class[p[i]];
        q |= (c & 1) << i;
        bs |= (c >> 1 & 1) << i;
        ws |= (c >> 2 & 1) << i;
        op |= (c >> 3 & 1) << i;
        ct |= (c >> 4 & 1) << i;
    }
    uint64_t h = 0;
    for (int i = 0; i < 64; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        h |= v;
    }
    *m = (struct blockbits){q, bs, ws, op, ct, (h & 0x8080808080808080ULL) != 0};
}

#if HAVE_X86
static inline void classify_sse2(const unsigned char *p, struct blockbits *m) {
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                  ctrl = _mm_set1_epi8(0x1f), sp = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t'),
                  nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'), lower = _mm_set1_epi8(0x20),
                  open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}'), colon = _mm_set1_epi8(':'),
                  comma = _mm_set1_epi8(',');
    *m = (struct blockbits){0};
    __m128i all = _mm_setzero_si128();
    for (int k = 0; k < 4; k++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
        all = _mm_or_si128(all, v);
        __m128i l = _mm_or_si128(v, lower); /* '[' -> '{', ']' -> '}' */
        __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, tab)),
                                  _mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, cr)));
        __m128i ob = _mm_cmpeq_epi8(l, open);
        __m128i op = _mm_or_si128(_mm_or_si128(ob, _mm_cmpeq_epi8(l, close)),
                                  _mm_or_si128(_mm_cmpeq_epi8(v, colon), _mm_cmpeq_epi8(v, comma)));
        int sh = 16 * k;
        m->quote |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) << sh;
        m->bslash |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, bslash)) << sh;
        m->ws |= (uint64_t)(unsigned)_mm_movemask_epi8(ws) << sh;
        m->op |= (uint64_t)(unsigned)_mm_movemask_epi8(op) << sh;
        m->ctrl |=
            (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v, ctrl), ctrl))
            << sh;
    }
    m->high = _mm_movemask_epi8(all) != 0;
}

#define AVX2 __attribute__((target("avx2")))

AVX2 static inline uint64_t mask64(__m256i lo, __m256i hi) {
    return (uint64_t)(uint32_t)_mm256_movemask_epi8(lo) |
           (uint64_t)(uint32_t)_mm256_movemask_epi8(hi) << 32;
}

/* Whitespace and structural characters by two 16-byte table lookups on the low nibble (the
 * method of simdjson): a byte is whitespace when the table entry at its low nibble is the byte
 * itself, structural when the entry equals the byte with bit 5 set ('[' -> '{', ']' -> '}'). The
 * other entries match no byte with that low nibble; the few control bytes that pass for
 * structural this way (0x0c, 0x1a) fail as literals outside strings and as controls inside. */
static const uint8_t ws_table[16] = {' ', 100,  100,  100, 17,  100,  113, 2,
                                     100, '\t', '\n', 112, 100, '\r', 100, 100};
static const uint8_t op_table[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ':', '{', ',', '}', 0, 0};

AVX2 static inline void classify_avx2(const unsigned char *p, struct blockbits *m) {
    const __m256i wst = _mm256_broadcastsi128_si256(
                      _mm_loadu_si128((const __m128i *)(const void *)ws_table)),
                  opt = _mm256_broadcastsi128_si256(
                      _mm_loadu_si128((const __m128i *)(const void *)op_table));
    const __m256i quote = _mm256_set1_epi8('"'), bslash = _mm256_set1_epi8('\\'),
                  ctrl = _mm256_set1_epi8(0x1f), lower = _mm256_set1_epi8(0x20);
    __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)p),
            v1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
    __m256i l0 = _mm256_or_si256(v0, lower), l1 = _mm256_or_si256(v1, lower);
    m->quote = mask64(_mm256_cmpeq_epi8(v0, quote), _mm256_cmpeq_epi8(v1, quote));
    m->bslash = mask64(_mm256_cmpeq_epi8(v0, bslash), _mm256_cmpeq_epi8(v1, bslash));
    m->ws = mask64(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(wst, v0), v0),
                   _mm256_cmpeq_epi8(_mm256_shuffle_epi8(wst, v1), v1));
    m->op = mask64(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(opt, v0), l0),
                   _mm256_cmpeq_epi8(_mm256_shuffle_epi8(opt, v1), l1));
    /* control bytes are rare (compact JSON has none): their mask only when there is one */
    __m256i c0 = _mm256_cmpeq_epi8(_mm256_max_epu8(v0, ctrl), ctrl),
            c1 = _mm256_cmpeq_epi8(_mm256_max_epu8(v1, ctrl), ctrl), c = _mm256_or_si256(c0, c1);
    m->ctrl = _mm256_testz_si256(c, c) ? 0 : mask64(c0, c1);
    m->high = _mm256_movemask_epi8(_mm256_or_si256(v0, v1)) != 0;
}
#endif

/* ---- the pass, once per level (index_pass.h) ---- */

#define PASS_NAME pass_portable
#define PASS_TARGET
#define CLASSIFY classify_portable
#define PREFIX_XOR prefix_xor
#include "index_pass.h"
#undef PASS_NAME
#undef PASS_TARGET
#undef CLASSIFY
#undef PREFIX_XOR

#if HAVE_X86
#define PASS_NAME pass_sse2
#define PASS_TARGET
#define CLASSIFY classify_sse2
#define PREFIX_XOR prefix_xor
#include "index_pass.h"
#undef PASS_NAME
#undef PASS_TARGET
#undef CLASSIFY
#undef PREFIX_XOR

#define PASS_NAME pass_avx2
#define PASS_TARGET __attribute__((target("avx2,pclmul,bmi")))
#define CLASSIFY classify_avx2
#define PREFIX_XOR prefix_xor_clmul
#include "index_pass.h"
#undef PASS_NAME
#undef PASS_TARGET
#undef CLASSIFY
#undef PREFIX_XOR
#endif

/* ---- UTF-8 ---- */

/* From p on: ASCII runs `step` bytes at a time (ascii_run), every other sequence decoded. */
static bool utf8_scalar_from(const unsigned char *p, const unsigned char *end) {
    while (p < end) {
        if (*p < 0x80) {
            p++;
            continue;
        }
        uint32_t r;
        size_t w = jg_utf8_decode(p, (size_t)(end - p), &r);
        if (!w) return false;
        p += w;
    }
    return true;
}

/* Decodes the run of sequences that starts at p (a byte >= 0x80): where the run ends (at an
 * ASCII byte or end), or NULL at an invalid sequence. */
static inline const unsigned char *non_ascii_run(const unsigned char *p, const unsigned char *end) {
    do {
        uint32_t r;
        size_t w = jg_utf8_decode(p, (size_t)(end - p), &r);
        if (!w) return NULL;
        p += w;
    } while (p < end && *p >= 0x80);
    return p;
}

static bool utf8_portable(const unsigned char *p, const unsigned char *end) {
    while (end - p >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        if (!(v & 0x8080808080808080ULL)) {
            p += 8;
            continue;
        }
        p += __builtin_ctzll(v & 0x8080808080808080ULL) / 8;
        if (!(p = non_ascii_run(p, end))) return false;
    }
    return utf8_scalar_from(p, end);
}

#if HAVE_X86
static bool utf8_sse2(const unsigned char *p, const unsigned char *end) {
    while (end - p >= 16) {
        unsigned hi =
            (unsigned)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(const void *)p));
        if (!hi) {
            p += 16;
            continue;
        }
        p += __builtin_ctz(hi);
        if (!(p = non_ascii_run(p, end))) return false;
    }
    return utf8_scalar_from(p, end);
}

/* The lookup-table method: three 16-entry tables, indexed by the high and low nibble of the
 * previous byte and the high nibble of the current one, each give the errors that pair could
 * be; their AND is nonzero exactly for an invalid pair. A third or fourth byte of a sequence
 * must be a continuation, which the pairs alone cannot see: checked against the bytes two and
 * three back. */
enum {
    TOO_SHORT = 1 << 0,
    TOO_LONG = 1 << 1,
    OVERLONG_3 = 1 << 2,
    TOO_LARGE = 1 << 3,
    SURROGATE = 1 << 4,
    OVERLONG_2 = 1 << 5,
    TOO_LARGE_1000 = 1 << 6,
    OVERLONG_4 = 1 << 6,
    TWO_CONTS = 1 << 7,
    CARRY = TOO_SHORT | TOO_LONG | TWO_CONTS
};

/* indexed by the high nibble of the previous byte */
static const uint8_t utf8_b1_high[16] = {TOO_LONG,
                                         TOO_LONG,
                                         TOO_LONG,
                                         TOO_LONG,
                                         TOO_LONG,
                                         TOO_LONG,
                                         TOO_LONG,
                                         TOO_LONG, /* ASCII */
                                         TWO_CONTS,
                                         TWO_CONTS,
                                         TWO_CONTS,
                                         TWO_CONTS, /* continuation */
                                         TOO_SHORT | OVERLONG_2,
                                         TOO_SHORT,                          /* two-byte lead */
                                         TOO_SHORT | OVERLONG_3 | SURROGATE, /* three-byte lead */
                                         TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4};
/* indexed by the low nibble of the previous byte */
static const uint8_t utf8_b1_low[16] = {CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4,
                                        CARRY | OVERLONG_2,
                                        CARRY,
                                        CARRY,
                                        CARRY | TOO_LARGE,
                                        CARRY | TOO_LARGE | TOO_LARGE_1000,
                                        CARRY | TOO_LARGE | TOO_LARGE_1000,
                                        CARRY | TOO_LARGE | TOO_LARGE_1000,
                                        CARRY | TOO_LARGE | TOO_LARGE_1000,
                                        CARRY | TOO_LARGE | TOO_LARGE_1000,
                                        CARRY | TOO_LARGE | TOO_LARGE_1000,
                                        CARRY | TOO_LARGE | TOO_LARGE_1000,
                                        CARRY | TOO_LARGE | TOO_LARGE_1000,
                                        CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE,
                                        CARRY | TOO_LARGE | TOO_LARGE_1000,
                                        CARRY | TOO_LARGE | TOO_LARGE_1000};
/* indexed by the high nibble of the current byte */
static const uint8_t utf8_b2_high[16] = {TOO_SHORT,
                                         TOO_SHORT,
                                         TOO_SHORT,
                                         TOO_SHORT,
                                         TOO_SHORT,
                                         TOO_SHORT,
                                         TOO_SHORT,
                                         TOO_SHORT,
                                         TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 |
                                             TOO_LARGE_1000 | OVERLONG_4,
                                         TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,
                                         TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
                                         TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
                                         TOO_SHORT,
                                         TOO_SHORT,
                                         TOO_SHORT,
                                         TOO_SHORT};
/* the last three bytes of a chunk that still need continuations are above these */
static const uint8_t utf8_max_tail[32] = {
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,      255,      255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 0xF0 - 1, 0xE0 - 1, 0xC0 - 1};

AVX2 static inline __m256i table16(const uint8_t t[16]) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)t));
}

AVX2 static inline __m256i prev_n(__m256i in, __m256i prev, int n) {
    __m256i t = _mm256_permute2x128_si256(prev, in, 0x21);
    switch (n) {
    case 1:
        return _mm256_alignr_epi8(in, t, 15);
    case 2:
        return _mm256_alignr_epi8(in, t, 14);
    default:
        return _mm256_alignr_epi8(in, t, 13);
    }
}

AVX2 static bool utf8_avx2(const unsigned char *p, const unsigned char *end) {
    const __m256i b1_high = table16(utf8_b1_high), b1_low = table16(utf8_b1_low),
                  b2_high = table16(utf8_b2_high);
    /* the last three bytes of a chunk that still need continuations */
    const __m256i max_value = _mm256_loadu_si256((const __m256i *)(const void *)utf8_max_tail);
    const __m256i nib = _mm256_set1_epi8(0x0F), x80 = _mm256_set1_epi8(-128);
    const __m256i third = _mm256_set1_epi8(0xE0 - 0x80), fourth = _mm256_set1_epi8(0xF0 - 0x80);
    __m256i err = _mm256_setzero_si256(), prev = err, incomplete = err;
    unsigned char tail[32];
    while (p < end) {
        __m256i in;
        if (end - p >= 64) { /* ASCII 64 bytes at a time: no sequence can start or end there */
            __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)p),
                    b = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
            if (!_mm256_movemask_epi8(_mm256_or_si256(a, b))) {
                err = _mm256_or_si256(err, incomplete);
                incomplete = _mm256_setzero_si256();
                prev = b;
                p += 64;
                continue;
            }
        }
        if (end - p >= 32) {
            in = _mm256_loadu_si256((const __m256i *)(const void *)p);
        } else {
            memset(tail, 0, sizeof tail); /* ASCII: a cut sequence is then too short */
            memcpy(tail, p, (size_t)(end - p));
            in = _mm256_loadu_si256((const __m256i *)(const void *)tail);
        }
        p = end - p >= 32 ? p + 32 : end;
        if (!_mm256_movemask_epi8(in)) {
            err = _mm256_or_si256(err, incomplete);
            incomplete = _mm256_setzero_si256();
        } else {
            __m256i p1 = prev_n(in, prev, 1);
            __m256i sc = _mm256_and_si256(
                _mm256_and_si256(
                    _mm256_shuffle_epi8(b1_high, _mm256_and_si256(_mm256_srli_epi16(p1, 4), nib)),
                    _mm256_shuffle_epi8(b1_low, _mm256_and_si256(p1, nib))),
                _mm256_shuffle_epi8(b2_high, _mm256_and_si256(_mm256_srli_epi16(in, 4), nib)));
            __m256i must23 = _mm256_or_si256(_mm256_subs_epu8(prev_n(in, prev, 2), third),
                                             _mm256_subs_epu8(prev_n(in, prev, 3), fourth));
            err = _mm256_or_si256(err, _mm256_xor_si256(_mm256_and_si256(must23, x80), sc));
            incomplete = _mm256_subs_epu8(in, max_value);
        }
        prev = in;
    }
    err = _mm256_or_si256(err, incomplete);
    return _mm256_testz_si256(err, err);
}
#endif

bool sindex_utf8_valid(const char *body, size_t len, enum scan_level level) {
    const unsigned char *p = (const unsigned char *)body, *end = p + len;
    switch (scan_level_supported(level)) {
#if HAVE_X86
    case SCAN_AVX2:
        return utf8_avx2(p, end);
    case SCAN_SSE2:
        return utf8_sse2(p, end);
#endif
    case SCAN_PORTABLE:
        return utf8_portable(p, end);
    default:
        return utf8_scalar_from(p, end);
    }
}

/* ---- the index ---- */

void sindex_free(struct sindex *ix) {
    jg_free(ix->quotes);
    jg_free(ix->open);
    jg_free(ix->close);
    memset(ix, 0, sizeof *ix);
}

bool sindex_build(struct sindex *ix, const char *body, size_t len, enum scan_level level) {
    memset(ix, 0, sizeof *ix);
    level = scan_level_supported(level);
    if (level == SCAN_SCALAR || len == 0 || len > UINT32_MAX / 2) return false;
    ix->body = body;
    ix->len = len;
    ix->cap_open = len / 16 + 16;
    ix->quotes = jg_malloc((len + 63) / 64 * sizeof *ix->quotes);
    ix->open = jg_malloc(ix->cap_open * sizeof *ix->open);
    ix->close = jg_malloc(ix->cap_open * sizeof *ix->close);
    init_classes();
    struct grammar gr, *g = &gr; /* 8 KiB of stack, as deep as a few frames of scan_skip */
    bool ok = ix->quotes && ix->open && ix->close;
    if (ok) {
        g->state = S_VROOT << 8;
        g->depth = 0;
        g->u_done = SIZE_MAX;
        g->high_from = SIZE_MAX;
        g->stack[0] = 0;
        switch (level) {
#if HAVE_X86
        case SCAN_AVX2:
            ok = pass_avx2(ix, g);
            break;
        case SCAN_SSE2:
            ok = pass_sse2(ix, g);
            break;
#endif
        default:
            ok = pass_portable(ix, g);
        }
        ok = ok && g->state == S_DONE << 8;
        /* UTF-8 from the first block with a byte >= 0x80: everything before it is ASCII */
        ok = ok && (g->high_from >= len ||
                    sindex_utf8_valid(body + g->high_from, len - g->high_from, level));
    }
    if (!ok) sindex_free(ix);
    return ok;
}

const char *sindex_close(struct sindex *ix, const char *p) {
    uint32_t off = (uint32_t)(p - ix->body);
    size_t lo = 0, hi = ix->n_open;
    size_t h = ix->hint;
    if (h < ix->n_open && ix->open[h] <= off) { /* forward from the last lookup, doubling */
        size_t step = 1;
        lo = h;
        while (lo + step < ix->n_open && ix->open[lo + step] <= off) {
            lo += step;
            step *= 2;
        }
        hi = lo + step < ix->n_open ? lo + step : ix->n_open;
    }
    while (hi - lo > 1) { /* open[lo] <= off < open[hi] */
        size_t mid = lo + (hi - lo) / 2;
        if (ix->open[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    if (lo >= ix->n_open || ix->open[lo] != off) return NULL;
    ix->hint = lo;
    return ix->body + ix->close[lo];
}

const char *sindex_string_end(const struct sindex *ix, const char *p) {
    size_t from = (size_t)(p - ix->body) + 1, w = from / 64;
    uint64_t m = ix->quotes[w] & (~0ULL << (from % 64));
    while (!m)
        m = ix->quotes[++w]; /* the body is valid: the string is closed */
    return ix->body + w * 64 + (size_t)__builtin_ctzll(m);
}
