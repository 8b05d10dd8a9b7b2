/* Private: one UTF-8 decoder for the escaper (buf.c) and the JSON scanner (decode.c), and the
 * character-boundary cut of the output bounds (verdict.c, server/log.c). */
#ifndef JOBGUARD_UTF8_H
#define JOBGUARD_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Decodes one UTF-8 sequence at s[0..n). Returns its length (1..4) and the rune in *r, or 0 for
 * an invalid sequence (overlong, surrogate, > U+10FFFF, truncated): Go's RuneError, width 1. */
static inline size_t jg_utf8_decode(const unsigned char *s, size_t n, uint32_t *r) {
    unsigned char c = s[0];
    if (c < 0x80) {
        *r = c;
        return 1;
    }
    size_t len;
    uint32_t min;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        min = 0x80;
        *r = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        min = 0x800;
        *r = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        min = 0x10000;
        *r = c & 0x07;
    } else {
        return 0;
    }
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        *r = (*r << 6) | (s[i] & 0x3F);
    }
    if (*r < min || *r > 0x10FFFF || (*r >= 0xD800 && *r <= 0xDFFF)) return 0;
    return len;
}

/* How many bytes of s[0..n) to keep so that at most `max` remain, not splitting a character:
 * n, or max moved back over at most 3 continuation bytes (invalid UTF-8 is cut anywhere). */
static inline size_t jg_utf8_cut(const char *s, size_t n, size_t max) {
    if (n <= max) return n;
    for (size_t back = 0; back < 3 && max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80; back++)
        max--;
    return max;
}

#endif
