/* libclang through dlopen (annotations/clang.h). */
#include "config.h"

#include "annotations/clang.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct tt_clang fns;
static const struct tt_clang *opened;
static const char *open_name;
static char open_why[256];

/* The entries of struct tt_clang in its order, by their names without the "clang_" prefix. */
static const char *const names[] = {
  "createIndex", "disposeIndex", "parseTranslationUnit", "disposeTranslationUnit",
  "getNumDiagnostics", "getDiagnostic", "getDiagnosticSeverity", "getDiagnosticSpelling",
  "disposeDiagnostic", "getTranslationUnitCursor", "visitChildren", "getCursorKind",
  "getCursorSpelling", "getCursorReferenced", "getCursorDefinition", "equalCursors",
  "Cursor_isNull", "getCursorType", "getPointeeType", "getCanonicalType", "Type_getSizeOf",
  "getTypeSpelling", "getCursorExtent", "getCursorLocation", "Location_isInSystemHeader",
  "tokenize", "disposeTokens", "getTokenSpelling", "getTokenKind", "getTokenExtent",
  "getRangeEnd", "getRangeStart", "getSpellingLocation", "Cursor_Evaluate",
  "EvalResult_getKind", "EvalResult_getAsLongLong", "EvalResult_dispose", "getCString",
  "disposeString",
};

static void *try_open(void)
{
  if (open_name)
    return dlopen(open_name, RTLD_NOW | RTLD_LOCAL);
  char path[96];
  for (int v = 20; v >= 11; v--) {
    snprintf(path, sizeof path, "libclang-%d.so.1", v);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      snprintf(path, sizeof path, "/usr/lib/llvm-%d/lib/libclang.so.1", v);
      h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (h)
      return h;
  }
  void *h = dlopen("libclang.so.1", RTLD_NOW | RTLD_LOCAL);
  return h ? h : dlopen("libclang.so", RTLD_NOW | RTLD_LOCAL);
}

static void open_once(void)
{
  void *h = try_open();
  if (!h) {
    snprintf(open_why, sizeof open_why, "libclang not found (%s)",
             open_name ? open_name : "libclang-N.so.1, libclang.so.1; TUTTI_LIBCLANG names it");
    return;
  }
  void **slot = (void **)&fns;
  _Static_assert(sizeof fns == sizeof names / sizeof *names * sizeof(void *),
                 "one name per function of struct tt_clang");
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char sym[64];
    snprintf(sym, sizeof sym, "clang_%s", names[i]);
    /* Function pointers through a data pointer: POSIX guarantees dlsym's result converts. */
    if (!(slot[i] = dlsym(h, sym))) {
      snprintf(open_why, sizeof open_why, "libclang lacks %s", sym);
      dlclose(h);
      return;
    }
  }
  opened = &fns;
}

const struct tt_clang *tt_clang_open(const char *name, char *why, size_t whylen)
{
  if (name && *name)
    open_name = name;
  pthread_once(&once, open_once);
  if (!opened)
    snprintf(why, whylen, "%s", open_why);
  return opened;
}
