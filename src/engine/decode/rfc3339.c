/* decode/rfc3339: times as Go's time.Parse(time.RFC3339, s) reads them. */
#include "jobguard/decode.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- RFC 3339, as Go's time.Parse(time.RFC3339, s) ---- */

static bool digits(const char *s, size_t n, int *out) {
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static bool leap(int y) {
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

bool jg_parse_rfc3339(const char *s, size_t n, int64_t *sec, int32_t *nsec) {
    int Y, M, D, h, m, sc;
    /* 2006-01-02T15:04:05 */
    if (n < 20) return false;
    if (!digits(s, 4, &Y) || s[4] != '-' || !digits(s + 5, 2, &M) || s[7] != '-' ||
        !digits(s + 8, 2, &D) || s[10] != 'T' || !digits(s + 11, 2, &h) || s[13] != ':' ||
        !digits(s + 14, 2, &m) || s[16] != ':' || !digits(s + 17, 2, &sc))
        return false;
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (M < 1 || M > 12) return false;
    if (D < 1 || D > mdays[M - 1] + (M == 2 && leap(Y))) return false;
    if (h > 23 || m > 59 || sc > 59) return false;
    size_t i = 19;
    int32_t frac = 0;
    if (i < n && (s[i] == '.' || s[i] == ',')) { /* Go accepts a fraction the layout lacks */
        size_t start = ++i;
        int scale = 100000000;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (scale > 0) {
                frac += (s[i] - '0') * scale;
                scale /= 10;
            }
            i++;
        }
        if (i == start) return false;
    }
    int64_t offset = 0;
    if (i < n && s[i] == 'Z') {
        i++;
    } else if (i + 6 == n && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
        int oh, om;
        if (!digits(s + i + 1, 2, &oh) || !digits(s + i + 4, 2, &om) || oh > 23 || om > 59)
            return false;
        offset = (int64_t)(oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
        i += 6;
    } else {
        return false;
    }
    if (i != n) return false;
    *sec = days_from_civil(Y, M, D) * 86400 + h * 3600 + m * 60 + sc - offset;
    *nsec = frac;
    return true;
}
