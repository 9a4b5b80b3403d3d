#include "vecfile.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, const char *detail, int lineno)
{
    fprintf(stderr, "vector file error: %s: %s (line %d)\n", what, detail ? detail : "", lineno);
    exit(2);
}

int vec_open(struct vec_file *vf, const char *dir, const char *name)
{
    if ((size_t)snprintf(vf->path, sizeof vf->path, "%s/%s", dir, name) >= sizeof vf->path)
        return -1;
    vf->f = fopen(vf->path, "r");
    vf->lineno = 0;
    return vf->f ? 0 : -1;
}

void vec_close(struct vec_file *vf)
{
    if (vf->f)
        fclose(vf->f);
    vf->f = NULL;
}

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (!p)
        die("out of memory", NULL, 0);
    memcpy(p, s, n);
    return p;
}

/* Reads one line without its comment and surrounding blanks; returns NULL at end of file. */
static char *read_line(struct vec_file *vf, char *buf, size_t cap)
{
    char *p, *end;
    size_t n;

    if (!fgets(buf, (int)cap, vf->f))
        return NULL;
    vf->lineno++;
    n = strlen(buf);
    if (n == cap - 1 && buf[n - 1] != '\n' && !feof(vf->f))
        die("line too long", vf->path, vf->lineno);
    if ((p = strchr(buf, '#')) != NULL)
        *p = '\0';
    p = buf;
    while (isspace((unsigned char)*p))
        p++;
    end = p + strlen(p);
    while (end > p && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return p;
}

int vec_next(struct vec_file *vf, struct vec_record *r)
{
    static char buf[8192];
    char *line, *word, *rest;

    memset(r, 0, sizeof *r);
    do {
        line = read_line(vf, buf, sizeof buf);
        if (!line)
            return 0;
    } while (*line == '\0');

    word = strtok(line, " \t");
    rest = strtok(NULL, " \t");
    if (!word || !rest || strtok(NULL, " \t"))
        die("expected '<kind> <name>'", vf->path, vf->lineno);
    if (strlen(word) >= sizeof r->kind || strlen(rest) >= sizeof r->name)
        die("kind or name too long", vf->path, vf->lineno);
    strcpy(r->kind, word);
    strcpy(r->name, rest);
    r->lineno = vf->lineno;

    for (;;) {
        line = read_line(vf, buf, sizeof buf);
        if (!line)
            die("record without 'end'", r->name, r->lineno);
        if (*line == '\0')
            continue;
        if (strcmp(line, "end") == 0)
            return 1;
        if (r->nlines == VEC_MAX_LINES)
            die("too many lines in record", r->name, r->lineno);
        rest = line + strcspn(line, " \t");
        if (*rest) {
            *rest++ = '\0';
            while (isspace((unsigned char)*rest))
                rest++;
        }
        r->lines[r->nlines].key = dupstr(line);
        r->lines[r->nlines].rest = dupstr(rest);
        r->nlines++;
    }
}

void vec_record_free(struct vec_record *r)
{
    int i;
    for (i = 0; i < r->nlines; i++) {
        free(r->lines[i].key);
        free(r->lines[i].rest);
    }
    r->nlines = 0;
}

const char *vec_get(const struct vec_record *r, const char *key)
{
    int i;
    for (i = 0; i < r->nlines; i++)
        if (strcmp(r->lines[i].key, key) == 0)
            return r->lines[i].rest;
    return NULL;
}

void vec_hex(const char *s, uint8_t *out, size_t cap, size_t *len)
{
    char tmp[8192];
    char *tok, *end;
    unsigned long v;

    if (strlen(s) >= sizeof tmp)
        die("hex line too long", s, 0);
    strcpy(tmp, s);
    if (strcmp(tmp, "-") == 0)
        return;
    for (tok = strtok(tmp, " \t"); tok; tok = strtok(NULL, " \t")) {
        if (strlen(tok) != 2 || !isxdigit((unsigned char)tok[0]) || !isxdigit((unsigned char)tok[1]))
            die("bad hex byte", tok, 0);
        errno = 0;
        v = strtoul(tok, &end, 16);
        if (errno || *end)
            die("bad hex byte", tok, 0);
        if (*len >= cap)
            die("too many bytes", s, 0);
        out[(*len)++] = (uint8_t)v;
    }
}

uint16_t vec_crc(const char *s)
{
    char *end;
    unsigned long v;

    if (strlen(s) != 4)
        die("bad crc", s, 0);
    v = strtoul(s, &end, 16);
    if (*end || v > 0xFFFF)
        die("bad crc", s, 0);
    return (uint16_t)v;
}
