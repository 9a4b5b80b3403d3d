/* Strict unsigned numbers from the control channel (uparse.h). */
#include "uparse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;
    if (!s || !isdigit((unsigned char)s[0])) /* no sign, no space, not empty: strtoull would take them */
        return -1;
    errno = 0;
    v = strtoull(s, &end, s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10);
    if (errno || *end || end == s)
        return -1;
    *out = (uint64_t)v;
    return 0;
}
