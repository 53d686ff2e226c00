/* What the annotation language needs of a program's source and build options: the
 * `#pragma tutti` lines (taken out before the backend sees the source), the parameters of a
 * kernel as declared, and the integer -D macros. A light scan, not a C parser: comments and
 * string literals are skipped, macros in kernel signatures are not expanded. */
#include "config.h"

#include "annotations/annotation.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t tt_ann_type_size(const char *type)
{
  static const struct {
    const char *name;
    uint32_t size;
  } base[] = {{"char", 1},  {"uchar", 1},  {"short", 2}, {"ushort", 2}, {"half", 2},
              {"int", 4},   {"uint", 4},   {"float", 4}, {"long", 8},   {"ulong", 8},
              {"double", 8}};
  if (!strncmp(type, "unsigned ", 9)) {
    type += 9;
    if (strcmp(type, "char") && strcmp(type, "short") && strcmp(type, "int") &&
        strcmp(type, "long"))
      return 0;
  }
  for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) {
    size_t n = strlen(base[i].name);
    if (strncmp(type, base[i].name, n))
      continue;
    const char *w = type + n;
    if (!*w)
      return base[i].size;
    /* Vectors: n of 2, 3 (stored as 4), 4, 8 or 16 elements. */
    if (strspn(w, "0123456789") != strlen(w))
      return 0;
    int width = atoi(w);
    if (width == 2 || width == 4 || width == 8 || width == 16)
      return base[i].size * (uint32_t)width;
    if (width == 3)
      return base[i].size * 4;
    return 0;
  }
  return 0;
}

/* Skips a comment or a string/character literal starting at s; returns s when none. */
static const char *skip_noise(const char *s)
{
  if (s[0] == '/' && s[1] == '/') {
    while (*s && *s != '\n')
      s++;
    return s;
  }
  if (s[0] == '/' && s[1] == '*') {
    const char *e = strstr(s + 2, "*/");
    return e ? e + 2 : s + strlen(s);
  }
  if (*s == '"' || *s == '\'') {
    char q = *s++;
    while (*s && *s != q && *s != '\n')
      s += (*s == '\\' && s[1]) ? 2 : 1;
    return *s == q ? s + 1 : s;
  }
  return s;
}

static bool ident_char(char c)
{
  return isalnum((unsigned char)c) || c == '_';
}

/* The next kernel definition at or after s: its name (copied) and where its parameter list
 * starts (after '('). */
static const char *next_kernel(const char *s, char *name, size_t cap)
{
  const char *start = s;
  while (*s) {
    const char *t = skip_noise(s);
    if (t != s) {
      s = t;
      continue;
    }
    bool boundary = s == start || !ident_char(s[-1]);
    size_t klen = !strncmp(s, "__kernel", 8) ? 8 : !strncmp(s, "kernel", 6) ? 6 : 0;
    if (!boundary || !klen || ident_char(s[klen])) {
      s++;
      continue;
    }
    /* __kernel [__attribute__((...))] void NAME ( */
    const char *p = s + klen;
    const char *paren = strchr(p, '(');
    const char *semi = strpbrk(p, ";{");
    if (!paren || (semi && semi < paren)) {
      s = p;
      continue;
    }
    /* The name is the identifier right before the first '(' that is not an attribute's. */
    while (paren) {
      const char *e = paren;
      while (e > p && isspace((unsigned char)e[-1]))
        e--;
      const char *b = e;
      while (b > p && ident_char(b[-1]))
        b--;
      if (e - b == 13 && !strncmp(b, "__attribute__", 13)) {
        /* Skip the attribute's parentheses. */
        int depth = 0;
        const char *q = paren;
        for (; *q; q++) {
          depth += *q == '(';
          depth -= *q == ')';
          if (!depth)
            break;
        }
        paren = *q ? strchr(q, '(') : NULL;
        continue;
      }
      if (e > b) {
        size_t n = (size_t)(e - b) < cap - 1 ? (size_t)(e - b) : cap - 1;
        memcpy(name, b, n);
        name[n] = 0;
        return paren + 1;
      }
      break;
    }
    s = p;
  }
  return NULL;
}

static bool pragma_at(const char *line, const char **text)
{
  const char *s = line;
  while (*s == ' ' || *s == '\t')
    s++;
  if (*s++ != '#')
    return false;
  while (*s == ' ' || *s == '\t')
    s++;
  if (strncmp(s, "pragma", 6) || (s[6] != ' ' && s[6] != '\t'))
    return false;
  s += 6;
  while (*s == ' ' || *s == '\t')
    s++;
  if (strncmp(s, "tutti", 5) || ident_char(s[5]))
    return false;
  *text = s + 5;
  return true;
}

void tt_ann_pragmas_free(struct tt_ann_pragma *p, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    free(p[i].kernel);
    free(p[i].text);
  }
  free(p);
}

/* A pragma's text from `text` on, over its continued lines (a backslash at a line's end),
 * each blanked in the source but for its newline, from s (the line's start) on; *line counts
 * the lines passed, *eol the newline ending the pragma (NULL at the source's end). Returns the
 * text, malloc'd, or NULL without memory. */
static char *pragma_text(char *s, const char *text, int *line, char **eol)
{
  size_t cap = 64, used = 0;
  char *t = malloc(cap);
  char *p = (char *)text;
  for (char *q = s; q < p; q++)
    *q = ' ';
  for (;;) {
    char *end = strchr(p, '\n');
    if (!end)
      end = p + strlen(p);
    size_t m = (size_t)(end - p);
    bool more = m && p[m - 1] == '\\';
    if (more)
      m--;
    if (t && used + m + 2 > cap) {
      while (used + m + 2 > cap)
        cap *= 2;
      char *g = realloc(t, cap);
      if (!g)
        free(t);
      t = g;
    }
    if (t) {
      memcpy(t + used, p, m);
      used += m;
      t[used++] = ' ';
    }
    for (char *q = p; q < end; q++)
      *q = ' ';
    if (!more || !*end) {
      *eol = *end ? end : NULL;
      break;
    }
    (*line)++;
    p = end + 1;
  }
  if (t)
    t[used ? used - 1 : 0] = 0;
  return t;
}

/* The pragma of text t (its annotation's column in *column): "kernel NAME" names the kernel
 * (name; else ""), the rest is the annotation, returned as a pointer into t. */
static char *pragma_kernel(char *t, int *column, char *name, size_t cap)
{
  char *body = t;
  while (isspace((unsigned char)*body))
    body++, (*column)++;
  name[0] = 0;
  if (strncmp(body, "kernel", 6) || !isspace((unsigned char)body[6]))
    return body;
  char *q = body + 6;
  while (isspace((unsigned char)*q))
    q++;
  size_t m = 0;
  while (ident_char(q[m]) && m < cap - 1)
    m++;
  memcpy(name, q, m);
  name[m] = 0;
  q += m;
  while (isspace((unsigned char)*q))
    q++;
  *column += (int)(q - body);
  return q;
}

/* A pragma without a name belongs to the next kernel defined after its line. */
static void name_kernels(const char *out, struct tt_ann_pragma *list, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    if (list[i].kernel)
      continue;
    const char *at = out;
    for (int l = 1; l < list[i].line && at; l++) {
      at = strchr(at, '\n');
      at = at ? at + 1 : NULL;
    }
    char name[128];
    if (at && next_kernel(at, name, sizeof name))
      list[i].kernel = strdup(name);
  }
}

char *tt_ann_strip(const char *src, struct tt_ann_pragma **pragmas, size_t *npragmas)
{
  size_t len = strlen(src);
  char *out = malloc(len + 1);
  struct tt_ann_pragma *list = NULL;
  size_t n = 0;
  if (!out)
    return NULL;
  memcpy(out, src, len + 1);
  int line = 1;
  bool ok = true;
  for (char *s = out; *s && ok;) {
    char *eol = strchr(s, '\n');
    const char *text;
    if (pragma_at(s, &text)) {
      int first = line, column = (int)(text - s) + 1;
      char *t = pragma_text(s, text, &line, &eol);
      struct tt_ann_pragma *g = t ? realloc(list, (n + 1) * sizeof *list) : NULL;
      if (!g) {
        free(t);
        ok = false;
        break;
      }
      list = g;
      char name[128];
      char *body = pragma_kernel(t, &column, name, sizeof name);
      list[n] = (struct tt_ann_pragma){name[0] ? strdup(name) : NULL, strdup(body), first, column};
      free(t);
      if (!list[n].text) {
        free(list[n].kernel);
        ok = false;
        break;
      }
      n++;
    }
    if (!eol)
      break;
    s = eol + 1;
    line++;
  }
  if (!ok) {
    tt_ann_pragmas_free(list, n);
    free(out);
    return NULL;
  }
  name_kernels(out, list, n);
  *pragmas = list;
  *npragmas = n;
  return out;
}

/* One parameter declaration "[qualifiers] type [*] name". */
static bool parse_param(const char *s, size_t len, struct tt_ann_param *prm)
{
  memset(prm, 0, sizeof *prm);
  char buf[256];
  if (len >= sizeof buf)
    len = sizeof buf - 1;
  memcpy(buf, s, len);
  buf[len] = 0;
  /* Array brackets and anything after the name are not expected in kernel parameters. */
  char words[16][64];
  int nwords = 0;
  bool star = false;
  for (char *p = buf; *p && nwords < 16;) {
    char *t = (char *)skip_noise(p); /* comments are no words */
    if (t != p) {
      p = t;
      continue;
    }
    if (*p == '*') {
      star = true;
      p++;
      continue;
    }
    if (!ident_char(*p)) {
      p++;
      continue;
    }
    size_t m = 0;
    while (ident_char(p[m]))
      m++;
    snprintf(words[nwords++], sizeof words[0], "%.*s", (int)(m < 63 ? m : 63), p);
    p += m;
  }
  if (nwords < 2)
    return false;
  snprintf(prm->name, sizeof prm->name, "%s", words[nwords - 1]);
  bool global = false, constant = false, is_const = false, is_unsigned = false;
  char type[64] = "";
  for (int i = 0; i < nwords - 1; i++) {
    const char *w = words[i];
    if (!strcmp(w, "__global") || !strcmp(w, "global"))
      global = true;
    else if (!strcmp(w, "__constant") || !strcmp(w, "constant"))
      constant = true;
    else if (!strcmp(w, "const"))
      is_const = true;
    else if (!strcmp(w, "unsigned"))
      is_unsigned = true;
    else if (!strcmp(w, "restrict") || !strcmp(w, "__restrict") || !strcmp(w, "volatile") ||
             !strcmp(w, "__private") || !strcmp(w, "private") || !strcmp(w, "__local") ||
             !strcmp(w, "local") || !strcmp(w, "signed") || !strcmp(w, "struct"))
      continue;
    else
      snprintf(type, sizeof type, "%.63s", w);
  }
  if (is_unsigned) {
    char t[64];
    snprintf(t, sizeof t, "u%.62s", type[0] ? type : "int");
    snprintf(type, sizeof type, "%s", t);
  }
  snprintf(prm->type, sizeof prm->type, "%s", type);
  prm->pointer = star && (global || constant);
  prm->is_const = constant || (star && is_const);
  prm->size = tt_ann_type_size(type);
  static const char *const ints[] = {"char", "uchar", "short", "ushort", "int", "uint", "long",
                                     "ulong", "size_t"};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    if (!strcmp(type, ints[i]))
      prm->integer = true;
  prm->is_signed = prm->integer && type[0] != 'u' && strcmp(type, "size_t");
  prm->floating = !strcmp(type, "float") || !strcmp(type, "double");
  if (!strcmp(type, "size_t"))
    prm->size = 0; /* the device's: not known here */
  return true;
}

long tt_ann_kernel_params(const char *src, const char *name, struct tt_ann_param **out)
{
  char found[128];
  const char *at = src;
  const char *params;
  for (;;) {
    params = next_kernel(at, found, sizeof found);
    if (!params)
      return -1;
    if (!strcmp(found, name))
      break;
    at = params;
  }
  struct tt_ann_param *list = NULL;
  long n = 0;
  const char *s = params;
  int depth = 0;
  for (const char *p = s;; p++) {
    const char *t = skip_noise(p);
    if (t != p) {
      p = t - 1;
      continue;
    }
    if (*p == '(')
      depth++;
    if (*p == ')' && depth)
      depth--;
    else if (!*p || (depth == 0 && (*p == ',' || *p == ')'))) {
      struct tt_ann_param prm;
      if (parse_param(s, (size_t)(p - s), &prm)) {
        struct tt_ann_param *g = realloc(list, (size_t)(n + 1) * sizeof *list);
        if (!g) {
          free(list);
          return -1;
        }
        list = g;
        list[n++] = prm;
      }
      if (!*p || *p == ')')
        break;
      s = p + 1;
    }
  }
  *out = list;
  return n;
}

size_t tt_ann_macros(const char *options, struct tt_ann_macro **out)
{
  struct tt_ann_macro *list = NULL;
  size_t n = 0;
  *out = NULL;
  for (const char *s = options ? options : ""; *s;) {
    while (isspace((unsigned char)*s))
      s++;
    if (strncmp(s, "-D", 2)) {
      while (*s && !isspace((unsigned char)*s))
        s++;
      continue;
    }
    s += 2;
    while (isspace((unsigned char)*s))
      s++;
    size_t m = 0;
    while (ident_char(s[m]))
      m++;
    struct tt_ann_macro mac = {"", 1};
    snprintf(mac.name, sizeof mac.name, "%.*s", (int)(m < 63 ? m : 63), s);
    s += m;
    bool integer = true;
    if (*s == '=') {
      char *end;
      long long v = strtoll(s + 1, &end, 0);
      integer = end != s + 1 && (!*end || isspace((unsigned char)*end));
      mac.value = v;
      s = end;
      while (*s && !isspace((unsigned char)*s))
        s++;
    }
    if (!m || !integer)
      continue;
    struct tt_ann_macro *g = realloc(list, (n + 1) * sizeof *list);
    if (!g)
      break;
    list = g;
    list[n++] = mac;
  }
  *out = list;
  return n;
}

/* Appends n bytes of s to a growing string; false without memory. */
static bool put(char **out, size_t *len, size_t *cap, const char *s, size_t n)
{
  if (*len + n + 1 > *cap) {
    size_t c = (*len + n + 1) * 2;
    char *g = realloc(*out, c);
    if (!g)
      return false;
    *out = g;
    *cap = c;
  }
  memcpy(*out + *len, s, n);
  *len += n;
  (*out)[*len] = 0;
  return true;
}

char *tt_ann_rebase(const char *src, const char *name, const bool *rebase, size_t nparams)
{
  char found[128];
  const char *params = src;
  do
    params = next_kernel(params, found, sizeof found);
  while (params && strcmp(found, name));
  if (!params)
    return NULL;
  /* Each parameter's text [b, e), and the list's closing parenthesis. */
  const char *b[64], *e[64];
  size_t n = 0;
  const char *p = params, *s = params;
  int depth = 0;
  for (;; p++) {
    const char *t = skip_noise(p);
    if (t != p) {
      /* Comments in a rebased declaration would be copied into the body: not edited. */
      return NULL;
    }
    if (!*p)
      return NULL;
    if (*p == '(')
      depth++;
    else if (*p == ')' && depth)
      depth--;
    else if (depth == 0 && (*p == ',' || *p == ')')) {
      if (n == 64)
        return NULL;
      b[n] = s;
      e[n++] = p;
      if (*p == ')')
        break;
      s = p + 1;
    }
  }
  const char *close = p;
  if (n != nparams)
    return NULL;
  /* The body's opening brace (attributes may come between). */
  const char *brace = strchr(close, '{');
  if (!brace || memchr(close, ';', (size_t)(brace - close)))
    return NULL;
  char *out = NULL;
  size_t len = 0, cap = 0;
  bool ok = put(&out, &len, &cap, src, (size_t)(params - src));
  char buf[96];
  for (size_t i = 0; i < n && ok; i++) {
    if (i)
      ok = put(&out, &len, &cap, ",", 1);
    if (!rebase[i]) {
      ok = ok && put(&out, &len, &cap, b[i], (size_t)(e[i] - b[i]));
      continue;
    }
    /* The name is the parameter's last identifier: rename it. */
    const char *ne = e[i];
    while (ne > b[i] && !ident_char(ne[-1]))
      ne--;
    const char *nb = ne;
    while (nb > b[i] && ident_char(nb[-1]))
      nb--;
    if (ne != e[i] && strspn(ne, " \t\r\n") != (size_t)(e[i] - ne))
      ok = false; /* something after the name (an array): not edited */
    snprintf(buf, sizeof buf, "__tutti_w%zu", i);
    ok = ok && nb < ne && put(&out, &len, &cap, b[i], (size_t)(nb - b[i])) &&
         put(&out, &len, &cap, buf, strlen(buf)) && put(&out, &len, &cap, ne, (size_t)(e[i] - ne));
  }
  for (size_t i = 0; i < n && ok; i++)
    if (rebase[i]) {
      snprintf(buf, sizeof buf, ", ulong __tutti_o%zu", i);
      ok = put(&out, &len, &cap, buf, strlen(buf));
    }
  ok = ok && put(&out, &len, &cap, close, (size_t)(brace + 1 - close));
  /* The parameter's own declaration, on the brace's line, pointing back by the window's
   * start: absolute indices then land in the window. */
  for (size_t i = 0; i < n && ok; i++)
    if (rebase[i]) {
      for (const char *c = b[i]; c < e[i] && ok; c++)
        ok = put(&out, &len, &cap, isspace((unsigned char)*c) ? " " : c, 1);
      snprintf(buf, sizeof buf, " = __tutti_w%zu - __tutti_o%zu;", i, i);
      ok = ok && put(&out, &len, &cap, buf, strlen(buf));
    }
  ok = ok && put(&out, &len, &cap, brace + 1, strlen(brace + 1));
  if (!ok) {
    free(out);
    return NULL;
  }
  return out;
}
